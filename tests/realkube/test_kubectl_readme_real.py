"""The "kubectl against the demo" walk-through of docs/simulator.md against the real control
plane: the demo's scenario (app/simulator/scenarios/default.yaml) built as real objects on kwok
nodes, then the same commands with the real kubectl, and the same checks as against the
simulated cluster.

The scenario's HorizontalPodAutoscaler is left out: against a real controller-manager it acts on
emulated usage and would fight the walk-through's `kubectl scale` (the simulated cluster runs no
HPA controller); everything else is created as `rightsizer sim` creates it.
"""

from __future__ import annotations

import os
from pathlib import Path

from kubernetes import client, utils

from app.simulator.scenarios.scenario import load, workload_object
from tests.realkube import metrics
from tests.realkube.cluster import RealCluster
from tests.support.json_bodies import plain
from tests.support.kubectl import kubectl_binary
from tests.support.processes import wait_for
from tests.support.readme_walkthrough import check_walkthrough, run_walkthrough

LEFT_OUT = {"HorizontalPodAutoscaler"}


def build_demo_scenario(cluster: RealCluster) -> None:
    scenario = load()
    with cluster.api() as api:
        core = client.CoreV1Api(api)
        existing = {n.metadata.name for n in core.list_namespace().items}
        for name, labels in scenario.namespaces:
            if name not in existing:
                core.create_namespace(plain({"metadata": {"name": name, "labels": labels}}))
        for group in scenario.nodes:
            for i in range(group.count):
                cluster.add_node(
                    f"{group.name_prefix}-{i}",
                    cpu=group.cpu,
                    memory=group.memory,
                    pods=str(group.pods),
                    labels=group.labels,
                )
        objects = [workload_object(w) for w in scenario.workloads]
        objects += [o for o in scenario.objects if o["kind"] not in LEFT_OUT]
        for obj in objects:
            utils.create_from_dict(api, obj, namespace=obj["metadata"].get("namespace"))
        apps = client.AppsV1Api(api)

        def all_available() -> bool:
            deployments = apps.list_deployment_for_all_namespaces().items
            return all(
                (d.status.available_replicas or 0) == d.spec.replicas
                for d in deployments
                if d.metadata.namespace in {w.namespace for w in scenario.workloads}
            )

        wait_for(all_available, 120, "the demo's Deployments available", interval=0.5)
        # `kubectl top` needs metrics-server to have scraped every pod of shop twice
        metrics.wait_available(cluster)
        for pod in core.list_namespaced_pod("shop").items:
            metrics.wait_pod_metrics(cluster, "shop", pod.metadata.name)


def test_the_readme_walkthrough_runs_against_the_real_control_plane(
    real_cluster: RealCluster, tmp_path: Path
) -> None:
    build_demo_scenario(real_cluster)
    env = {**os.environ, "KUBECONFIG": real_cluster.kubeconfig_path, "HOME": str(tmp_path)}
    out = run_walkthrough(kubectl_binary(), env, tmp_path / "cache", lambda: None)
    with real_cluster.api() as api:
        apps = client.AppsV1Api(api)

        def rolled_back() -> bool:
            """The real controllers finish the undo's rollout after kubectl returns (the
            simulated cluster settles between commands)."""
            d = apps.read_namespaced_deployment("frontend", "shop")
            return bool(
                d.status.observed_generation == d.metadata.generation
                and d.status.updated_replicas == d.status.available_replicas == d.spec.replicas
                and d.status.replicas == d.spec.replicas
            )

        wait_for(rolled_back, 60, "frontend's rollback rolled out", interval=0.5)
        check_walkthrough(out, api)
