"""Served objects validate against the Kubernetes OpenAPI schema (kubernetes-validate)."""

from __future__ import annotations

import json
from typing import Any

import kubernetes_validate
import pytest
from kubernetes import client

from app.simulator.testing import running_simulator
from tests.support.json_bodies import plain

# Paths of every kind the default scenario creates, read raw (no client model in between).
PATHS = [
    "/api/v1/namespaces",
    "/api/v1/nodes",
    "/api/v1/pods",
    "/api/v1/limitranges",
    "/apis/apps/v1/deployments",
    "/apis/apps/v1/replicasets",
    "/apis/apps/v1/statefulsets",
    "/apis/apps/v1/daemonsets",
    "/apis/policy/v1/poddisruptionbudgets",
    "/apis/autoscaling/v2/horizontalpodautoscalers",
]


@pytest.fixture(scope="module")
def served() -> dict[str, list[dict[str, Any]]]:
    with running_simulator() as sim:  # the bundled scenario: OOMs, history, every kind
        api = sim.api_client()
        out = {}
        for path in PATHS:
            resp = api.call_api("GET", sim.url + path, {"Accept": "application/json"})
            out[path] = json.loads(resp.read())["items"]
        core = client.CoreV1Api(api)
        core.create_namespaced_event(
            "default",
            plain(
                {
                    "metadata": {"name": "e1"},
                    "involvedObject": {"kind": "Pod", "name": "x"},
                    "reason": "Test",
                    "message": "hello",
                    "type": "Normal",
                }
            ),
        )
        out["events"] = [
            json.loads(
                api.call_api("GET", sim.url + "/api/v1/namespaces/default/events/e1", {}).read()
            )
        ]
        api.close()
    return out


@pytest.mark.parametrize("path", [*PATHS, "events"])
def test_served_objects_validate_strictly(served, path):
    items = served[path]
    assert items, f"nothing served at {path}"
    for obj in items:
        kubernetes_validate.validate(obj, "1.33", strict=True)


def test_oom_killed_pods_are_in_the_default_scenario(served):
    reasons = {
        cs.get("lastState", {}).get("terminated", {}).get("reason")
        for p in served["/api/v1/pods"]
        for cs in p["status"]["containerStatuses"]
    }
    assert "OOMKilled" in reasons


def test_the_validator_rejects_what_a_real_server_would_not_serve(served):
    pod = json.loads(json.dumps(served["/api/v1/pods"][0]))
    pod["status"]["containerStatuses"][0]["restartCount"] = "three"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(pod, "1.33", strict=True)
