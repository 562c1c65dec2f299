"""CA and serving certificate: names, chain, permissions, renewal, and a real TLS handshake."""

from __future__ import annotations

import base64
import datetime as dt
import json
import socket
import ssl
import stat
import threading
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from kubernetes import client as k8s

from app.config import from_environment
from app.kube.secrets import SecretStore
from app.kube.webhook_config import register_webhook
from app.serving.certs import DirectoryStore, ensure, ensure_in, plan, service_names
from app.serving.registration import registration
from app.serving.rotation import rotate_certificates, rotation_loop
from app.settings import Settings
from app.simulator.testing import EMPTY
from tests.support.json_bodies import raw_body

NAMES = service_names("rightsizer", "rightsizer-system")
NOW = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def load(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_service_names() -> None:
    assert NAMES == [
        "rightsizer",
        "rightsizer.rightsizer-system",
        "rightsizer.rightsizer-system.svc",
        "rightsizer.rightsizer-system.svc.cluster.local",
    ]


def test_creates_ca_and_serving_certificate(tmp_path: Path) -> None:
    paths, done = ensure(tmp_path, NAMES, NOW)
    assert done[0] == "created CA"
    ca, cert = load(paths.ca), load(paths.cert)
    cert.verify_directly_issued_by(ca)
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == NAMES
    assert (cert.not_valid_after_utc - NOW).days == 365
    assert (ca.not_valid_after_utc - NOW).days == 3650
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    for key in (paths.key, paths.ca_key):
        assert stat.S_IMODE(key.stat().st_mode) == 0o600


def test_second_run_changes_nothing(tmp_path: Path) -> None:
    paths, _ = ensure(tmp_path, NAMES, NOW)
    before = paths.cert.read_bytes()
    _, done = ensure(tmp_path, NAMES, NOW + dt.timedelta(days=100))
    assert done == []
    assert paths.cert.read_bytes() == before


def test_renews_30_days_before_expiry_with_the_same_ca(tmp_path: Path) -> None:
    paths, _ = ensure(tmp_path, NAMES, NOW)
    ca_before, cert_before = paths.ca.read_bytes(), paths.cert.read_bytes()
    _, done = ensure(tmp_path, NAMES, NOW + dt.timedelta(days=336))
    assert len(done) == 1 and done[0].startswith("serving certificate expires")
    assert paths.ca.read_bytes() == ca_before  # caBundle unchanged: no webhook re-registration
    assert paths.cert.read_bytes() != cert_before
    load(paths.cert).verify_directly_issued_by(load(paths.ca))


def test_renews_when_the_service_name_changes(tmp_path: Path) -> None:
    ensure(tmp_path, NAMES, NOW)
    _, done = ensure(tmp_path, service_names("rs", "ops"), NOW)
    assert done and "lacks rs" in done[0]


def test_ca_near_its_end_is_replaced_with_a_new_serving_certificate(tmp_path: Path) -> None:
    paths, _ = ensure(tmp_path, NAMES, NOW)
    ca_before = paths.ca.read_bytes()
    _, done = ensure(tmp_path, NAMES, NOW + dt.timedelta(days=3650 - 200))
    assert "new CA" in done[0]
    assert paths.ca.read_bytes() != ca_before
    load(paths.cert).verify_directly_issued_by(load(paths.ca))


@pytest.mark.parametrize(("hostname", "ok"), [(NAMES[2], True), ("evil.example.com", False)])
def test_tls_handshake_verifies_against_the_ca(tmp_path: Path, hostname: str, ok: bool) -> None:
    paths, _ = ensure(tmp_path, NAMES)
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    server_ctx.load_cert_chain(paths.cert, paths.key)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        conn, _ = listener.accept()
        try:
            with server_ctx.wrap_socket(conn, server_side=True) as tls:
                tls.sendall(b"hello")
        except (ssl.SSLError, OSError):
            pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    client_ctx = ssl.create_default_context(cafile=str(paths.ca))
    with socket.create_connection(("127.0.0.1", port)) as raw:
        if ok:
            with client_ctx.wrap_socket(raw, server_hostname=hostname) as tls:
                assert tls.recv(5) == b"hello"
        else:
            with pytest.raises(ssl.SSLCertVerificationError):
                client_ctx.wrap_socket(raw, server_hostname=hostname)
    t.join(5)
    listener.close()


# In a Kubernetes Secret, and rotation by the running server -------------------------------------


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return EMPTY


@pytest.fixture(scope="module")
def sim_namespaces() -> tuple[str, ...]:
    return ("rightsizer",)


def secret_data(api: k8s.ApiClient, name: str = "rightsizer-tls") -> dict[str, Any]:
    resp = k8s.CoreV1Api(api).read_namespaced_secret(name, "rightsizer", _preload_content=False)
    doc: dict[str, Any] = json.loads(raw_body(resp))
    return doc


def test_secret_store_creates_then_keeps_then_renews(api: k8s.ApiClient) -> None:
    store = SecretStore(api, "rightsizer", "rightsizer-tls")
    files, done = ensure_in(store, NAMES, NOW)
    assert done[0] == "created CA"
    doc = secret_data(api)
    assert doc["type"] == "kubernetes.io/tls"
    assert sorted(doc["data"]) == ["ca.crt", "ca.key", "tls.crt", "tls.key"]
    assert base64.b64decode(doc["data"]["tls.crt"]) == files["tls.crt"]
    assert ensure_in(store, NAMES, NOW + dt.timedelta(days=100)) == (files, [])
    renewed, done = ensure_in(
        SecretStore(api, "rightsizer", "rightsizer-tls"), NAMES, NOW + dt.timedelta(days=336)
    )
    assert done[0].startswith("serving certificate expires")
    assert renewed["ca.crt"] == files["ca.crt"] and renewed["tls.crt"] != files["tls.crt"]
    x509.load_pem_x509_certificate(renewed["tls.crt"]).verify_directly_issued_by(
        x509.load_pem_x509_certificate(renewed["ca.crt"])
    )


def test_two_replicas_renewing_at_once_agree_on_one_certificate(api: k8s.ApiClient) -> None:
    a = SecretStore(api, "rightsizer", "rightsizer-tls")
    b = SecretStore(api, "rightsizer", "rightsizer-tls")
    assert b.load() == {}  # b looked before a created it
    ensure_in(a, NAMES, NOW)
    assert b.save({"tls.crt": b"not this"}) is False  # 409 AlreadyExists: b must look again
    a.load(), b.load()
    later = NOW + dt.timedelta(days=340)
    renewed_a, _ = plan(a.load(), NAMES, later)
    b.load()
    assert a.save(renewed_a) is True
    assert b.save({"tls.crt": b"stale"}) is False  # 409 Conflict on the old resourceVersion
    files_b, done_b = ensure_in(b, NAMES, later)
    assert done_b == [] and files_b == renewed_a  # b uses a's renewal


def config(tmp_path: Path, **overrides: Any) -> Settings:
    given = {
        "CERT_DIR": str(tmp_path / "certs"),
        "CERT_SECRET": "rightsizer-tls",
        "NAMESPACE": "rightsizer",
        "WEBHOOK_REGISTER": True,
        "WEBHOOK_URL": "https://127.0.0.1:8443/mutate",
    }
    return from_environment({}, {**given, **overrides})


def ca_bundle(api: k8s.ApiClient) -> list[x509.Certificate]:
    hooks = k8s.AdmissionregistrationV1Api(api).list_mutating_webhook_configuration().items
    [hook] = hooks[0].webhooks
    return x509.load_pem_x509_certificates(base64.b64decode(hook.client_config.ca_bundle))


def test_rotation_copies_the_secret_to_disk_and_re_registers_a_new_ca(
    api: k8s.ApiClient, tmp_path: Path
) -> None:
    cfg = config(tmp_path / "replica-1")
    done, changed = rotate_certificates(cfg, api, NOW)
    assert changed and done[0] == "created CA"
    disk = DirectoryStore(Path(cfg.certs.directory)).load()
    assert disk == {k: base64.b64decode(v) for k, v in secret_data(api)["data"].items()}
    for key in ("tls.key", "ca.key"):
        assert stat.S_IMODE((Path(cfg.certs.directory) / key).stat().st_mode) == 0o600
    register_webhook(api, registration(cfg), disk["ca.crt"])
    assert rotate_certificates(cfg, api, NOW + dt.timedelta(days=10)) == ([], False)

    # A second replica (its own disk) gets the same files from the Secret, issues nothing.
    other = config(tmp_path / "replica-2")
    assert rotate_certificates(other, api, NOW + dt.timedelta(days=10)) == ([], True)
    assert DirectoryStore(Path(other.certs.directory)).load() == disk

    # Near the CA's end: a new CA, and the caBundle trusts both while replicas catch up.
    done, changed = rotate_certificates(cfg, api, NOW + dt.timedelta(days=3650 - 200))
    assert changed and "new CA" in done[0]
    new = DirectoryStore(Path(cfg.certs.directory)).load()
    fingerprints = [c.fingerprint(hashes.SHA256()) for c in ca_bundle(api)]
    assert fingerprints == [
        x509.load_pem_x509_certificate(pem).fingerprint(hashes.SHA256())
        for pem in (new["ca.crt"], disk["ca.crt"])
    ]
    # The renewal is no secret to the other replica: it picks it up and must reload.
    assert rotate_certificates(other, api, NOW + dt.timedelta(days=3650 - 199))[1] is True
    assert DirectoryStore(Path(other.certs.directory)).load() == new


def test_rotation_in_a_directory_without_a_cluster(tmp_path: Path) -> None:
    cfg = config(tmp_path, CERT_SECRET="", WEBHOOK_REGISTER=False)
    assert rotate_certificates(cfg, None, NOW)[1] is True
    assert rotate_certificates(cfg, None, NOW + dt.timedelta(days=1)) == ([], False)
    done, changed = rotate_certificates(cfg, None, NOW + dt.timedelta(days=340))
    assert changed and done[0].startswith("serving certificate expires")


def test_rotation_loop_reloads_only_on_change_and_survives_errors(tmp_path: Path) -> None:
    cfg = config(tmp_path, CERT_SECRET="", WEBHOOK_REGISTER=False, CERT_CHECK_SECONDS=0.01)
    reloads: list[int] = []
    stop = threading.Event()

    def reload() -> None:
        reloads.append(1)
        # Then make the next checks fail: the loop must keep going.
        (Path(cfg.certs.directory) / "ca.crt").write_bytes(b"garbage")
        if len(reloads) == 1:
            stop.set()

    rotation_loop(cfg, reload, stop)
    assert reloads == [1]
    broken = threading.Event()
    t = threading.Thread(target=rotation_loop, args=(cfg, reload, broken), daemon=True)
    t.start()
    t.join(0.5)  # bounded: it keeps failing, logging, and waiting (no reload on failure)
    broken.set()
    t.join(5)
    assert reloads == [1] and not t.is_alive()
