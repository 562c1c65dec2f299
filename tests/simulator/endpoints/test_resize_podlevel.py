"""The `resize` subresource of a pod with pod-level resources (`spec.resources`), by release:
refused before 1.35 and with 1.35's gate off, done from 1.36 on a node that declares
InPlacePodLevelResourcesVerticalScaling (KEP-5419), with the kubelet's pod-level status."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.simulator.testing import running_simulator
from tests.support.json_bodies import plain

NODES = [{"namePrefix": "node", "count": 1, "cpu": "4", "memory": "16Gi"}]
LEVEL = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}}
NEW = {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
FEATURE = "InPlacePodLevelResourcesVerticalScaling"


def _start(sim: Any) -> client.CoreV1Api:
    core = client.CoreV1Api(sim.api_client())
    spec = {"resources": LEVEL, "containers": [{"name": "app", "image": "x:1"}]}
    core.create_namespaced_pod("default", plain({"metadata": {"name": "p"}, "spec": spec}))
    sim.settle()
    return core


def _resize(core: client.CoreV1Api, resources: dict[str, Any]) -> Any:
    return core.patch_namespaced_pod_resize(
        "p", "default", {"spec": {"resources": resources}}, _preload_content=False
    )


def _causes(e: ApiException) -> set[str]:
    return {c["message"] for c in json.loads(e.body)["details"].get("causes") or []}


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("1.34", "pods with pod-level resources cannot be resized"),
        ("1.35", "InPlacePodLevelResourcesVerticalScalingEnabled feature gate is disabled"),
    ],
)
def test_releases_without_the_gate_on_refuse_and_keep_the_pod(version: str, message: str) -> None:
    with running_simulator({"nodes": NODES}, version=version) as sim:
        core = _start(sim)
        with pytest.raises(ApiException) as e:
            _resize(core, NEW)
        assert e.value.status == 422
        assert any(message in c for c in _causes(e.value)), e.value.body
        pod = core.read_namespaced_pod("p", "default")
        assert pod.spec.resources.requests == LEVEL["requests"]
        node = core.list_node().items[0]
        assert not node.status.declared_features


def test_from_1_36_the_pod_level_values_are_resized_and_reported_as_the_kubelet_does() -> None:
    with running_simulator({"nodes": NODES}, version="1.36") as sim:
        core = _start(sim)
        [node] = core.list_node().items
        assert node.status.declared_features == [FEATURE]
        uid = core.read_namespaced_pod("p", "default").metadata.uid
        out = json.loads(_resize(core, NEW).data)
        assert out["metadata"]["uid"] == uid
        assert out["spec"]["resources"] == NEW
        assert out["status"]["resources"] == NEW
        assert out["status"]["allocatedResources"] == {"cpu": "500m", "memory": str(512 * 2**20)}
        assert not any(c["type"].startswith("PodResize") for c in out["status"]["conditions"])


def test_from_1_36_what_validatePodLevelResourcesResize_refuses_is_refused() -> None:
    with running_simulator({"nodes": NODES}, version="1.36") as sim:
        core = _start(sim)
        with pytest.raises(ApiException) as e:
            core.patch_namespaced_pod_resize(
                "p",
                "default",
                [{"op": "remove", "path": "/spec/resources/limits"}],
            )
        assert e.value.status == 422
        assert "Forbidden: pod-level resource limits cannot be removed" in _causes(e.value)
        with pytest.raises(ApiException) as e:  # a request above the pod-level limit
            _resize(core, {"requests": {"cpu": "3"}})
        assert e.value.status == 422
        assert core.read_namespaced_pod("p", "default").spec.resources.requests == LEVEL["requests"]


def test_a_node_that_does_not_declare_the_feature_gets_no_pod_level_resize() -> None:
    """NodeDeclaredFeatureValidator: 403 naming the feature and the node."""
    with running_simulator({"nodes": NODES}, version="1.36") as sim:
        core = _start(sim)
        [node] = core.list_node().items
        core.patch_node_status(
            node.metadata.name,
            {"status": {"declaredFeatures": None}},
        )
        with pytest.raises(ApiException) as e:
            _resize(core, NEW)
        assert e.value.status == 403
        assert f"requires features {FEATURE}" in json.loads(e.value.body)["message"]
        assert core.read_namespaced_pod("p", "default").spec.resources.requests == LEVEL["requests"]
