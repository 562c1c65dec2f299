"""The Helm chart against the real kube-apiserver, and `rightsizer serve` under its RBAC.

The chart's manifests are applied server-side by kubectl, so kube-apiserver itself validates every
field, schema and RBAC rule. Then `rightsizer serve` runs with the environment the chart gives its
container, authenticated as the chart's ServiceAccount (a TokenRequest token): the API server's
audit log lists every call it made, and none may have been refused (403).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from tests.realkube.cluster import RealCluster
from tests.realkube.kubectl import kubectl_apply
from tests.realkube.serve import serving_as_chart
from tests.support.helm import FULLNAME, NAMESPACE, VARIANTS, render_chart

SERVICE_ACCOUNT = f"system:serviceaccount:{NAMESPACE}:{FULLNAME}"


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


def test_serve_as_the_charts_service_account_is_never_refused(
    real_cluster: RealCluster, chart_installed: list[dict[str, Any]], tmp_path: Path
) -> None:
    with serving_as_chart(
        real_cluster,
        chart_installed,
        tmp_path,
        RIGHTSIZER_RECOMMENDER_INTERVAL="2",
        RIGHTSIZER_UPDATER_INTERVAL="2",
    ) as app:
        app.get("/readyz")
        time.sleep(15)  # a few runs of every job, the Lease renewed, the webhook registered
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
