"""The recommender's last step writes its cluster's totals for the fleet view
(app.jobs.cluster_totals): after each run, as of the run's time, equal to the rows summed the
old way; a failed write is logged and fails nothing of the run."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from sqlalchemy import func, select

from app.kube.cluster import ClusterView
from app.settings import settings
from app.simulator.simulator import Simulator
from app.store.cluster_totals import load_totals
from app.store.extensions import db
from app.store.fleet import fleet
from app.store.models import Recommendation
from app.store.policies import InvalidPolicyLog
from app.store.savings import Scoper
from tests.support.recommender_runs import deployment, make_job, step

SCENARIO = {
    "nodes": [{"namePrefix": "node", "count": 2, "cpu": "8", "memory": "32Gi"}],
    "namespaces": [{"name": "shop"}],
    "workloads": [
        deployment("shop", "web", replicas=3),
        deployment("shop", "api", cpu=0.9),  # asks 500m: short
    ],
}


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return SCENARIO


def _scoper() -> Scoper:
    return Scoper.as_configured(db.session, InvalidPolicyLog("test"), settings())


def test_each_run_writes_the_totals_the_rows_sum_to(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    job = make_job(app, cluster, sim)
    for _ in range(2):
        step(sim, job)
        with app.app_context():
            (stored,) = load_totals(db.session).values()
            summed = fleet(db.session, _scoper, stored=False).clusters[0]
            db.session.remove()
        assert stored.as_of.replace(tzinfo=UTC) == datetime.fromtimestamp(sim.now(), UTC)
        assert (stored.figures, stored.last_update) == (summed.figures, summed.last_update)
        assert (stored.figures.workloads, stored.figures.pods) == (2, 5)


def test_a_failed_totals_write_is_logged_and_the_run_saves_its_recommendations(
    app: Flask, cluster: ClusterView, sim: Simulator, caplog: pytest.LogCaptureFixture
) -> None:
    with app.app_context():
        db.session.execute(sa.text("DROP TABLE cluster_totals"))  # every write fails
        db.session.commit()
    job = make_job(app, cluster, sim)
    with caplog.at_level(logging.ERROR, logger="app.jobs.cluster_totals"):
        summary = step(sim, job)
    assert "saved 2, failed 0" in summary
    assert "could not write the cluster's totals" in caplog.text
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(Recommendation)) == 2
