"""The real kubectl's writes that wait on the cluster: `create`, `apply` twice (create, then
change: a rolling update follows), `wait --for=condition=Ready|Available|delete` (watch
semantics), and `cordon` + `drain` through a PodDisruptionBudget. Checked on kubectl's output and
on the objects the official Python client reads after."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from app.simulator.apiserver.resources import PDB
from app.simulator.apiserver.store import WatchEvent
from app.simulator.simulator import Simulator
from tests.support.kubectl import WORKFLOWS, Kubectl, deployment, manifest

NS = "demo"


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return WORKFLOWS


def live_pods(api: client.ApiClient, selector: str) -> list[Any]:
    pods = client.CoreV1Api(api).list_namespaced_pod(NS, label_selector=selector).items
    return [p for p in pods if p.metadata.deletion_timestamp is None]


def test_create_then_apply_twice(
    module_kubectl: Kubectl, module_sim: Simulator, module_api: client.ApiClient, tmp_path: Path
) -> None:
    out = module_kubectl.out("create", "deployment", "made", "--image=nginx:1.27", "-n", NS)
    assert out.strip() == "deployment.apps/made created"
    module_sim.settle()
    assert len(live_pods(module_api, "app=made")) == 1

    first = manifest(tmp_path, deployment("applied", replicas=2))
    assert module_kubectl.out("apply", "-f", first).strip() == "deployment.apps/applied created"
    module_sim.settle()
    assert module_kubectl.out("apply", "-f", first).strip() == "deployment.apps/applied unchanged"
    changed = manifest(tmp_path, deployment("applied", replicas=3, image="nginx:1.28"))
    assert (
        module_kubectl.out("apply", "-f", changed).strip() == "deployment.apps/applied configured"
    )
    module_sim.settle()
    d = client.AppsV1Api(module_api).read_namespaced_deployment("applied", NS)
    assert (d.spec.replicas, d.spec.template.spec.containers[0].image) == (3, "nginx:1.28")
    assert (d.status.updated_replicas, d.status.available_replicas) == (3, 3)
    assert d.metadata.annotations["deployment.kubernetes.io/revision"] == "2"
    assert {p.spec.containers[0].image for p in live_pods(module_api, "app=applied")} == {
        "nginx:1.28"
    }
    status = module_kubectl.out("rollout", "status", "-n", NS, "deployment/applied")
    assert status.strip() == 'deployment "applied" successfully rolled out'


def test_wait_for_ready_and_available_until_a_node_has_room(
    module_kubectl: Kubectl, module_sim: Simulator, module_api: client.ApiClient, tmp_path: Path
) -> None:
    module_kubectl("apply", "-f", manifest(tmp_path, deployment("roomy", replicas=1, cpu="6")))
    module_sim.settle()
    pod = live_pods(module_api, "app=roomy")[0].metadata.name
    # No 4-core node fits it: it stays Pending and kubectl's wait times out saying so.
    timed_out = module_kubectl(
        "wait", "-n", NS, "--for=condition=Ready", f"pod/{pod}", "--timeout=1s", check=False
    )
    assert timed_out.returncode != 0
    assert f"timed out waiting for the condition on pods/{pod}" in timed_out.stderr
    ready = module_kubectl.watching(
        "pods", "wait", "-n", NS, "--for=condition=Ready", f"pod/{pod}", "--timeout=60s"
    )
    available = module_kubectl.watching(
        "deployments.apps",
        "wait",
        "-n",
        NS,
        "--for=condition=Available",
        "deployment/roomy",
        "--timeout=60s",
    )
    module_sim.cluster.add_node("big-0", cpu="8", memory="32Gi")
    module_sim.settle()
    for waited, name in ((ready, f"pod/{pod}"), (available, "deployment.apps/roomy")):
        done = waited.result()
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"{name} condition met"
    assert live_pods(module_api, "app=roomy")[0].spec.node_name == "big-0"
    gone = module_kubectl.watching(
        "pods", "wait", "-n", NS, "--for=delete", f"pod/{pod}", "--timeout=60s"
    )
    module_kubectl("delete", "-n", NS, "deployment/roomy", "--wait=false")
    module_sim.settle()
    done = gone.result()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"pod/{pod} condition met"
    module_sim.remove_node("big-0")


def test_cordon_then_drain_through_a_disruption_budget(
    module_kubectl: Kubectl, module_sim: Simulator, module_api: client.ApiClient, tmp_path: Path
) -> None:
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "keep", "namespace": NS},
        "spec": {"minAvailable": 3, "selector": {"matchLabels": {"app": "keep"}}},
    }
    module_kubectl(
        "apply", "-f", manifest(tmp_path, deployment("keep", replicas=4, cpu="200m"), pdb)
    )
    module_sim.settle()
    core = client.CoreV1Api(module_api)
    node = max(
        {p.spec.node_name for p in live_pods(module_api, "app=keep")},
        key=lambda n: sum(p.spec.node_name == n for p in live_pods(module_api, "app=keep")),
    )
    on_node = {
        p.metadata.name for p in live_pods(module_api, "app=keep") if p.spec.node_name == node
    }
    assert module_kubectl.out("cordon", node).strip() == f"node/{node} cordoned"
    assert core.read_node(node).spec.unschedulable is True
    # Each eviction must leave 3 of 4 pods ready: the budget allows one at a time.
    healthy: list[int] = []
    store = module_sim.cluster.store

    def listen(event: WatchEvent) -> None:
        if event.rt is PDB and event.entry.obj["metadata"]["name"] == "keep":
            healthy.append(event.entry.obj["status"].get("currentHealthy", 0))

    store.add_listener(listen)
    out = module_kubectl.out("drain", node, "--ignore-daemonsets", "--timeout=60s")
    module_sim.settle()
    for name in on_node:
        assert f"pod/{name} evicted" in out
    assert out.strip().endswith(f"node/{node} drained")
    assert min(healthy) >= 3
    pods = live_pods(module_api, "app=keep")
    assert len(pods) == 4 and all(p.spec.node_name != node for p in pods)
    budget = client.PolicyV1Api(module_api).read_namespaced_pod_disruption_budget("keep", NS)
    assert (budget.status.current_healthy, budget.status.disruptions_allowed) == (4, 1)
    assert module_kubectl.out("uncordon", node).strip() == f"node/{node} uncordoned"
    assert not core.read_node(node).spec.unschedulable
