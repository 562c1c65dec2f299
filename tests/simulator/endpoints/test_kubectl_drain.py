"""The real kubectl against the simulator: `kubectl create` (client-go sends these as protobuf),
cordon/uncordon, and drain, which evicts through pods/eviction and PodDisruptionBudgets (or
deletes with protobuf DeleteOptions when eviction is disabled)."""

from __future__ import annotations

import base64
import queue
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from app.simulator.simulator import Simulator
from tests.support.json_bodies import plain
from tests.support.kubectl import run_kubectl

BLOCKED = "Cannot evict pod as it would violate the pod's disruption budget."

Kubectl = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def kubectl(sim: Simulator, tmp_path: Path) -> Kubectl:
    """kubectl with its own cache directory, so no discovery of another run is reused."""

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run_kubectl(sim, "--cache-dir", str(tmp_path / "cache"), *args, check=check)

    return run


@pytest.fixture
def apps(api_client: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(api_client)


def _pods_on(core: client.CoreV1Api, node: str, namespace: str = "shop") -> list[Any]:
    pods = core.list_namespaced_pod(namespace, field_selector=f"spec.nodeName={node}").items
    return [p for p in pods if p.metadata.deletion_timestamp is None]


def test_kubectl_create_speaks_protobuf_and_objects_arrive_whole(
    kubectl: Kubectl, apps: client.AppsV1Api, core: client.CoreV1Api, api_client: client.ApiClient
) -> None:
    out = kubectl("create", "deployment", "x", "--image=nginx:1.27", "--replicas=0", "-n", "other")
    assert out.stdout.strip() == "deployment.apps/x created"
    x = apps.read_namespaced_deployment("x", "other")
    assert x.spec.replicas == 0  # a pointer's zero survives the protobuf
    assert x.spec.strategy.type == "RollingUpdate"  # `strategy: {}` defaulted as kube does
    assert x.spec.strategy.rolling_update.max_surge == "25%"
    assert x.spec.template.spec.containers[0].image == "nginx:1.27"
    assert x.spec.selector.match_labels == {"app": "x"}
    kubectl("create", "secret", "generic", "s", "--from-literal=k=v\x01", "-n", "other")
    secret = core.read_namespaced_secret("s", "other")
    assert base64.b64decode(secret.data["k"]) == b"v\x01"
    kubectl("create", "configmap", "c", "--from-literal=a=b", "-n", "other")
    assert core.read_namespaced_config_map("c", "other").data == {"a": "b"}
    kubectl("create", "job", "j", "--image=busybox", "-n", "other")
    job = client.BatchV1Api(api_client).read_namespaced_job("j", "other")
    assert job.spec.template.spec.restart_policy == "Never"
    kubectl("create", "pdb", "b", "--selector=app=x", "--max-unavailable=50%", "-n", "other")
    pdb = client.PolicyV1Api(api_client).read_namespaced_pod_disruption_budget("b", "other")
    assert pdb.spec.max_unavailable == "50%" and pdb.spec.min_available is None


def test_cordon_and_uncordon(kubectl: Kubectl, core: client.CoreV1Api) -> None:
    assert kubectl("cordon", "node-1").stdout.strip() == "node/node-1 cordoned"
    assert core.read_node("node-1").spec.unschedulable is True
    assert kubectl("cordon", "node-1").stdout.strip() == "node/node-1 already cordoned"
    assert kubectl("uncordon", "node-1").stdout.strip() == "node/node-1 uncordoned"
    assert not core.read_node("node-1").spec.unschedulable


def test_drain_waits_for_a_budget_that_blocks_then_allows(
    kubectl: Kubectl, sim: Simulator, core: client.CoreV1Api, api_client: client.ApiClient
) -> None:
    node = core.list_namespaced_pod("shop", label_selector="app=web").items[0].spec.node_name
    on_node = {p.metadata.name for p in _pods_on(core, node)}
    policy = client.PolicyV1Api(api_client)
    budget = {
        "metadata": {"name": "web"},
        "spec": {"minAvailable": 3, "selector": {"matchLabels": {"app": "web"}}},
    }
    policy.create_namespaced_pod_disruption_budget("shop", plain(budget))
    kubectl_bin = shutil.which("kubectl")
    if kubectl_bin is None:
        pytest.skip("kubectl is not installed")
    drain = subprocess.Popen(
        [
            kubectl_bin,
            "--kubeconfig",
            sim.kubeconfig_path,
            "--cache-dir",
            str(Path(sim.kubeconfig_path).parent / "cache"),
            "drain",
            node,
            "--ignore-daemonsets",
            "--timeout=180s",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def forward() -> None:
        for line in drain.stderr or []:
            lines.put(line)

    threading.Thread(target=forward, daemon=True).start()
    try:
        seen: list[str] = []
        while not any(BLOCKED in line for line in seen):
            seen.append(lines.get(timeout=120))  # the budget refuses; kubectl retries
        assert any("will retry after 5s" in line for line in seen), seen
        assert _pods_on(core, node), "nothing was evicted while the budget forbade it"
        policy.patch_namespaced_pod_disruption_budget("web", "shop", {"spec": {"minAvailable": 2}})
        out, _ = drain.communicate(timeout=180)
    finally:
        if drain.poll() is None:
            drain.kill()
            drain.wait()
    assert drain.returncode == 0, out
    for name in on_node:
        assert f"pod/{name} evicted" in out
    assert f"node/{node} drained" in out
    assert core.read_node(node).spec.unschedulable is True
    assert not _pods_on(core, node)


def test_drain_without_eviction_deletes_with_protobuf_delete_options(
    kubectl: Kubectl, core: client.CoreV1Api
) -> None:
    node = core.list_namespaced_pod("shop", label_selector="app=web").items[0].spec.node_name
    names = {p.metadata.name for p in _pods_on(core, node)}
    out = kubectl("drain", node, "--ignore-daemonsets", "--disable-eviction", "--timeout=120s")
    for name in names:
        assert f"pod/{name} deleted" in out.stdout
    assert f"node/{node} drained" in out.stdout
    assert not _pods_on(core, node)
