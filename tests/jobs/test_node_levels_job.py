"""The leader's node-levels job: NodeMetrics folded into the saved levels, per node."""

from __future__ import annotations

import math
from typing import Any

from flask import Flask

from app.core.nodes import NodeView
from app.jobs.node_levels import NodeLevelsJob
from app.store.extensions import db
from app.store.node_levels import load_node_levels
from app.store.node_spread import load_spread
from app.store.session import app_sessions

GI = 1 << 30


class Synced:
    def wait_synced(self, timeout: float) -> bool:
        return True


class FakeCluster:
    def __init__(self) -> None:
        self.nodes = Synced()
        self.metrics: list[dict[str, Any]] = []

    def node_views(self) -> list[NodeView]:
        return [
            NodeView("a", (), False, True, (), 4000, 8 * GI),
            NodeView("b", (), False, True, (), 0, 0),  # no allocatable: skipped
        ]

    def node_metrics(self) -> list[dict[str, Any]]:
        return self.metrics


def metrics(name: str, cpu: str, memory: str, at: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "timestamp": at, "usage": {"cpu": cpu, "memory": memory}}


def test_samples_fold_into_saved_levels(app: Flask) -> None:
    cluster = FakeCluster()
    job = NodeLevelsJob(app_sessions(app), cluster, 30.0)  # type: ignore[arg-type]
    assert "no NodeMetrics" in job.run_once(lambda: True)
    cluster.metrics = [
        metrics("a", "1", "2Gi", "2026-12-06T10:00:00Z"),
        metrics("b", "1", "1Gi", "2026-12-06T10:00:00Z"),
        {"metadata": {"name": "broken"}, "usage": {"cpu": "x"}},
    ]
    assert job.run_once(lambda: True).startswith("1 nodes' levels saved")
    with app.app_context():
        [a] = load_node_levels(db.session)
    assert a.cpu == (0.25, 0.25, 0.25) and a.memory == (0.25, 0.25, 0.25)
    cluster.metrics = [metrics("a", "4", "2Gi", "2026-12-06T10:15:00Z")]  # full, 15 min later
    job.run_once(lambda: True)
    with app.app_context():
        [a] = load_node_levels(db.session)
    assert abs(a.cpu[0] - (0.25 + 0.75 * (1 - math.exp(-1)))) < 1e-9
    assert a.cpu[0] > a.cpu[1] > a.cpu[2] > 0.25


def test_nothing_saved_when_no_longer_leader(app: Flask) -> None:
    cluster = FakeCluster()
    cluster.metrics = [metrics("a", "1", "2Gi", "2026-12-06T10:00:00Z")]
    job = NodeLevelsJob(app_sessions(app), cluster, 30.0)  # type: ignore[arg-type]
    assert "no longer leader" in job.run_once(lambda: False)
    with app.app_context():
        assert load_node_levels(db.session) == []


class TwoNodes(FakeCluster):
    def node_views(self) -> list[NodeView]:
        return [
            NodeView("a", (), False, True, (), 4000, 8 * GI),
            NodeView("b", (), False, True, (), 8000, 8 * GI),
        ]


def test_the_clusters_spread_is_recorded_every_five_minutes_for_a_week(app: Flask) -> None:
    clock = [1_000_000.0]
    cluster = TwoNodes()
    cluster.metrics = [
        metrics("a", "3", "2Gi", "2026-12-06T10:00:00Z"),  # 75% CPU, 25% memory
        metrics("b", "2", "6Gi", "2026-12-06T10:00:00Z"),  # 25% CPU, 75% memory
    ]
    job = NodeLevelsJob(app_sessions(app), cluster, 30.0, clock=lambda: clock[0])  # type: ignore[arg-type]
    job.run_once(lambda: True)
    clock[0] += 60  # a minute later: no second point
    job.run_once(lambda: True)
    with app.app_context():
        [(at, point)] = load_spread(db.session)
    assert at == 1_000_000.0 and point.nodes == 2
    assert point.cpu_spread == 0.5 and point.memory_spread == 0.5 and point.cpu_hottest == 0.75
    assert point.cpu_deviation == 0.25
    clock[0] += 300
    job.run_once(lambda: True)
    clock[0] += 8 * 86400  # a week later the first two are gone
    job.run_once(lambda: True)
    with app.app_context():
        assert [at for at, _ in load_spread(db.session)] == [clock[0]]
        assert load_spread(db.session, since=clock[0] + 1) == []
