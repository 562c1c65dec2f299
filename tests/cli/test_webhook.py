"""`rightsizer certs ensure` and `rightsizer webhook print|install|uninstall` as users run them."""

from __future__ import annotations

import base64
import json
import stat
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import yaml
from cryptography import x509

from tests.support.fake_registrations import FakeApiServer
from tests.support.json_bodies import plain, raw_body


def rightsizer(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),  # no ~/.kube of the machine's
        "RIGHTSIZER_DATABASE_URL": f"sqlite:///{tmp_path}/cli.db",
    }
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        capture_output=True,
        text=True,
        env={**base, **env},
        cwd=tmp_path,
        timeout=60,
    )


def test_certs_ensure_creates_then_finds_them_current(tmp_path: Path) -> None:
    out = rightsizer(
        tmp_path, "certs", "ensure", "--dir", "tls", "--service", "rs", "--namespace", "ops"
    )
    assert out.returncode == 0, out.stderr
    assert "created CA" in out.stdout
    cert = x509.load_pem_x509_certificate((tmp_path / "tls" / "tls.crt").read_bytes())
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "rs.ops.svc" in sans.get_values_for_type(x509.DNSName)
    for key in ("tls.key", "ca.key"):
        assert stat.S_IMODE((tmp_path / "tls" / key).stat().st_mode) == 0o600

    again = rightsizer(
        tmp_path, "certs", "ensure", "--dir", "tls", "--service", "rs", "--namespace", "ops"
    )
    assert again.returncode == 0, again.stderr
    assert "are current" in again.stdout


def test_certs_ensure_defaults_come_from_settings(tmp_path: Path) -> None:
    out = rightsizer(
        tmp_path,
        "certs",
        "ensure",
        "--extra-name",
        "127.0.0.1",
        RIGHTSIZER_CERT_DIR=str(tmp_path / "c"),
        RIGHTSIZER_NAMESPACE="team",
    )
    assert out.returncode == 0, out.stderr
    cert = x509.load_pem_x509_certificate((tmp_path / "c" / "tls.crt").read_bytes())
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "rightsizer.team.svc" in sans.get_values_for_type(x509.DNSName)
    assert [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]


def test_webhook_print_works_without_a_cluster(tmp_path: Path) -> None:
    assert rightsizer(tmp_path, "certs", "ensure").returncode == 0
    out = rightsizer(tmp_path, "webhook", "print", RIGHTSIZER_EXCLUDED_NAMESPACES="batch")
    assert out.returncode == 0, out.stderr
    doc = yaml.safe_load(out.stdout)
    kubernetes_validate.validate(doc, "1.37.0", strict=True)
    hook = doc["webhooks"][0]
    ca = (tmp_path / "certs" / "ca.crt").read_bytes()
    assert base64.b64decode(hook["clientConfig"]["caBundle"]) == ca
    assert hook["namespaceSelector"]["matchExpressions"][0]["values"] == [
        "batch",
        "kube-system",
        "rightsizer",
    ]
    as_json = rightsizer(tmp_path, "webhook", "print", "-o", "json", "--url", "https://x/mutate")
    assert json.loads(as_json.stdout)["webhooks"][0]["clientConfig"]["url"] == "https://x/mutate"


def test_webhook_print_without_certificates_says_what_to_run(tmp_path: Path) -> None:
    out = rightsizer(tmp_path, "webhook", "print")
    assert out.returncode == 1
    assert out.stdout == ""
    assert "rightsizer certs ensure" in out.stderr


def test_webhook_install_and_uninstall(tmp_path: Path) -> None:
    assert rightsizer(tmp_path, "certs", "ensure").returncode == 0
    with FakeApiServer() as fake:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(fake.kubeconfig())
        env = {"RIGHTSIZER_KUBECONFIG": str(kubeconfig)}
        first = rightsizer(tmp_path, "webhook", "install", **env)
        assert first.returncode == 0, first.stderr
        assert first.stdout.strip() == "MutatingWebhookConfiguration rightsizer created"
        second = rightsizer(tmp_path, "webhook", "install", **env)
        assert second.stdout.strip() == "MutatingWebhookConfiguration rightsizer unchanged"
        assert "rightsizer" in fake.objects
        gone = rightsizer(tmp_path, "webhook", "uninstall", "--kubeconfig", str(kubeconfig))
        assert gone.stdout.strip() == "MutatingWebhookConfiguration rightsizer deleted"
        assert fake.objects == {}


def test_webhook_install_without_a_cluster_fails_cleanly(tmp_path: Path) -> None:
    assert rightsizer(tmp_path, "certs", "ensure").returncode == 0
    out = rightsizer(tmp_path, "webhook", "install", "--kubeconfig", str(tmp_path / "missing"))
    assert out.returncode == 1
    assert "no usable Kubernetes configuration" in out.stderr
    assert "Traceback" not in out.stderr


def test_certs_ensure_into_a_secret(tmp_path: Path) -> None:
    from kubernetes import client as k8s

    from app.simulator.testing import EMPTY, running_simulator

    with running_simulator(EMPTY) as sim:
        api = sim.api_client()
        k8s.CoreV1Api(api).create_namespace(plain({"metadata": {"name": "ops"}}))
        args = ("certs", "ensure", "--dir", "tls", "--namespace", "ops", "--secret", "rs-tls")
        out = rightsizer(tmp_path, *args, "--kubeconfig", sim.kubeconfig_path)
        assert out.returncode == 0, out.stderr
        assert "created CA" in out.stdout and "Secret ops/rs-tls" in out.stdout
        resp = k8s.CoreV1Api(api).read_namespaced_secret("rs-tls", "ops", _preload_content=False)
        data = json.loads(raw_body(resp))["data"]
        for name in ("ca.crt", "tls.crt", "tls.key"):
            assert base64.b64decode(data[name]) == (tmp_path / "tls" / name).read_bytes()
        again = rightsizer(tmp_path, *args, "--kubeconfig", sim.kubeconfig_path)
        assert again.returncode == 0 and "are current" in again.stdout
        missing = rightsizer(
            tmp_path,
            "certs",
            "ensure",
            "--namespace",
            "nope",
            "--secret",
            "x",
            "--kubeconfig",
            sim.kubeconfig_path,
        )
        assert missing.returncode != 0 and "Secret nope/x" in missing.stderr
        api.close()
