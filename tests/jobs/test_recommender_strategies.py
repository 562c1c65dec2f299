"""The recommender job recommends with each workload's policy's strategy, says how, and keeps the
daily usage the window strategies read across a restart (checkpoints)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.kube.cluster import ClusterView
from app.simulator.simulator import Simulator
from app.store.extensions import db
from app.store.models import Checkpoint, Recommendation
from app.store.models import Policy as PolicyRow
from tests.support.recommender_runs import add_policy, deployment, make_job, step

MIB = 2**20


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return {
        "nodes": [{"namePrefix": "node", "count": 2, "cpu": "8", "memory": "32Gi"}],
        "namespaces": [{"name": "shop"}],
        "workloads": [deployment("shop", "web"), deployment("shop", "api")],
    }


def rows(app: Flask) -> dict[str, Recommendation]:
    with app.app_context():
        return {r.name: r for r in db.session.scalars(select(Recommendation))}


def test_each_workload_gets_its_policys_strategy_and_the_reason(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    add_policy(
        app,
        "web",
        "shop",
        "Deployment",
        "web",
        recommender="krr-simple",
        recommender_params={"pointsRequired": 4, "cpuMin": 0, "memMin": 0},
    )
    job = make_job(app, cluster, sim)
    step(sim, job)
    assert "web" not in rows(app)  # krr-simple: not enough data yet (2 pods, 1 sample each)
    step(sim, job)
    got = rows(app)
    web, api = got["web"], got["api"]
    assert web.reason is not None and web.reason.startswith("krr-simple over 1 days: CPU p95 of 4")
    assert "limit = request" in web.reason
    assert api.reason is not None and api.reason.startswith("vpa: CPU p90 of usage")
    # KRR's memory: the largest sample + 15%, in whole MiB; VPA's is the p90 of peaks + 15%
    row = job.model.rows[next(w for w in job.model.rows if w.name == "web")]["app"]
    peak = job.model.daily[row].window(14).memory.maximum
    assert web.target_memory == math.ceil(peak * 1.15 / MIB) * MIB


def test_daily_usage_survives_a_restart_through_the_checkpoints(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    job = make_job(app, cluster, sim)
    for _ in range(3):
        step(sim, job)
    with app.app_context():
        saved = {c.name: c.daily for c in db.session.scalars(select(Checkpoint))}
    assert saved["web"] and saved["web"][0]["cpu"]  # counts per bucket, per day
    before = {w.name: job.model.daily[r["app"]].window(14) for w, r in job.model.rows.items()}
    job.forget()  # a new leadership term: the model starts over from the checkpoints
    step(sim, job)
    after = {w.name: job.model.daily[r["app"]].window(14) for w, r in job.model.rows.items()}
    for name in ("web", "api"):
        assert after[name].cpu.count == before[name].cpu.count + 2  # 2 pods, one more sample


def test_a_policys_vpa_parameters_apply_to_its_workload_only(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    """VPA's flags as one policy's recommenderParams (issue 19): web's pod minimum, rounding,
    memory interval and half-life are the policy's, api keeps the global settings; a later change
    of the interval is said in the reason while the history from before weighs."""
    params = {
        "podMinCpuMillicores": 2000,
        "roundMemoryBytes": 100 * MIB,
        "memoryAggregationIntervalSeconds": 120,
        "cpuHistogramDecayHalfLifeSeconds": 3600,
    }
    add_policy(
        app, "web", "shop", "Deployment", "web", recommender="vpa", recommender_params=params
    )
    job = make_job(app, cluster, sim)
    for _ in range(3):
        step(sim, job)
    got = rows(app)
    web, api = got["web"], got["api"]
    assert web.target_cpu == 2000  # the policy's pod minimum (one container per pod)
    assert web.target_memory % (100 * MIB) == 0
    assert api.target_cpu < 2000 and api.target_memory % (100 * MIB) != 0
    keys = {w.name: w for w in job.model.rows}
    assert job.model.cpu.hl[job.model.rows[keys["web"]]["app"]] == 3600
    assert job.model.cpu.hl[job.model.rows[keys["api"]]["app"]] == 86400
    assert job.model.tuning(keys["web"]).settings.memory_aggregation_interval_seconds == 120
    assert job.model.tuning(keys["api"]) == job.model.default_tuning
    # memoryAggregationIntervalCount unset: the idle time is the interval x 691200 / 86400
    assert job.model.tuning(keys["web"]).idle_after == 120 * 8

    with app.app_context():
        row = db.session.scalars(select(PolicyRow).where(PolicyRow.name == "web")).one()
        row.recommender_params = {**params, "memoryAggregationIntervalSeconds": 60}
        db.session.commit()
    step(sim, job)
    reason = rows(app)["web"].reason
    assert reason is not None and "was gathered with memory peaks per 120s (now 60s)" in reason
    assert "gathered with" not in (rows(app)["api"].reason or "")
