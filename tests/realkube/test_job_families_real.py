"""Job families (issue 47 item 4) against the real control plane: the real Job controller creates
the pods of two bare Jobs of one family (`rightsizer.io/job-family: etl`, each Job named anew),
kube-apiserver calls rightsizer's webhook, and both come out with the family's recommendation,
which no Job of them ever had under its own name."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.core.workload_key import WorkloadKey
from tests.realkube.cluster import RealCluster
from tests.realkube.serve import add_policies, database_url, seed_learned, serving
from tests.support.json_bodies import plain
from tests.support.processes import AppProcess, recommendations, wait_for

NS, OWN_NS = "batch-jobs", "rightsizer-jobs"


def seed(url: str) -> None:
    """Two hours of samples of the family etl's container `work` saved as its recommendation,
    and a policy of the namespace that applies it at admission (Initial)."""
    seed_learned(url, WorkloadKey(NS, "JobFamily", "etl"), "etl-0", "work", 0.3, 4e8)
    add_policies(url, [{"name": "jobs", "namespace": NS, "mode": "Initial", "target": None}])


def job(name: str) -> dict[str, Any]:
    container = {
        "name": "work",
        "image": "registry.k8s.io/pause:3.10",
        "resources": {"requests": {"cpu": "2", "memory": "2Gi"}},
    }
    return {
        "metadata": {"name": name},
        "spec": {
            "template": {
                "metadata": {"labels": {"rightsizer.io/job-family": "etl"}},
                "spec": {"restartPolicy": "Never", "containers": [container]},
            }
        },
    }


def job_requests(cluster: RealCluster, name: str) -> dict[str, str] | None:
    with cluster.api() as api:
        pods = client.CoreV1Api(api).list_namespaced_pod(NS, label_selector=f"job-name={name}")
    return pods.items[0].spec.containers[0].resources.requests if pods.items else None


@pytest.fixture
def jobs_app(real_cluster: RealCluster, tmp_path: Path) -> Iterator[AppProcess]:
    with real_cluster.api() as api:
        try:
            client.CoreV1Api(api).create_namespace(plain({"metadata": {"name": NS}}))
        except ApiException as e:
            if e.status != 409:  # the cluster is the session's: an earlier test made it
                raise
    with serving(real_cluster, tmp_path, OWN_NS, "rightsizer-jobs") as app:
        seed(database_url(app))
        yield app


def test_each_new_job_of_a_family_is_sized_by_the_family_s_recommendation(
    real_cluster: RealCluster, jobs_app: AppProcess
) -> None:
    target = wait_for(
        lambda: recommendations(jobs_app).get((NS, "JobFamily", "etl", "work")),
        30,
        "the seeded recommendation",
    )["target"]
    assert target != {"cpu": "2", "memory": "2Gi"}
    time.sleep(2)  # the webhook's cache refreshes every second
    for name in ("etl-20240701", "etl-20240702"):
        with real_cluster.api() as api:
            client.BatchV1Api(api).create_namespaced_job(NS, plain(job(name)))
        sized = wait_for(lambda n=name: job_requests(real_cluster, n), 60, f"the pod of {name}")
        assert sized == target, (name, sized, target, jobs_app.log()[-3000:])
