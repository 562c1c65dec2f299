"""Mutating webhooks called as kube-apiserver calls them: TLS against caBundle, patches,
failurePolicy, timeouts, selectors, reinvocation."""

from __future__ import annotations

import base64
import datetime as dt
import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from tests.support.json_bodies import plain
from tests.support.simulators import pod_body, send


def _ca(name: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def _serving_cert(ca_key, ca_cert, dns: str) -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, dns)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(dns)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return (
        cert.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )


class Webhook:
    """A real HTTPS admission webhook whose behaviour a test sets."""

    def __init__(self, tmp: Path) -> None:
        ca_key, ca_cert = _ca("test-ca")
        cert, key = _serving_cert(ca_key, ca_cert, "hook.webhooks.svc")
        (tmp / "tls.crt").write_bytes(cert)
        (tmp / "tls.key").write_bytes(key)
        self.ca_bundle = base64.b64encode(ca_cert.public_bytes(serialization.Encoding.PEM)).decode()
        self.reviews: list[dict[str, Any]] = []
        self.patch: list[dict[str, Any]] = [
            {"op": "add", "path": "/metadata/labels/mutated", "value": "yes"}
        ]
        self.allowed = True
        self.release = threading.Event()
        self.hang = False
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.reviews.append(review)
                if outer.hang:
                    outer.release.wait(30)
                resp: dict[str, Any] = {"uid": review["request"]["uid"], "allowed": outer.allowed}
                if not outer.allowed:
                    resp["status"] = {"code": 403, "message": "no thanks"}
                elif outer.patch:
                    patch = outer.patch
                    if self.path.startswith("/second"):
                        patch = [{"op": "add", "path": "/metadata/labels/second", "value": "1"}]
                    resp["patchType"] = "JSONPatch"
                    resp["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
                body = json.dumps(
                    {
                        "apiVersion": "admission.k8s.io/v1",
                        "kind": "AdmissionReview",
                        "response": resp,
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(tmp / "tls.crt", tmp / "tls.key")
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.address = f"127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def hook(sim, tmp_path) -> Iterator[Webhook]:
    w = Webhook(tmp_path)
    sim.map_service("webhooks", "hook", w.address)
    yield w
    w.close()


def _register(
    api_client,
    hook: Webhook,
    *,
    name: str = "rightsizer",
    ca: str | None = None,
    failure: str = "Fail",
    timeout: int = 5,
    ns_selector: dict[str, Any] | None = None,
    object_selector: dict[str, Any] | None = None,
    reinvocation: str = "Never",
    hook_name: str = "pods.rightsizer.io",
    path: str = "/mutate",
) -> None:
    adm = client.AdmissionregistrationV1Api(api_client)
    adm.create_mutating_webhook_configuration(
        plain(
            {
                "apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "MutatingWebhookConfiguration",
                "metadata": {"name": name},
                "webhooks": [
                    {
                        "name": hook_name,
                        "admissionReviewVersions": ["v1"],
                        "sideEffects": "None",
                        "failurePolicy": failure,
                        "timeoutSeconds": timeout,
                        "reinvocationPolicy": reinvocation,
                        "namespaceSelector": ns_selector or {},
                        "objectSelector": object_selector or {},
                        "clientConfig": {
                            "caBundle": ca or hook.ca_bundle,
                            "service": {"namespace": "webhooks", "name": "hook", "path": path},
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
        )
    )


def test_patch_applied_to_api_and_controller_created_pods(sim, core, apps, api_client, hook):
    _register(api_client, hook)
    pod = core.create_namespaced_pod("other", pod_body("p"))
    assert pod.metadata.labels["mutated"] == "yes"
    review = hook.reviews[0]
    assert review["apiVersion"] == "admission.k8s.io/v1" and review["kind"] == "AdmissionReview"
    req = review["request"]
    assert req["operation"] == "CREATE" and req["namespace"] == "other"
    assert req["resource"] == {"group": "", "version": "v1", "resource": "pods"}
    assert req["object"]["metadata"]["name"] == "p"
    # Pods the ReplicaSet controller creates go through admission too, before name generation.
    apps.patch_namespaced_deployment_scale("web", "shop", {"spec": {"replicas": 4}})
    sim.settle()
    new = [
        p
        for p in core.list_namespaced_pod("shop").items
        if p.metadata.labels.get("mutated") == "yes"
    ]
    assert len(new) == 1
    rs_review = hook.reviews[-1]["request"]
    assert rs_review["name"] == "" and rs_review["object"]["metadata"]["generateName"]
    assert rs_review["userInfo"]["username"].endswith(":replicaset-controller")


def test_quantities_reach_the_webhook_and_come_back_from_its_patch_as_stored(api_client, hook):
    # The review holds the pod as decoded ("500m" for the number 0.5); the patched pod is
    # decoded again, so the webhook's numbers are stored as kube-apiserver stores them too.
    requests = {"cpu": 0.25, "memory": "1024Mi"}
    path = "/spec/containers/0/resources/requests"
    hook.patch = [{"op": "replace", "path": path, "value": requests}]
    _register(api_client, hook)
    body = pod_body("numbers")
    body["spec"]["containers"][0]["resources"]["requests"]["cpu"] = 0.5
    made = send(api_client, "POST", "/api/v1/namespaces/other/pods", body)
    reviewed = hook.reviews[0]["request"]["object"]["spec"]["containers"][0]["resources"]
    assert reviewed["requests"] == {"cpu": "500m", "memory": "128Mi"}
    assert made["spec"]["containers"][0]["resources"]["requests"] == {
        "cpu": "250m",
        "memory": "1Gi",
    }


def test_untrusted_certificate_fails_closed_or_open_by_failure_policy(core, api_client, hook):
    _, other_ca = _ca("someone-else")
    wrong = base64.b64encode(other_ca.public_bytes(serialization.Encoding.PEM)).decode()
    _register(api_client, hook, ca=wrong, failure="Fail")
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod("other", pod_body("p"))
    body = json.loads(e.value.body)
    assert (
        e.value.status == 500
        and 'failed calling webhook "pods.rightsizer.io"' in body["message"]
        and "CERTIFICATE_VERIFY_FAILED" in body["message"]
    )
    assert not hook.reviews
    client.AdmissionregistrationV1Api(api_client).patch_mutating_webhook_configuration(
        "rightsizer", [{"op": "replace", "path": "/webhooks/0/failurePolicy", "value": "Ignore"}]
    )
    pod = core.create_namespaced_pod("other", pod_body("p"))
    assert "mutated" not in pod.metadata.labels


def test_timeout_honoured(core, api_client, hook):
    hook.hang = True
    _register(api_client, hook, timeout=1, failure="Fail")
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod("other", pod_body("p"))
    assert e.value.status == 500 and "deadline exceeded" in e.value.body
    client.AdmissionregistrationV1Api(api_client).patch_mutating_webhook_configuration(
        "rightsizer", [{"op": "replace", "path": "/webhooks/0/failurePolicy", "value": "Ignore"}]
    )
    pod = core.create_namespaced_pod("other", pod_body("p"))
    assert "mutated" not in pod.metadata.labels


def test_denial_and_invalid_patched_pod(core, api_client, hook):
    _register(api_client, hook)
    hook.allowed = False
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod("other", pod_body("p"))
    assert e.value.status == 403
    assert (
        json.loads(e.value.body)["message"]
        == 'admission webhook "pods.rightsizer.io" denied the request: no thanks'
    )
    hook.allowed = True
    hook.patch = [
        {
            "op": "replace",
            "path": "/spec/containers/0/resources",
            "value": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
        }
    ]
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod("other", pod_body("p"))
    assert e.value.status == 422
    hook.patch = [{"op": "remove", "path": "/spec/nonexistent"}]  # cannot apply
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod("other", pod_body("p"))
    assert e.value.status == 500 and "failed to apply JSON patch" in e.value.body


def test_namespace_selector_limits_calls(core, api_client, hook):
    _register(api_client, hook, ns_selector={"matchLabels": {"team": "shop"}})
    assert "mutated" not in core.create_namespaced_pod("other", pod_body("p")).metadata.labels
    assert core.create_namespaced_pod("shop", pod_body("p")).metadata.labels["mutated"] == "yes"
    assert len(hook.reviews) == 1


def test_object_selector_limits_calls_by_pod_labels(core, api_client, hook):
    _register(
        api_client,
        hook,
        object_selector={
            "matchExpressions": [{"key": "rightsizer.io/skip", "operator": "DoesNotExist"}]
        },
    )
    skipped = core.create_namespaced_pod(
        "other", pod_body("a", labels={"app": "a", "rightsizer.io/skip": "true"})
    )
    assert "mutated" not in skipped.metadata.labels and not hook.reviews
    assert core.create_namespaced_pod("other", pod_body("b")).metadata.labels["mutated"] == "yes"
    assert len(hook.reviews) == 1


def test_reinvocation_if_needed(core, api_client, hook):
    # "a" runs first; "b" (later by configuration name) then changes the pod, so "a", being
    # IfNeeded, is called once more and sees b's change. "b" (Never) is not called again.
    _register(
        api_client, hook, name="a-config", hook_name="a.rightsizer.io", reinvocation="IfNeeded"
    )
    _register(api_client, hook, name="b-config", hook_name="b.rightsizer.io", path="/second")
    pod = core.create_namespaced_pod("other", pod_body("p"))
    assert pod.metadata.labels["mutated"] == "yes" and pod.metadata.labels["second"] == "1"
    assert len(hook.reviews) == 3
    assert hook.reviews[2]["request"]["object"]["metadata"]["labels"]["second"] == "1"


def test_patched_pod_is_defaulted_again_then_limited(core, api_client, hook):
    # The dispatcher decodes and defaults the patched pod: a limit the webhook sets alone
    # becomes the request too. LimitRanger then validates what the webhooks produced.
    _register(api_client, hook)
    hook.patch = [
        {"op": "replace", "path": "/spec/containers/0/resources", "value": {"limits": {"cpu": "2"}}}
    ]
    pod = core.create_namespaced_pod("other", pod_body("p"))
    assert pod.spec.containers[0].resources.requests == {"cpu": "2"}
    core.create_namespaced_limit_range(
        "other",
        {
            "metadata": {"name": "max"},
            "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]},
        },
    )
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod("other", pod_body("q"))
    assert e.value.status == 403
    assert json.loads(e.value.body)["message"] == (
        'pods "q" is forbidden: maximum cpu usage per Container is 1, but limit is 2'
    )
    # LimitRanger's defaults come before the webhooks: the webhook saw the defaulted limit.
    assert hook.reviews[-1]["request"]["object"]["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "100m", "memory": "128Mi"},
        "limits": {"cpu": "1"},
    }
