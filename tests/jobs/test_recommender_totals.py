"""The recommender's last step writes its cluster's totals for the fleet view
(app.jobs.cluster_totals): at most every 5 minutes, as of the run's time, equal to the rows
summed the old way; a failed write is logged and fails nothing of the run."""

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
from app.store.cluster_totals import Totals, load_totals
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


def test_runs_write_the_totals_the_rows_sum_to_at_most_every_five_minutes(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    job = make_job(app, cluster, sim)
    written: list[bool] = []
    previous: Totals | None = None
    for seconds in (60, 60, 240, 60):  # writes at the first run, then 5 minutes after it
        step(sim, job, seconds)
        with app.app_context():
            (stored,) = load_totals(db.session).values()
            summed = fleet(db.session, _scoper, stored=False).clusters[0]
            db.session.remove()
        written.append(stored.as_of.replace(tzinfo=UTC) == datetime.fromtimestamp(sim.now(), UTC))
        if written[-1]:  # as the rows sum to at that run
            assert (stored.figures, stored.last_update) == (summed.figures, summed.last_update)
        else:  # the last ones stored, as of their own time
            assert stored == previous
        assert (stored.figures.workloads, stored.figures.pods) == (2, 5)
        previous = stored
    assert written == [True, False, True, False]
    job.forget()  # a new leadership term: its first run stores them
    step(sim, job)
    with app.app_context():
        (stored,) = load_totals(db.session).values()
    assert stored.as_of.replace(tzinfo=UTC) == datetime.fromtimestamp(sim.now(), UTC)


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
