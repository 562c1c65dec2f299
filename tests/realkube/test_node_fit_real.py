"""A recommendation larger than every node, against a real control plane: kube-apiserver calls
rightsizer's webhook for the pod a real Deployment controller creates, and the pod comes out
capped at the largest node less the DaemonSets there, not at a size no node can take
(kubernetes/autoscaler #4515, #7147)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from app.core.quantity import parse_amount
from app.core.workload_key import WorkloadKey
from tests.realkube.cluster import RealCluster
from tests.realkube.serve import add_policies, database_url, seed_learned, serving
from tests.support.json_bodies import plain
from tests.support.processes import AppProcess, recommendations, wait_for

NS, OWN_NS = "huge", "rightsizer-node-fit"


def seed(url: str) -> None:
    """Two hours of 20 cores used by huge/Deployment/huge's container `app` (the nodes have 8),
    and a policy that applies its recommendation at admission (Initial)."""
    seed_learned(url, WorkloadKey(NS, "Deployment", "huge"), "huge-0", "app", 20.0, 6e8)
    add_policies(url, [{"name": "huge", "namespace": NS, "mode": "Initial"}])


def workload(kind: str, name: str, cpu: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}},
                    }
                ],
            },
        },
    }
    if kind == "Deployment":
        spec["replicas"] = 1
    return {"metadata": {"name": name}, "spec": spec}


@pytest.fixture
def webhook_app(real_cluster: RealCluster, tmp_path: Path) -> Iterator[AppProcess]:
    with real_cluster.api() as api:
        client.CoreV1Api(api).create_namespace(plain({"metadata": {"name": NS}}))
    with serving(real_cluster, tmp_path, OWN_NS, "rightsizer-node-fit") as app:
        seed(database_url(app))
        yield app


def test_a_pod_larger_than_every_node_is_capped_at_the_largest_less_its_daemonsets(
    real_cluster: RealCluster, webhook_app: AppProcess
) -> None:
    target = wait_for(
        lambda: recommendations(webhook_app).get((NS, "Deployment", "huge", "app")),
        30,
        "the seeded recommendation",
    )["target"]
    assert parse_amount("cpu", target["cpu"]) > 8000  # more than any node's 8 cpu
    with real_cluster.api() as api:
        apps = client.AppsV1Api(api)
        apps.create_namespaced_daemon_set(NS, plain(workload("DaemonSet", "agent", "500m")))
        # other tests' DaemonSets (the demo scenario's node-agent) run on every node too: none
        # here has a nodeSelector
        daemons = apps.list_daemon_set_for_all_namespaces().items
        assert all(not d.spec.template.spec.node_selector for d in daemons), daemons
        taken = sum(
            parse_amount("cpu", (c.resources.requests or {}).get("cpu", "0"))
            for d in daemons
            for c in d.spec.template.spec.containers
            if c.resources is not None
        )
        nodes = [  # where the pod may run: schedulable, Ready, no taint it does not tolerate
            n
            for n in client.CoreV1Api(api).list_node().items
            if not n.spec.unschedulable
            and not any(t.effect in ("NoSchedule", "NoExecute") for t in n.spec.taints or [])
            and any(c.type == "Ready" and c.status == "True" for c in n.status.conditions or [])
        ]
    largest = max(parse_amount("cpu", n.status.allocatable["cpu"]) for n in nodes)
    time.sleep(3)  # the webhook's caches see the DaemonSet
    with real_cluster.api() as api:
        client.AppsV1Api(api).create_namespaced_deployment(
            NS, plain(workload("Deployment", "huge", "1"))
        )

    def huge_pod() -> Any:
        with real_cluster.api() as api:
            pods = client.CoreV1Api(api).list_namespaced_pod(NS, label_selector="app=huge").items
        return pods[0] if pods else None

    pod = wait_for(huge_pod, 60, "the huge pod")
    requested = parse_amount("cpu", pod.spec.containers[0].resources.requests["cpu"])
    assert requested == largest - taken, (requested, largest, taken, webhook_app.log()[-3000:])
