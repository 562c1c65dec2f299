"""End to end: the simulated API server calls rightsizer's webhook over verified TLS.

rightsizer registers its MutatingWebhookConfiguration with its own CA; pods a Deployment creates
then get the recommended requests, unless the policy says Off; and with rightsizer stopped, pods
are still created, unchanged (failurePolicy Ignore).
"""

from __future__ import annotations

import datetime as dt
import json
import socket
import ssl
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from kubernetes import client

from app.core.quantity import amount as quantity_amount
from app.kube.secrets import SecretStore
from app.serving.certs import ensure, make_serving, service_names
from app.simulator.simulator import Simulator
from tests.support.json_bodies import plain, raw_body
from tests.support.processes import AppProcess, recommendations, wait_for

pytestmark = pytest.mark.e2e
NS = "rightsizer"


@pytest.fixture(scope="module")
def sim_namespaces() -> tuple[str, ...]:
    return (NS,)


def pods_of(sim: Simulator, ns: str, app_label: str) -> dict[str, dict[str, Any]]:
    api = sim.api_client()
    resp = client.CoreV1Api(api).list_namespaced_pod(
        ns, label_selector=f"app={app_label}", _preload_content=False
    )
    api.close()
    return {p["metadata"]["name"]: p for p in json.loads(raw_body(resp))["items"]}


def scale(sim: Simulator, ns: str, name: str, replicas: int) -> None:
    api = sim.api_client()
    client.AppsV1Api(api).patch_namespaced_deployment_scale(
        name, ns, {"spec": {"replicas": replicas}}
    )
    api.close()
    sim.settle()


def add_policy(db_url: str, name: str, ns: str, target: str, mode: str) -> None:
    engine = sa.create_engine(db_url)
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO policies (name, namespace, target_kind, target_name, update_mode, "
                "container_policies, version, created_at, updated_at) VALUES "
                "(:n, :ns, 'Deployment', :t, :m, '[]', 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            ),
            {"n": name, "ns": ns, "t": target, "m": mode},
        )
    engine.dispose()


def cpu_of(pod: dict[str, Any], container: str, kind: str) -> int:
    [c] = [c for c in pod["spec"]["containers"] if c["name"] == container]
    return quantity_amount("cpu", c["resources"].get(kind, {}).get("cpu", "1000"))


def requests_of(pod: dict[str, Any], container: str) -> dict[str, str]:
    [c] = [c for c in pod["spec"]["containers"] if c["name"] == container]
    return c["resources"].get("requests", {})


def test_webhook_sets_recommended_requests_and_never_blocks(sim: Simulator, tmp_path: Path) -> None:
    paths, _ = ensure(tmp_path / "certs", [*service_names("rightsizer", NS), "localhost"])
    db = f"sqlite:///{tmp_path}/rightsizer.db"
    settings: dict[str, Any] = {
        "RIGHTSIZER_TLS_CERT_FILE": paths.cert,
        "RIGHTSIZER_TLS_KEY_FILE": paths.key,
        "RIGHTSIZER_CERT_DIR": paths.directory,
        "RIGHTSIZER_WEBHOOK_REGISTER": "true",
        "RIGHTSIZER_WEBHOOK_CACHE_REFRESH_SECONDS": "1",
    }
    app = AppProcess(
        sim.kubeconfig_path, db, tmp_path / "app.log", ca_file=str(paths.ca), **settings
    )
    try:
        app.wait_ready()
        sim.map_service(NS, "rightsizer", f"127.0.0.1:{app.port}")
        api = sim.api_client()
        hooks = client.AdmissionregistrationV1Api(api).list_mutating_webhook_configuration().items
        api.close()
        assert [h.metadata.name for h in hooks] == ["rightsizer"]
        assert hooks[0].webhooks[0].failure_policy == "Ignore"
        key = ("shop", "Deployment", "checkout", "app")
        rec = wait_for(lambda: recommendations(app).get(key), 60, "a recommendation for checkout")
        add_policy(db, "checkout", "shop", "checkout", "Initial")
        add_policy(db, "catalog-off", "shop", "catalog", "Off")

        before = set(pods_of(sim, "shop", "checkout"))

        # The cache refreshes every second: wait until a new pod comes out mutated.
        def mutated_pod() -> dict[str, Any] | None:
            nonlocal before
            scale(sim, "shop", "checkout", len(before) + 1)
            now = pods_of(sim, "shop", "checkout")
            new = [now[n] for n in set(now) - before]
            before = set(now)
            return next(
                (p for p in new if "rightsizer.io/updates" in p["metadata"].get("annotations", {})),
                None,
            )

        pod = wait_for(mutated_pod, 30, "a mutated checkout pod", interval=1.0)
        assert requests_of(pod, "app") == rec["target"]
        assert json.loads(pod["metadata"]["annotations"]["rightsizer.io/updates"])

        # A LimitRange below the recommendation: the webhook (watching LimitRanges) caps at it.
        target_cpu = quantity_amount("cpu", rec["target"]["cpu"])
        cap = target_cpu // 2
        api = sim.api_client()
        client.CoreV1Api(api).create_namespaced_limit_range(
            "shop",
            plain(
                {
                    "metadata": {"name": "cap"},
                    "spec": {"limits": [{"type": "Container", "max": {"cpu": f"{cap}m"}}]},
                }
            ),
        )
        api.close()

        def capped_pod() -> dict[str, Any] | None:
            nonlocal before
            # A create the LimitRanger refused (the webhook had not seen the LimitRange yet) is
            # retried by the ReplicaSet controller as time passes (client-go's workqueue backoff);
            # this simulator's clock stands still unless advanced.
            sim.advance(1)
            scale(sim, "shop", "checkout", len(before) + 1)
            now = pods_of(sim, "shop", "checkout")
            new = [now[n] for n in set(now) - before]
            before = set(now)
            return next((p for p in new if cpu_of(p, "app", "limits") <= cap), None)

        pod = wait_for(capped_pod, 30, "a checkout pod capped by the LimitRange", interval=1.0)
        # The limit (2x the request in the template) is what hits the max first.
        assert cpu_of(pod, "app", "limits") <= cap
        assert cpu_of(pod, "app", "requests") <= cap // 2 + 1  # the limit keeps its ratio
        assert requests_of(pod, "app")["memory"] == rec["target"]["memory"]  # not capped

        # On a real cluster the LimitRange applies to catalog too (its cpu limit would default to
        # the max, below its 500m request: refused), so it goes before the "Off" check.
        api = sim.api_client()
        client.CoreV1Api(api).delete_namespaced_limit_range("cap", "shop")
        api.close()
        catalog_before = set(pods_of(sim, "shop", "catalog"))
        scale(sim, "shop", "catalog", len(catalog_before) + 1)
        [new_catalog] = [
            p for n, p in pods_of(sim, "shop", "catalog").items() if n not in catalog_before
        ]
        assert requests_of(new_catalog, "api") == {"cpu": "500m", "memory": "512Mi"}  # as written
        assert "rightsizer.io/updates" not in new_catalog["metadata"].get("annotations", {})
    finally:
        app.stop()

    # rightsizer down: pods are still created, with the requests their template has.
    before = set(pods_of(sim, "shop", "checkout"))
    scale(sim, "shop", "checkout", len(before) + 1)
    [new] = [p for n, p in pods_of(sim, "shop", "checkout").items() if n not in before]
    assert requests_of(new, "app") == {"cpu": "250m", "memory": "256Mi"}


