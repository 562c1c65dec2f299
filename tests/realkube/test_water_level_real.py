"""The water-level scheduler against a real control plane: a second real kube-scheduler, started
with the KubeSchedulerConfiguration the Helm chart renders, schedules the pods that name it
(spec.schedulerName), which rightsizer's webhook sets for the pods of `placement: waterLevel`
policies, through rightsizer's extender, and is `ignorable` about it: with the extender
unreachable, pods are still scheduled."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from kubernetes import client

from app.serving.certs import ensure
from app.webhook.placement import PLACEMENT_ANNOTATION
from tests.realkube.cluster import RealCluster, free_port
from tests.realkube.scheduler import (
    SCHEDULER_NAME,
    scheduled_by,
    wait_scheduled,
    water_level_scheduler,
)
from tests.realkube.serve import add_policies, database_url, serving
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
            client.CoreV1Api(api).create_namespace({"metadata": {"name": name}})
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
                NS, pause_pod("unreachable", SCHEDULER_NAME)
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
                apps.create_namespaced_deployment(NS, deployment("placed", 2))
                apps.create_namespaced_deployment(NS, deployment("plain", 1))
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
