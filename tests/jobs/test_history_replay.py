"""Usage history loaded from Prometheus at start becomes the recommendation history: a point an
hour over the days loaded (why the dashboard's "Recommendation over time" had one point although
8 days of history were loaded: the samples were fed at once and only the run's own point was
written). The simulator serves the Prometheus query_range the loader reads."""

from __future__ import annotations

from datetime import UTC
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.jobs.history import PrometheusHistory
from app.kube.cluster import ClusterView
from app.simulator.simulator import Simulator
from app.store.extensions import db
from app.store.history import HISTORY_STEP
from app.store.models import RecommendationPoint
from tests.support.prometheus import history_settings
from tests.support.recommender_runs import deployment, make_job, step

DAYS = 2
SCENARIO: dict[str, Any] = {
    "historyDays": DAYS,
    "nodes": [{"namePrefix": "node", "count": 2, "cpu": "8", "memory": "32Gi"}],
    "namespaces": [{"name": "shop"}],
    "workloads": [deployment("shop", "frontend", replicas=2, cpu=0.3)],
}


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return SCENARIO


def points(app: Flask) -> list[RecommendationPoint]:
    q = select(RecommendationPoint).order_by(RecommendationPoint.time)
    return list(db.session.scalars(q))


def test_loaded_history_fills_the_recommendation_history_hour_by_hour(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    step_seconds = 300.0
    history = PrometheusHistory(
        history_settings(sim.url, step_seconds, DAYS * 86400.0), clock=sim.now
    )
    job = make_job(app, cluster, sim)
    job.history = history
    step(sim, job)
    got = points(app)
    hours = HISTORY_STEP.total_seconds()
    # one point an hour over the 2 days, at each hour boundary the samples crossed (and no
    # point of the run itself yet: the newest replayed one is less than an hour old)
    assert DAYS * 24 - 2 <= len(got) <= DAYS * 24 + 1
    times = [p.time.replace(tzinfo=p.time.tzinfo or UTC).timestamp() for p in got]
    assert all(t % hours == 0 for t in times[:-1])
    assert sim.now() - DAYS * 86400 <= times[0] <= sim.now() - DAYS * 86400 + 2 * hours
    assert {p.container for p in got} == {"app"}
    for p in got[:-1]:
        assert p.current_cpu_request == 500 and p.current_memory_request == 512 * 2**20
        assert p.usage_cpu_p50 is not None and p.usage_cpu_p90 is not None
        assert 0 < p.usage_cpu_p50 <= p.usage_cpu_p90
        assert p.usage_memory_p50 is not None and p.usage_memory_p90 is not None
        assert p.target_cpu > 0
    # the running recommender adds its own points after the replayed ones, an hour apart: one
    # within the hour after the last replayed one, then none for the next 59 minutes
    for _ in range(61):
        step(sim, job)
        if len(points(app)) > len(got):
            break
    later = points(app)
    assert len(later) == len(got) + 1
    assert later[-1].usage_cpu_p50 is not None  # the samples of the runs since the last point
    for _ in range(59):
        step(sim, job)
    assert len(points(app)) == len(later)


def test_a_second_start_does_not_replay_again(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    """Workloads with a checkpoint get no history (and so no second set of points)."""
    job = make_job(app, cluster, sim)
    job.history = PrometheusHistory(history_settings(sim.url, 300.0, DAYS * 86400.0), clock=sim.now)
    step(sim, job)
    first = [(p.container, p.time) for p in points(app)]
    assert len(first) >= DAYS * 24 - 2
    again = make_job(app, cluster, sim)
    again.history = PrometheusHistory(
        history_settings(sim.url, 300.0, DAYS * 86400.0), clock=sim.now
    )
    step(sim, again)
    now = [(p.container, p.time) for p in points(app)]
    assert now[: len(first)] == first  # nothing replayed twice; at most the run's own point
    assert len(now) <= len(first) + 1
