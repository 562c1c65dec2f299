"""The simulated `resize` subresource and eviction, per Kubernetes release, driven with the
official client and with real kubectl (1.32)."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.simulator.testing import running_simulator
from tests.support.json_bodies import plain

NODES = [{"namePrefix": "node", "count": 2, "cpu": "4", "memory": "16Gi"}]


def _pod(core: Any, init: list[dict[str, Any]] | None = None) -> str:
    res = {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "2Gi"}}
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "x:1", "resources": res}]}
    if init:
        spec["initContainers"] = init
    core.create_namespaced_pod("default", {"metadata": {"name": "p"}, "spec": spec})
    return "p"


def _memory_limit(core: Any, value: str) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "app", "resources": {"limits": {"memory": value}}}]}}


@pytest.mark.parametrize(("version", "refused"), [("1.33", True), ("1.34", False), ("1.35", False)])
def test_memory_limit_decrease_by_release(version: str, refused: bool) -> None:
    with running_simulator({"nodes": NODES}, version=version) as sim:
        core = client.CoreV1Api(sim.api_client())
        assert client.VersionApi(sim.api_client()).get_code().minor == version.split(".")[1]
        name = _pod(core)
        sim.settle()
        if refused:
            with pytest.raises(ApiException) as e:
                core.patch_namespaced_pod_resize(name, "default", _memory_limit(core, "1Gi"))
            assert e.value.status == 422
            assert (
                'Pod "p" is invalid: spec.containers[0].resources.limits[memory]: Forbidden: '
                "memory limits cannot be decreased unless resizePolicy is RestartContainer"
            ) in json.loads(e.value.body)["message"]
        else:
            out = core.patch_namespaced_pod_resize(name, "default", _memory_limit(core, "1Gi"))
            assert out.spec.containers[0].resources.limits["memory"] == "1Gi"


def test_kubectl_resize_sees_the_same_refusal_and_a_restart_policy_allows_it(tmp_path: Any) -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl not installed")
    with running_simulator({"nodes": NODES}) as sim:
        core = client.CoreV1Api(sim.api_client())
        _pod(core)
        sim.settle()
        run = [kubectl, "--kubeconfig", sim.kubeconfig_path, "patch", "pod", "p"]
        run += ["--subresource", "resize", "--type", "strategic", "-p"]
        body = '{"spec":{"containers":[{"name":"app","resources":{"limits":{"memory":"1Gi"}}}]}}'
        out = subprocess.run([*run, body], capture_output=True, text=True, timeout=60)
        assert out.returncode != 0
        assert "memory limits cannot be decreased unless resizePolicy is RestartContainer" in (
            out.stderr
        )
        # Same decrease with the container's memory resizePolicy RestartContainer: accepted.
        policy = '[{"resourceName":"memory","restartPolicy":"RestartContainer"}]'
        body = (
            '{"spec":{"containers":[{"name":"app","resizePolicy":' + policy + ","
            '"resources":{"limits":{"memory":"1Gi"}}}]}}'
        )
        out = subprocess.run([*run, body], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert (
            core.read_namespaced_pod("p", "default").spec.containers[0].resources.limits["memory"]
            == "1Gi"
        )


def test_sidecars_resize_under_init_containers_plain_init_containers_do_not() -> None:
    res = {"requests": {"cpu": "100m", "memory": "64Mi"}}
    init = [
        {"name": "setup", "image": "x:1", "resources": res},
        {"name": "proxy", "image": "x:1", "restartPolicy": "Always", "resources": res},
    ]
    with running_simulator({"nodes": NODES}) as sim:
        core = client.CoreV1Api(sim.api_client())
        _pod(core, init)
        sim.settle()
        new = {"requests": {"cpu": "200m", "memory": "64Mi"}}
        body = {"spec": {"initContainers": [{"name": "proxy", "resources": new}]}}
        out = core.patch_namespaced_pod_resize("p", "default", body)
        assert out.spec.init_containers[1].resources.requests["cpu"] == "200m"
        body = {"spec": {"initContainers": [{"name": "setup", "resources": new}]}}
        with pytest.raises(ApiException) as e:
            core.patch_namespaced_pod_resize("p", "default", body)
        assert e.value.status == 422
        assert "resources for non-sidecar init containers are immutable" in e.value.body


def test_1_36_refuses_requests_above_the_node_allocatable_with_403() -> None:
    with running_simulator({"nodes": NODES}, version="1.36") as sim:
        core = client.CoreV1Api(sim.api_client())
        _pod(core)
        sim.settle()
        body = {
            "spec": {
                "containers": [
                    {"name": "app", "resources": {"requests": {"cpu": "5"}, "limits": {"cpu": "5"}}}
                ]
            }
        }
        with pytest.raises(ApiException) as e:
            core.patch_namespaced_pod_resize("p", "default", body)
        assert e.value.status == 403
        status = json.loads(e.value.body)
        assert status["message"].startswith(
            'pods "p" is forbidden: Node didn\'t have enough allocatable resources: cpu, '
        )
        assert status["details"]["causes"] == [{"reason": "NodeCapacity"}]


def test_a_terminal_pod_is_evicted_without_looking_at_budgets() -> None:
    """eviction.go canIgnorePDB: even two matching PDBs (500 for a running pod) do not stop it."""
    with running_simulator({"nodes": NODES}) as sim:
        api = sim.api_client()
        core, policy = client.CoreV1Api(api), client.PolicyV1Api(api)
        _pod(core)
        sim.settle()
        for n in ("a", "b"):
            policy.create_namespaced_pod_disruption_budget(
                "default",
                plain({"metadata": {"name": n}, "spec": {"minAvailable": 1, "selector": {}}}),
            )
        core.patch_namespaced_pod("p", "default", {"metadata": {"labels": {"x": "y"}}})
        for n in ("a", "b"):
            policy.patch_namespaced_pod_disruption_budget(
                n, "default", {"spec": {"selector": {"matchLabels": {"x": "y"}}}}
            )
        eviction = {"metadata": {"name": "p", "namespace": "default"}}
        with pytest.raises(ApiException) as e:
            core.create_namespaced_pod_eviction("p", "default", plain(eviction))
        assert e.value.status == 500
        core.patch_namespaced_pod_status("p", "default", {"status": {"phase": "Failed"}})
        core.create_namespaced_pod_eviction("p", "default", plain(eviction))
        assert "p" not in [p.metadata.name for p in core.list_namespaced_pod("default").items]
