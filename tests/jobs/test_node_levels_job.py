"""The leader's node-levels job: NodeMetrics folded into the saved levels, per node."""

from __future__ import annotations

import math
from typing import Any

from flask import Flask

from app.core.nodes import NodeView
from app.jobs.node_levels import NodeLevelsJob
from app.store.extensions import db
from app.store.node_levels import load_node_levels
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
