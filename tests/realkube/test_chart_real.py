"""The Helm chart against the real kube-apiserver, and `rightsizer serve` under its RBAC.

The chart's manifests are applied server-side by kubectl, so kube-apiserver itself validates every
field, schema and RBAC rule. Then `rightsizer serve` runs with the environment the chart gives its
container, authenticated as the chart's ServiceAccount (a TokenRequest token): the API server's
audit log lists every call it made, and none may have been refused (403).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from app.serving.certs import ensure, service_names
from tests.realkube.cluster import RealCluster, free_port
from tests.support.helm import FULLNAME, NAMESPACE, VARIANTS, render_chart
from tests.support.processes import AppProcess

SERVICE_ACCOUNT = f"system:serviceaccount:{NAMESPACE}:{FULLNAME}"


def kubectl_apply(cluster: RealCluster, docs: list[dict[str, Any]], *flags: str) -> str:
    done = subprocess.run(
        ["kubectl", "apply", "--server-side", "--field-manager=helm", "-f", "-", *flags],
        input=yaml.safe_dump_all(docs),
        capture_output=True,
        text=True,
        env={
            "KUBECONFIG": cluster.kubeconfig_path,
            "PATH": "/usr/bin:/bin",
            "HOME": str(cluster.directory),
        },
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def chart_installed(real_cluster: RealCluster) -> Iterator[list[dict[str, Any]]]:
    with real_cluster.api() as api:
        client.CoreV1Api(api).create_namespace({"metadata": {"name": NAMESPACE}})
    docs = render_chart()
    kubectl_apply(real_cluster, docs)
    yield docs


def test_every_object_of_the_chart_is_accepted_by_kube_apiserver(
    real_cluster: RealCluster, chart_installed: list[dict[str, Any]]
) -> None:
    with real_cluster.api() as api:
        deployment = client.AppsV1Api(api).read_namespaced_deployment(FULLNAME, NAMESPACE)
        role = client.RbacAuthorizationV1Api(api).read_cluster_role(FULLNAME)
    assert deployment.spec.template.spec.service_account_name == FULLNAME
    assert role.rules


@pytest.mark.parametrize(
    "variant",
    [v for v in VARIANTS if "cert-manager" not in v],  # no cert-manager CRDs here
)
def test_each_variant_passes_server_side_validation(
    real_cluster: RealCluster, chart_installed: list[dict[str, Any]], variant: str
) -> None:
    out = kubectl_apply(real_cluster, render_chart(VARIANTS[variant]), "--dry-run=server")
    assert "serverside-applied (server dry run)" in out


def chart_env(docs: list[dict[str, Any]]) -> dict[str, str]:
    """The literal environment the chart gives rightsizer's container (valueFrom left out)."""
    [deployment] = [d for d in docs if d["kind"] == "Deployment"]
    [container] = [
        c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "rightsizer"
    ]
    return {e["name"]: str(e["value"]) for e in container["env"] if "value" in e}


def test_serve_as_the_charts_service_account_is_never_refused(
    real_cluster: RealCluster, chart_installed: list[dict[str, Any]], tmp_path: Path
) -> None:
    kubeconfig = real_cluster.service_account_kubeconfig(
        NAMESPACE, FULLNAME, tmp_path / "sa.kubeconfig"
    )
    paths, _ = ensure(tmp_path / "certs", [*service_names(FULLNAME, NAMESPACE), "localhost"])
    env = chart_env(chart_installed)
    # where a pod's files and address differ from a process on this machine's
    for local in ("RIGHTSIZER_CERT_DIR", "RIGHTSIZER_TLS_CERT_FILE", "RIGHTSIZER_TLS_KEY_FILE"):
        env.pop(local)
    for local in ("RIGHTSIZER_BIND", "RIGHTSIZER_ACCESS_LOG", "RIGHTSIZER_CERT_ROTATE"):
        env.pop(local, None)
    port = free_port()
    app = AppProcess(
        str(kubeconfig),
        f"sqlite:///{tmp_path}/rightsizer.db",
        tmp_path / "app.log",
        ca_file=str(paths.ca),
        port=port,
        **{
            **env,
            # kube-apiserver calls the webhook here (in a cluster: the Service)
            "RIGHTSIZER_WEBHOOK_URL": f"https://localhost:{port}/mutate",
            "RIGHTSIZER_TLS_CERT_FILE": paths.cert,
            "RIGHTSIZER_TLS_KEY_FILE": paths.key,
            "RIGHTSIZER_CERT_DIR": paths.directory,
            "RIGHTSIZER_WEBHOOK_REGISTER": "true",
            "RIGHTSIZER_RECOMMENDER_INTERVAL": "2",
            "RIGHTSIZER_UPDATER_INTERVAL": "2",
        },
    )
    try:
        app.wait_ready()
        app.get("/readyz")
        time.sleep(15)  # a few runs of every job, the Lease renewed, the webhook registered
    finally:
        app.stop()
    events = real_cluster.audit_events(SERVICE_ACCOUNT)
    refused = sorted(
        {
            f"{e['verb']} {e['objectRef'].get('apiGroup', '')}/{e['objectRef'].get('resource')}"
            for e in events
            if e.get("responseStatus", {}).get("code") == 403
        }
    )
    assert refused == [], json.dumps(refused) + "\n" + app.log()[-3000:]
    resources = {e["objectRef"].get("resource") for e in events if "objectRef" in e}
    # it did work as that account: its Lease, the webhook's registration, the pods it watches
    assert {"leases", "mutatingwebhookconfigurations", "pods"} <= resources, resources
