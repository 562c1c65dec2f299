"""The updater's "is the webhook serving?" check, against a real TLS server and the simulator."""

from __future__ import annotations

import base64
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from app.kube.webhook_probe import Target, targets, webhook_serving
from app.serving.certs import CertPaths, ensure, service_names
from app.simulator.simulator import Simulator
from app.simulator.testing import EMPTY
from tests.support.json_bodies import plain


class Readyz:
    """An HTTPS server whose /readyz answers `status`."""

    def __init__(self, certs: CertPaths) -> None:
        self.status = 200
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                code = outer.status if self.path == "/readyz" else 404
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(certs.cert, certs.key)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.address = f"127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def certs(tmp_path: Path) -> CertPaths:
    paths, _ = ensure(tmp_path / "certs", service_names("rightsizer", "rightsizer"))
    return paths


@pytest.fixture
def server(certs: CertPaths) -> Iterator[Readyz]:
    s = Readyz(certs)
    yield s
    s.close()


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return EMPTY


def configuration(ca_pem: bytes, **client_config: Any) -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "rightsizer"},
        "webhooks": [
            {
                "name": "pods.rightsizer.io",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Ignore",
                "clientConfig": {
                    "caBundle": base64.b64encode(ca_pem).decode(),
                    **(
                        client_config
                        or {
                            "service": {
                                "namespace": "rightsizer",
                                "name": "rightsizer",
                                "path": "/mutate",
                            }
                        }
                    ),
                },
                "rules": [
                    {
                        "operations": ["CREATE"],
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "resources": ["pods"],
                    }
                ],
            }
        ],
    }


def test_targets_verify_the_name_kube_apiserver_verifies() -> None:
    ca = b"-----BEGIN CERTIFICATE-----\n"
    svc = configuration(ca)
    assert targets(svc) == [
        Target("rightsizer.rightsizer.svc", "rightsizer.rightsizer.svc", 443, ca)
    ]
    assert targets(svc, "127.0.0.1:8443") == [
        Target("rightsizer.rightsizer.svc", "127.0.0.1", 8443, ca)
    ]
    url = configuration(ca, url="https://hooks.example.com:9443/mutate")
    assert targets(url) == [Target("hooks.example.com", "hooks.example.com", 9443, ca)]
    no_ca = configuration(ca)
    no_ca["webhooks"][0]["clientConfig"]["caBundle"] = ""
    with pytest.raises(ValueError, match="no caBundle"):
        targets(no_ca)
    with pytest.raises(ValueError, match="no webhooks"):
        targets({"webhooks": []})


def test_serving_only_when_registered_and_ready_over_verified_tls(
    sim: Simulator, server: Readyz, certs: CertPaths, tmp_path: Path
) -> None:
    api = sim.api_client()
    adm = client.AdmissionregistrationV1Api(api)
    assert not webhook_serving(api, "rightsizer", server.address)  # not registered
    adm.create_mutating_webhook_configuration(plain(configuration(certs.ca.read_bytes())))
    assert webhook_serving(api, "rightsizer", server.address)
    server.status = 503
    assert not webhook_serving(api, "rightsizer", server.address)  # registered, not ready
    server.status = 200
    closed = Readyz(certs)
    closed.close()
    assert not webhook_serving(api, "rightsizer", closed.address, timeout=1)  # nobody listens
    # A caBundle that did not sign the serving certificate: TLS fails as for the API server.
    other, _ = ensure(tmp_path / "other", service_names("rightsizer", "rightsizer"))
    adm.replace_mutating_webhook_configuration(
        "rightsizer", plain(configuration(other.ca.read_bytes()))
    )
    assert not webhook_serving(api, "rightsizer", server.address)
    # The certificate is for rightsizer.rightsizer.svc: a Service of another name does not verify.
    adm.replace_mutating_webhook_configuration(
        "rightsizer",
        plain(
            configuration(
                certs.ca.read_bytes(), service={"namespace": "rightsizer", "name": "impostor"}
            )
        ),
    )
    assert not webhook_serving(api, "rightsizer", server.address)
