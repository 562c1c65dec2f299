"""The water-level scheduler against a real control plane: a second real kube-scheduler, started
with the KubeSchedulerConfiguration the Helm chart renders, schedules the pods that name it
(spec.schedulerName), which rightsizer's webhook sets for the pods of `placement: waterLevel`
policies, through rightsizer's extender, and is `ignorable` about it: with the extender
unreachable, pods are still scheduled."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from kubernetes import client

from app.core.quantity import parse_amount
from app.serving.certs import ensure
from app.webhook.placement import PLACEMENT_ANNOTATION
from tests.realkube.cluster import RealCluster, free_port
from tests.realkube.metrics import node_metrics, usage_annotations
from tests.realkube.scheduler import (
    SCHEDULER_NAME,
    scheduled_by,
    wait_scheduled,
    water_level_scheduler,
)
from tests.realkube.serve import add_policies, database_url, serving
from tests.support import json_bodies
from tests.support.processes import wait_for

NS, OWN_NS = "water-level", "rightsizer-water-level"


def pause_pod(name: str, scheduler: str | None = None) -> dict[str, object]:
    spec: dict[str, object] = {
        "containers": [
            {
                "name": "app",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
            }
        ]
    }
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    return {"metadata": {"name": name, "namespace": NS}, "spec": spec}


def ensure_namespace(cluster: RealCluster, name: str) -> None:
    with cluster.api() as api:
        try:
            client.CoreV1Api(api).create_namespace(json_bodies.plain({"metadata": {"name": name}}))
        except client.ApiException as e:
            if e.status != 409:
                raise


def test_pods_naming_it_are_scheduled_with_the_extender_unreachable(
    real_cluster: RealCluster, tmp_path: Path
) -> None:
    """ignorable: true. Nothing listens on the extender's port: kube-scheduler's call fails, and
    the pod is scheduled all the same, by the water-level scheduler, not the default one."""
    ensure_namespace(real_cluster, NS)
    paths, _ = ensure(tmp_path / "certs", ["localhost"])
    nowhere = f"https://localhost:{free_port()}/scheduler"
    with water_level_scheduler(real_cluster, tmp_path, nowhere, paths.ca):
        with real_cluster.api() as api:
            client.CoreV1Api(api).create_namespaced_pod(
                NS, json_bodies.plain(pause_pod("unreachable", SCHEDULER_NAME))
            )
        pod = wait_scheduled(real_cluster, NS, "unreachable", tmp_path)
        assert pod.spec.scheduler_name == SCHEDULER_NAME
        assert scheduled_by(real_cluster, NS, "unreachable") == {SCHEDULER_NAME}
        log = (tmp_path / "water-level-scheduler.log").read_text(errors="replace")
        assert "/scheduler/filter" in log or "/scheduler/prioritize" in log, log[-3000:]


def deployment(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": pause_pod(name)["spec"],
            },
        },
    }


def pods_of(cluster: RealCluster, app: str) -> list[Any]:
    with cluster.api() as api:
        return list(
            client.CoreV1Api(api).list_namespaced_pod(NS, label_selector=f"app={app}").items
        )


def test_a_water_level_policys_pods_go_to_the_water_level_scheduler(
    real_cluster: RealCluster, tmp_path: Path
) -> None:
    """rightsizer serve's webhook (RIGHTSIZER_PLACEMENT_SCHEDULER_NAME, as the chart sets it)
    gives the pods a real Deployment controller creates for a `placement: waterLevel` policy the
    water-level scheduler, which schedules them calling serve's /scheduler; the pods of a policy
    with the default placement stay with kube-scheduler's default-scheduler."""
    ensure_namespace(real_cluster, NS)
    settings = {"RIGHTSIZER_PLACEMENT_SCHEDULER_NAME": SCHEDULER_NAME}
    with serving(real_cluster, tmp_path / "serve", OWN_NS, OWN_NS, **settings) as app:
        add_policies(
            database_url(app),
            [
                {"name": "placed", "namespace": NS, "mode": "Off", "placement": "waterLevel"},
                {"name": "plain", "namespace": NS, "mode": "Off"},
            ],
        )
        wait_for(lambda: len(app.get("/api/v1/policies")["items"]) == 2, 30, "the policies")
        time.sleep(2)  # the webhook's cache reloads every second
        extender = f"{app.url}/scheduler"
        with water_level_scheduler(real_cluster, tmp_path, extender, str(app.verify)):
            with real_cluster.api() as api:
                apps = client.AppsV1Api(api)
                apps.create_namespaced_deployment(NS, json_bodies.plain(deployment("placed", 2)))
                apps.create_namespaced_deployment(NS, json_bodies.plain(deployment("plain", 1)))
            placed = wait_for(lambda: len(pods_of(real_cluster, "placed")) == 2, 60, "pods")
            assert placed
            for pod in pods_of(real_cluster, "placed"):
                name = pod.metadata.name
                assert pod.spec.scheduler_name == SCHEDULER_NAME, app.log()[-3000:]
                note = pod.metadata.annotations[PLACEMENT_ANNOTATION]
                assert note == f"waterLevel: policy {NS}/placed set schedulerName {SCHEDULER_NAME}"
                assert wait_scheduled(real_cluster, NS, name, tmp_path).spec.node_name
                assert scheduled_by(real_cluster, NS, name) == {SCHEDULER_NAME}
            [plain] = wait_for(lambda: pods_of(real_cluster, "plain"), 60, "the plain pod")
            assert plain.spec.scheduler_name == "default-scheduler"
            assert wait_scheduled(real_cluster, NS, plain.metadata.name, tmp_path).spec.node_name
            assert scheduled_by(real_cluster, NS, plain.metadata.name) == {"default-scheduler"}


