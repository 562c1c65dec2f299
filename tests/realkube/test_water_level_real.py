"""The water-level scheduler against a real control plane: a second real kube-scheduler, started
with the KubeSchedulerConfiguration the Helm chart renders, schedules the pods that name it
(spec.schedulerName) through rightsizer's extender, and is `ignorable` about it: with the
extender unreachable, pods are still scheduled."""

from __future__ import annotations

from pathlib import Path

from kubernetes import client

from app.serving.certs import ensure
from tests.realkube.cluster import RealCluster, free_port
from tests.realkube.scheduler import (
    SCHEDULER_NAME,
    scheduled_by,
    wait_scheduled,
    water_level_scheduler,
)

NS = "water-level"


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
