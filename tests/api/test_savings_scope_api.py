"""The API's savings count only what rightsizer would change (app.core.scope): a resource an HPA
scales, a namespace never sized, a container whose policy is Off or does not control a resource
count 0 and are named with the reason; `savingsBasis` says what the numbers assume."""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from app.config import override
from tests.support.reviews import add_policy, add_recommendation

MI = 2**20
HPA = "HorizontalPodAutoscaler frontend scales it on cpu"


def pods(n: int, cpu: int, memory: int) -> dict[str, Any]:
    """`n` live pods each asking for `cpu` millicores and `memory` bytes."""
    return {
        "replicas": n,
        "requested_cpu_total": n * cpu,
        "requested_memory_total": n * memory,
        "current_cpu_request": cpu,
        "current_memory_request": memory,
    }


def get(client: FlaskClient, ref: str) -> Any:
    resp = client.get(f"/api/v1/recommendations/{ref}")
    assert resp.status_code == 200, resp.get_json()
    return resp.get_json()


def test_an_hpa_scaled_resource_counts_nothing_and_says_why(client: FlaskClient) -> None:
    # 2 pods asking for 1 core and 1Gi; recommended 250m, 256Mi; an HPA scales it on CPU.
    add_recommendation(
        workload=("shop", "Deployment", "frontend"),
        conflicts={"cpu": HPA},
        **pods(2, 1000, 1024 * MI),
    )
    body = get(client, "shop/Deployment/frontend")
    assert body["savingsBasis"] == "defaultPolicy"  # no policy: what a default one would change
    assert body["containers"][0]["excluded"] == {"cpu": HPA}
    assert body["estimatedSavings"] == {"cpuCores": 0.0, "memoryGiB": 1.5}
    assert body["estimatedSavingsPerReplica"] == {"cpuCores": 0.0, "memoryGiB": 0.75}


def test_a_namespace_never_sized_counts_nothing(app: Flask, client: FlaskClient) -> None:
    override(app, {"EXCLUDED_NAMESPACES": "legacy"})
    for ns in ("kube-system", "legacy"):
        add_recommendation(workload=(ns, "Deployment", "old"), **pods(3, 1000, 1024 * MI))
        body = get(client, f"{ns}/Deployment/old")
        assert body["estimatedSavings"] == {"cpuCores": 0.0, "memoryGiB": 0.0}
        excluded = body["containers"][0]["excluded"]
        assert set(excluded) == {"cpu", "memory"}
        assert excluded["cpu"].startswith(f"namespace {ns} is never sized (")


def test_the_policy_decides_which_containers_and_resources_count(client: FlaskClient) -> None:
    add_policy(
        "Recreate",
        target_kind="Deployment",
        target_name="web",
        container_policies=[
            {"containerName": "sidecar", "mode": "Off"},
            {"containerName": "app", "controlledResources": ["memory"]},
        ],
    )
    add_recommendation("app", **pods(2, 1000, 1024 * MI))
    add_recommendation("sidecar", **pods(2, 500, 512 * MI))
    add_recommendation("log", **pods(2, 500, 512 * MI))  # the default: Auto, cpu and memory
    body = get(client, "shop/Deployment/web")
    assert body["savingsBasis"] == "policy"
    excluded = {c["name"]: c.get("excluded") for c in body["containers"]}
    assert excluded == {
        "app": {"cpu": "cpu is not in its controlledResources"},
        "sidecar": {
            "cpu": "its container policy's mode is Off",
            "memory": "its container policy's mode is Off",
        },
        "log": None,
    }
    # app: memory 2 x (1024 - 256) Mi; log: 2 x (500 - 250) m and 2 x (512 - 256) Mi
    assert body["estimatedSavings"] == {"cpuCores": 0.5, "memoryGiB": 2.0}


def test_a_policy_in_updatemode_off_is_an_estimate(client: FlaskClient) -> None:
    add_policy("Off", target_kind="Deployment", target_name="web")
    add_recommendation("app", **pods(1, 500, 512 * MI))
    body = get(client, "shop/Deployment/web")
    assert body["savingsBasis"] == "policyOff"
    assert body["estimatedSavings"] == {"cpuCores": 0.25, "memoryGiB": 0.25}