def served_certificate(port: int, ca_file: Path) -> x509.Certificate:
    ctx = ssl.create_default_context(cafile=str(ca_file))
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        ctx.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der)


def test_a_certificate_renewed_in_the_secret_is_served_without_a_restart(
    sim: Simulator, tmp_path: Path
) -> None:
    """`rightsizer serve` keeps its certificates in a Secret (RIGHTSIZER_CERT_ROTATE): it creates
    them at start, and when another replica renews the Secret, it copies the files and gunicorn
    reloads them, with the same master process."""
    certs = tmp_path / "certs"
    settings: dict[str, Any] = {
        "RIGHTSIZER_CERT_ROTATE": "true",
        "RIGHTSIZER_CERT_SECRET": "rightsizer-tls",
        "RIGHTSIZER_CERT_CHECK_SECONDS": "1",
        "RIGHTSIZER_CERT_EXTRA_NAMES": "localhost",
        "RIGHTSIZER_CERT_DIR": certs,
        "RIGHTSIZER_TLS_CERT_FILE": certs / "tls.crt",
        "RIGHTSIZER_TLS_KEY_FILE": certs / "tls.key",
        "RIGHTSIZER_WEBHOOK_REGISTER": "true",
        "RIGHTSIZER_JOBS": "false",
    }
    app = AppProcess(
        sim.kubeconfig_path,
        f"sqlite:///{tmp_path}/rightsizer.db",
        tmp_path / "app.log",
        ca_file=str(certs / "ca.crt"),
        **settings,
    )
    try:
        wait_for(lambda: (certs / "ca.crt").exists(), 60, "`serve` to create its certificates")
        app.wait_ready()
        first = served_certificate(app.port, certs / "ca.crt")
        api = sim.api_client()
        store = SecretStore(api, NS, "rightsizer-tls")
        # Another replica renews it: same CA, a new serving certificate in the Secret.
        files = store.load()
        ca_key = serialization.load_pem_private_key(files["ca.key"], None)
        assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
        key, cert = make_serving(
            ca_key,
            x509.load_pem_x509_certificate(files["ca.crt"]),
            [*service_names("rightsizer", NS), "localhost"],
            dt.datetime.now(dt.UTC),
        )
        files["tls.key"] = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        files["tls.crt"] = cert.public_bytes(serialization.Encoding.PEM)
        assert store.save(files)
        api.close()
        renewed = x509.load_pem_x509_certificate(files["tls.crt"])
        assert renewed.serial_number != first.serial_number
        served = wait_for(
            lambda: (
                (c := served_certificate(app.port, certs / "ca.crt")).serial_number
                == renewed.serial_number
                and c
            ),
            30,
            "the renewed certificate to be served",
        )
        assert served.not_valid_after_utc == renewed.not_valid_after_utc
        assert app.proc.poll() is None  # the same server, never restarted
        assert "TLS files changed: reloading workers" in app.log()
    finally:
        app.stop()
