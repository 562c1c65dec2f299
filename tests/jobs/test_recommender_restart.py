"""A restarted recommender (or a new leader) resumes from the checkpoints without counting again
what they hold: nothing the cluster showed the process that wrote them is fed a second time.

An OOM kill can come after a container's last CPU sample (`restored_until`): killed at a scrape, or
down in its back-off, it has no sample then. The process that wrote the checkpoint counted the kill
all the same, so a process restoring it must not add its peak again (the end-to-end restart test
found it: the restored memory histogram of an OOM-killed container had one peak more).
"""

from __future__ import annotations

from flask import Flask
from sqlalchemy import select

from app.core.workload_key import WorkloadKey
from app.jobs.recommender import RecommenderJob
from app.store.extensions import db
from app.store.models import Checkpoint
from tests.support.fixed_cluster import FixedCluster
from tests.support.fixed_cluster import cache_pod as pod
from tests.support.recommender_runs import recommender_job

CACHE = WorkloadKey("shop", "StatefulSet", "cache")
SCRAPE = "2026-01-01T00:00:00Z"  # the metrics' timestamp: the container's last sample


def fixed_cluster() -> FixedCluster:
    return FixedCluster(CACHE, "redis", {"cpu": "50m", "memory": "150Mi"}, SCRAPE)


def job(app: Flask, cluster: FixedCluster) -> RecommenderJob:
    return recommender_job(app, cluster, lambda: 1767225660.0)


def memory_checkpoint(app: Flask) -> tuple[dict[str, int], float]:
    with app.app_context():
        row = db.session.scalars(select(Checkpoint)).one()
        return dict(row.memory_buckets), row.memory_total_weight


def test_a_restart_does_not_count_again_a_kill_after_the_last_sample(app: Flask) -> None:
    cluster = fixed_cluster()
    cluster.pods.live = [pod(1, "2026-01-01T00:00:10Z")]  # killed 10 s after its last sample
    first = job(app, cluster)
    assert ", 1 OOM kills," in first.run_once(lambda: True)
    saved = memory_checkpoint(app)

    restarted = job(app, cluster)  # the same cluster, nothing new in it
    summary = restarted.run_once(lambda: True)
    assert ", 0 samples, 0 OOM kills," in summary, summary
    assert memory_checkpoint(app) == saved  # written back as restored: no second peak

    # A kill after the restore is new: counted.
    cluster.pods.live = [pod(2, "2026-01-01T00:00:40Z")]
    assert ", 1 OOM kills," in restarted.run_once(lambda: True)
    assert memory_checkpoint(app) != saved
