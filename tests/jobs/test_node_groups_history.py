"""A DaemonSet sized per node group starts with its groups' history: the usage loaded from
Prometheus at start (app.jobs.history) feeds each live pod's node group too, not only the
DaemonSet-wide model."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.jobs.history import PrometheusHistory
from app.kube.cluster import ClusterView
from app.simulator.simulator import Simulator
from app.store.extensions import db
from app.store.models import NodeGroupRecommendation
from tests.support.prometheus import history_settings
from tests.support.recommender_runs import add_policy, make_job, step

TYPE = "node.kubernetes.io/instance-type"
STEP = 300.0


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    usage = {
        "cpu": {"base": 0.05},
        "memory": {"base": "300Mi"},
        "nodeFactors": {"label": TYPE, "values": {"m5.4xlarge": {"cpu": 4, "memory": 3}}},
    }
    agent = {
        "kind": "DaemonSet",
        "namespace": "ops",
        "name": "agent",
        "containers": [{"name": "agent", "requests": {"cpu": "100m"}, "usage": usage}],
    }
    return {
        "historyDays": 1,
        "nodes": [
            {"namePrefix": "small", "count": 1, "labels": {TYPE: "m5.large"}},
            {"namePrefix": "large", "count": 1, "labels": {TYPE: "m5.4xlarge"}},
        ],
        "namespaces": [{"name": "ops"}],
        "workloads": [agent],
    }


def test_the_loaded_history_feeds_each_pods_node_group(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    add_policy(app, "agent", "ops", "DaemonSet", "agent", node_group_label=TYPE)
    job = make_job(app, cluster, sim)
    job.history = PrometheusHistory(history_settings(sim.url, STEP, 86400.0), clock=sim.now)
    step(sim, job)
    with app.app_context():
        rows = {r.node_group: r for r in db.session.scalars(select(NodeGroupRecommendation))}
        db.session.expunge_all()
    assert set(rows) == {"m5.large", "m5.4xlarge"}
    small, large = rows["m5.large"], rows["m5.4xlarge"]
    day = 86400 / STEP
    assert day - 2 <= small.sample_count - 1 <= day + 2  # a day of history, then this run's own
    assert large.sample_count == small.sample_count
    assert small.target_cpu and large.target_cpu and large.target_cpu > 3 * small.target_cpu
    assert small.first_sample_at is not None and small.last_sample_at is not None
    assert (small.last_sample_at - small.first_sample_at).total_seconds() >= 86400 - 2 * STEP
