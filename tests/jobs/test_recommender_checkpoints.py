"""Which checkpoints a recommender run writes (RIGHTSIZER_CHECKPOINT_INTERVAL_SECONDS).

A container's first checkpoint is written in the run that first sees it; after that each run
rewrites the ones written longest ago, as VPA's checkpoint writer does, enough for each to be
rewritten once per checkpoint interval (at least 10 a run, VPA's --min-checkpoints). Rewriting
every one every run was the largest table write of a run at scale. The recommendation rows are
written every run all the same, with the sample counts of the model, not of the checkpoint.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from kubernetes import client
from sqlalchemy import select

from app.core.recommend.checkpoint import MIN_CHECKPOINTS_PER_RUN
from app.kube.cluster import ClusterView
from app.simulator.simulator import Simulator
from app.store.extensions import db
from app.store.models import Checkpoint, Recommendation
from app.store.session import to_unix
from tests.support.json_bodies import plain
from tests.support.kubectl import deployment as manifest
from tests.support.recommender_runs import deployment, make_job, step, wait_cache_caught_up

WORKLOADS = 3 * MIN_CHECKPOINTS_PER_RUN  # three runs' worth at the minimum


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return {
        "nodes": [{"namePrefix": "node", "count": 2, "cpu": "32", "memory": "128Gi"}],
        "namespaces": [{"name": "shop"}],
        "workloads": [deployment("shop", f"w-{i:02d}", replicas=1) for i in range(WORKLOADS)],
    }


def written_at(app: Flask) -> dict[str, float]:
    """Each checkpoint row's updated_at (unix seconds), by workload name."""
    with app.app_context():
        rows = db.session.execute(select(Checkpoint.name, Checkpoint.updated_at)).all()
        db.session.remove()
    return {name: to_unix(at) for name, at in rows}


def sample_counts(app: Flask, table: Any) -> dict[str, int]:
    with app.app_context():
        rows = db.session.execute(select(table.name, table.sample_count)).all()
        db.session.remove()
    return dict(rows)


def test_checkpoints_are_rewritten_in_turn_the_oldest_first(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    job = make_job(app, cluster, sim, checkpoint_interval_seconds=600)
    step(sim, job)
    first = written_at(app)
    assert len(first) == WORKLOADS and len(set(first.values())) == 1  # all new: all written
    rounds = []
    for _ in range(3):
        before = written_at(app)
        step(sim, job)
        after = written_at(app)
        rounds.append({n for n in after if after[n] != before[n]})
    # 30 containers, one run in ten of the interval: 3 a run, raised to VPA's minimum of 10;
    # the three runs rewrite three different tens, so every one is rewritten once
    assert [len(r) for r in rounds] == [MIN_CHECKPOINTS_PER_RUN] * 3
    assert set.union(*rounds) == set(first)
    # the next run starts over with the ones rewritten longest ago: the first ten
    before = written_at(app)
    step(sim, job)
    after = written_at(app)
    assert {n for n in after if after[n] != before[n]} == rounds[0]
    # recommendation rows still say the model's sample count, which the checkpoint rows of the
    # containers not rewritten this run lag behind
    recs, cps = sample_counts(app, Recommendation), sample_counts(app, Checkpoint)
    assert all(recs[n] > cps[n] for n in set(recs) - rounds[0])
    assert all(recs[n] == cps[n] for n in rounds[0])


def test_a_new_container_gets_its_checkpoint_in_its_first_run(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    job = make_job(app, cluster, sim, checkpoint_interval_seconds=600)
    step(sim, job)
    client.AppsV1Api(sim.api_client()).create_namespaced_deployment(
        "shop", plain(manifest("late", replicas=1, namespace="shop"))
    )
    sim.settle()
    wait_cache_caught_up(sim, cluster)
    before = written_at(app)
    step(sim, job)
    after = written_at(app)
    assert "late" not in before and "late" in after
    changed = {n for n in after if after.get(n) != before.get(n)}
    assert len(changed) == MIN_CHECKPOINTS_PER_RUN + 1  # the new one beside the ten in turn


def test_an_interval_no_longer_than_the_runs_rewrites_every_checkpoint_every_run(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    job = make_job(app, cluster, sim, checkpoint_interval_seconds=60)
    step(sim, job)
    step(sim, job)
    times = written_at(app)
    assert len(times) == WORKLOADS and len(set(times.values())) == 1  # all, in the second run


def test_a_restarted_recommender_rewrites_the_restored_checkpoints_in_turn(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    step(sim, make_job(app, cluster, sim, checkpoint_interval_seconds=600))
    first = written_at(app)
    restarted = make_job(app, cluster, sim, checkpoint_interval_seconds=600)
    step(sim, restarted)
    after = written_at(app)
    # restored as written: only the first ten in turn, not all thirty again
    assert len({n for n in after if after[n] != first[n]}) == MIN_CHECKPOINTS_PER_RUN
    assert len(restarted.checkpointed) == WORKLOADS
