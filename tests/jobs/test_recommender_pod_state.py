"""Per-pod state of the recommender job does not outlive its pod: under a rollout every pod is
new, and what the job keeps per pod (restart counts for OOM detection, memory windows) goes with
the pods that are gone. It grew by every pod ever seen before (found by the churn soak)."""

from __future__ import annotations

from typing import Any

from flask import Flask

from app.core.pods import PodView
from app.core.workload_key import WorkloadKey
from tests.support.fixed_cluster import FixedCluster
from tests.support.recommender_runs import recommender_job

WEB = WorkloadKey("shop", "Deployment", "web")


def pod(name: str, uid: str, restarts: int = 1, killed: bool = False) -> PodView:
    status: dict[str, Any] = {"name": "app", "restartCount": restarts}
    if killed:
        status["lastState"] = {
            "terminated": {"reason": "OOMKilled", "finishedAt": "2026-01-01T00:00:10Z"}
        }
    return PodView.parse(
        {
            "metadata": {"name": name, "namespace": "shop", "uid": uid},
            "spec": {
                "nodeName": "n1",
                "containers": [
                    {"name": "app", "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}}}
                ],
            },
            "status": {
                "phase": "Running",
                "containerStatuses": [status],
            },
        }
    )


def fixed_cluster() -> FixedCluster:
    return FixedCluster(WEB, "app", {"cpu": "50m", "memory": "100Mi"}, "2026-01-01T00:00:00Z")


def test_a_rollout_leaves_no_state_of_the_pods_it_replaced(app: Flask) -> None:
    cluster = fixed_cluster()
    job = recommender_job(app, cluster, lambda: 1767225600.0)
    for generation in range(5):
        cluster.pods.live = [
            pod(f"web-{generation}-{i}", f"uid-{generation}-{i}") for i in range(3)
        ]
        job.run_once(lambda: True)
        live = {(p.namespace, p.uid) for p in cluster.pods.live}
        assert {k[:2] for k in job.restarts_seen} == live
        assert {(w.namespace, name) for w, name, *_ in job.model.pods} <= {
            ("shop", p.name) for p in cluster.pods.live
        }


def test_pods_that_never_restarted_leave_no_count_and_their_first_kill_counts(app: Flask) -> None:
    """A pod whose containers never restarted has no OOM kill to show: no restart count is kept
    for it (at 150,000 pods, 300,000 entries rewritten each run). When it is killed later, the
    kill counts as it did when its count of 0 was kept."""
    cluster = fixed_cluster()
    job = recommender_job(app, cluster, lambda: 1767225600.0)
    cluster.pods.live = [pod(f"web-{i}", f"uid-{i}", restarts=0) for i in range(3)]
    assert ", 0 OOM kills," in job.run_once(lambda: True)
    assert job.restarts_seen == {}
    cluster.pods.live = [pod("web-0", "uid-0", restarts=1, killed=True)] + [
        pod(f"web-{i}", f"uid-{i}", restarts=0) for i in (1, 2)
    ]
    assert ", 1 OOM kills," in job.run_once(lambda: True)
    assert job.restarts_seen == {("shop", "uid-0", "app"): 1}
    assert ", 0 OOM kills," in job.run_once(lambda: True)  # the same kill, seen again


def test_a_pod_without_a_uid_is_still_watched_by_name(app: Flask) -> None:
    """Keyed by name when it has no uid: a pod of that name again, not restarted, drops its
    count, so the new pod's first kill counts."""
    cluster = fixed_cluster()
    job = recommender_job(app, cluster, lambda: 1767225600.0)
    cluster.pods.live = [pod("web-0", "", restarts=2)]
    job.run_once(lambda: True)
    assert job.restarts_seen == {("shop", "web-0", "app"): 2}
    cluster.pods.live = [pod("web-0", "", restarts=0)]  # recreated under the same name
    job.run_once(lambda: True)
    assert job.restarts_seen == {}
    cluster.pods.live = [pod("web-0", "", restarts=1, killed=True)]
    assert ", 1 OOM kills," in job.run_once(lambda: True)


def test_the_pods_are_fed_to_their_new_workload_once_their_owners_moved(app: Flask) -> None:
    """The owner memo carries a run's answers to the next only while the owners version is
    unchanged: once it moved, the same pod views are walked again and fed to their new
    workload."""
    cluster = fixed_cluster()
    job = recommender_job(app, cluster, lambda: 1767225600.0)
    cluster.pods.live = [pod(f"web-{i}", f"uid-{i}", restarts=0) for i in range(3)]
    job.run_once(lambda: True)
    assert set(job.model.rows) == {WEB}
    other = WorkloadKey("shop", "Rollout.argoproj.io", "web")
    cluster.workload, cluster.owners_moved = other, cluster.owners_moved + 1
    job.run_once(lambda: True)
    assert int(job.model.count[job.model.rows[other]["app"]]) == 3