# Three nodes of their own, tainted so that only this test's pods go there (and deleted after it:
# other tests count the cluster's nodes), with the usage kwok emulates: two run hot, one idles,
# while every node has the same small requests, so requests cannot tell them apart.
LEVEL_NODES = {"wl-hot": ("6500m", "24Gi"), "wl-warm": ("5", "20Gi"), "wl-low": ("100m", "1Gi")}
TAINT = {"key": "rightsizer.io/water-level-test", "value": "yes", "effect": "NoSchedule"}
TOLERATION = {"key": TAINT["key"], "operator": "Equal", "value": "yes", "effect": "NoSchedule"}
LABEL = {"rightsizer.io/water-level-test": "yes"}


def add_level_nodes(cluster: RealCluster) -> None:
    for name in LEVEL_NODES:
        cluster.add_node(name, labels=LABEL)
    with cluster.api() as api:
        core = client.CoreV1Api(api)
        for name in LEVEL_NODES:
            core.patch_node(name, {"spec": {"taints": [TAINT]}})
    cluster.wait_nodes_ready(len(LEVEL_NODES) + 3)


def load_pod(node: str, cpu: str, memory: str) -> dict[str, Any]:
    """Pinned to `node` (no scheduler), requesting little and using `cpu` and `memory`."""
    pod = pause_pod(f"load-{node}")
    pod["metadata"]["annotations"] = usage_annotations(cpu, memory)  # type: ignore[index]
    spec: dict[str, Any] = pod["spec"]  # type: ignore[assignment]
    spec["nodeName"] = node
    spec["tolerations"] = [TOLERATION]
    return pod


def used_share(metrics: dict[str, Any], node: str) -> float:
    cpu = parse_amount("cpu", metrics["usage"]["cpu"])
    return cpu / 8000  # the nodes' allocatable: 8 cores


def test_a_water_level_policys_pods_land_on_the_lowest_node(
    real_cluster: RealCluster, tmp_path: Path
) -> None:
    """The whole chain: NodeMetrics (metrics-server scraping kwok's emulated usage) -> the
    leader's node levels -> the extender's scores -> the water-level kube-scheduler with the
    chart's configuration binds the pods of a `placement: waterLevel` policy, which the webhook
    sent to it, on the node that really uses least; by their requests the nodes look alike."""
    ensure_namespace(real_cluster, NS)
    add_level_nodes(real_cluster)
    try:
        with real_cluster.api() as api:
            core = client.CoreV1Api(api)
            for node, (cpu, memory) in LEVEL_NODES.items():
                core.create_namespaced_pod(NS, json_bodies.plain(load_pod(node, cpu, memory)))

        def levels() -> dict[str, float] | None:
            found = {n: node_metrics(real_cluster, n) for n in LEVEL_NODES}
            if any(m is None for m in found.values()):
                return None
            shares = {n: used_share(m, n) for n, m in found.items() if m is not None}
            return shares if shares["wl-hot"] > 0.5 and shares["wl-warm"] > 0.4 else None

        shares = wait_for(levels, 120, "NodeMetrics of the three nodes at their levels")
        assert min(shares, key=shares.__getitem__) == "wl-low", shares
        settings = {
            "RIGHTSIZER_PLACEMENT_SCHEDULER_NAME": SCHEDULER_NAME,
            "RIGHTSIZER_JOBS": "true",
            "RIGHTSIZER_PLACEMENT_INTERVAL_SECONDS": "2",
            "RIGHTSIZER_PLACEMENT_REFRESH_SECONDS": "1",
        }
        with serving(real_cluster, tmp_path / "serve", OWN_NS, OWN_NS, **settings) as app:
            url = database_url(app)
            add_policies(
                url,
                [{"name": "spread", "namespace": NS, "mode": "Off", "placement": "waterLevel"}],
            )

            def saved_levels() -> dict[str, float] | None:
                engine = sa.create_engine(url)
                try:
                    with engine.connect() as conn:
                        rows = conn.execute(sa.text("SELECT name, cpu_15m FROM node_levels"))
                        found = {name: level for name, level in rows if name in LEVEL_NODES}
                except sa.exc.OperationalError:
                    return None  # not migrated yet
                finally:
                    engine.dispose()
                return found if len(found) == len(LEVEL_NODES) else None

            wait_for(saved_levels, 60, "the leader's node levels", interval=1)
            time.sleep(3)  # every serving process reloads them within a second or two
            extender = f"{app.url}/scheduler"
            with water_level_scheduler(real_cluster, tmp_path, extender, str(app.verify)):
                spread = deployment("spread", 3)
                template = spread["spec"]["template"]["spec"]
                template["nodeSelector"] = LABEL
                template["tolerations"] = [TOLERATION]
                with real_cluster.api() as api:
                    client.AppsV1Api(api).create_namespaced_deployment(
                        NS, json_bodies.plain(spread)
                    )
                wait_for(lambda: len(pods_of(real_cluster, "spread")) == 3, 60, "3 pods")
                nodes = []
                for pod in pods_of(real_cluster, "spread"):
                    assert pod.spec.scheduler_name == SCHEDULER_NAME
                    bound = wait_scheduled(real_cluster, NS, pod.metadata.name, tmp_path)
                    nodes.append(bound.spec.node_name)
                assert nodes == ["wl-low"] * 3, (shares, nodes, app.log()[-3000:])
    finally:
        with real_cluster.api() as api:
            core = client.CoreV1Api(api)
            for pod in core.list_namespaced_pod(NS).items:
                if pod.spec.node_name in LEVEL_NODES:
                    core.delete_namespaced_pod(pod.metadata.name, NS, grace_period_seconds=0)
            for name in LEVEL_NODES:
                core.delete_node(name)
