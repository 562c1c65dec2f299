"""Per-pod state of the recommender job does not outlive its pod: under a rollout every pod is
new, and what the job keeps per pod (restart counts for OOM detection, memory windows) goes with
the pods that are gone. It grew by every pod ever seen before (found by the churn soak)."""

from __future__ import annotations

from flask import Flask

from app.core.pods import PodView
from app.core.recommend.model import WorkloadKey
from app.jobs.recommender import RecommenderJob, RecommenderOptions
from tests.support.fixed_cluster import FixedCluster

WEB = WorkloadKey("shop", "Deployment", "web")


def pod(name: str, uid: str) -> PodView:
    return PodView.parse(
        {
            "metadata": {"name": name, "namespace": "shop", "uid": uid},
            "spec": {
                "nodeName": "n1",
                "containers": [{"name": "app", "resources": {"requests": {"cpu": "100m"}}}],
            },
            "status": {
                "phase": "Running",
                "containerStatuses": [{"name": "app", "restartCount": 0}],
            },
        }
    )


def fixed_cluster() -> FixedCluster:
    return FixedCluster(WEB, "app", {"cpu": "50m", "memory": "100Mi"}, "2026-01-01T00:00:00Z")


def test_a_rollout_leaves_no_state_of_the_pods_it_replaced(app: Flask) -> None:
    cluster = fixed_cluster()
    job = RecommenderJob(app, cluster, RecommenderOptions(), clock=lambda: 1767225600.0)  # type: ignore[arg-type]
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
