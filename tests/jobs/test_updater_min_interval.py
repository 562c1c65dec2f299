"""The policy's `observationWindow.minIntervalSeconds` (docs/policies.md, "Observation window")
applied by the real updater job against the simulated cluster (1.36: containers and pod-level
resources resized in place), through the official client, with the job's clock moved by the
test: the pods of the current change go on being updated, new values arriving before the
interval are held back (the workload's HeldBackByObservationWindow condition and the run's
summary say so), and acted on once the interval has passed from the start of the last change."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import pytest
from flask import Flask

from app.core.sizing.plan import POD_VIEW
from app.jobs.updater import UpdaterJob
from app.kube.cluster import ClusterView
from app.simulator.simulator import Simulator
from app.store.conditions import workload_conditions
from app.store.extensions import db
from app.store.models import AuditEvent, Recommendation
from tests.support.updater_runs import (
    LEADER,
    NS,
    Clock,
    audit,
    deployment,
    make_job,
    policy,
    recommend,
    server_pods,
    settled,
    shared,
)

MI = 2**20
INTERVAL = 600
WINDOW = {"minIntervalSeconds": INTERVAL}
HELD = "HeldBackByObservationWindow"


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return {
        "nodes": [{"namePrefix": "node", "count": 2, "cpu": "4", "memory": "16Gi"}],
        "namespaces": [{"name": NS}],
        "workloads": [deployment("web", 2)],  # 1 CPU, 1Gi per pod
    }


@pytest.fixture(scope="module")
def sim_options() -> dict[str, Any]:
    return {"version": "1.36"}  # resizes containers and pod-level resources in place


def retarget(app: Flask, name: str, cpu: int, memory: int, spread: float = 0.5) -> None:
    """A new recommendation for container `app` of Deployment `name`, as the recommender
    writes it: the stored row's values replaced."""
    with app.app_context():
        row = db.session.query(Recommendation).filter_by(name=name, container="app").one()
        row.target_cpu = row.uncapped_target_cpu = cpu
        row.target_memory = row.uncapped_target_memory = memory
        row.lower_bound_cpu, row.upper_bound_cpu = int(cpu * (1 - spread)), int(cpu * (1 + spread))
        row.lower_bound_memory = int(memory * (1 - spread))
        row.upper_bound_memory = int(memory * (1 + spread))
        row.updated_at = row.last_sample_at = datetime.now(UTC)
        db.session.commit()


def conditions(app: Flask, name: str) -> dict[str, tuple[str, str]]:
    """The stored conditions of Deployment `name`: type -> (reason, message)."""
    with app.app_context():
        found = workload_conditions(db.session, NS, "Deployment", name)
        out = {r.type: (r.reason, r.message) for rows in found.values() for r in rows}
        db.session.rollback()
        return out


def changes(app: Flask) -> list[AuditEvent]:
    return [r for r in audit(app) if r.action in ("resize", "evict")]


def container_requests(api: Any, name: str) -> list[dict[str, str]]:
    """Container `app`'s requests of each pod of Deployment `name`, sorted."""
    found = [
        p["spec"]["containers"][0]["resources"].get("requests") or {}
        for p in server_pods(api)
        if p["metadata"]["name"].startswith(name + "-")
    ]
    return sorted(found, key=str)


def pod_level_requests(api: Any, name: str) -> list[dict[str, str]]:
    found = [
        p["spec"]["resources"]["requests"]
        for p in server_pods(api)
        if p["metadata"]["name"].startswith(name + "-")
    ]
    return sorted(found, key=str)


def step(sim: Simulator, api: Any, cluster: ClusterView, clock: Clock, seconds: float) -> None:
    """Simulated time and the job's clock moved on together, the caches caught up."""
    sim.advance(seconds)
    settled(sim, api, cluster)
    clock.t += seconds


def whole_second(sim: Simulator) -> float:
    """The job's clock at the simulated one's next whole second: the audit trail, where a
    restarted updater reads when a change began, keeps microseconds, and a test that acts at
    the very second the interval ends must not depend on a rounding of them."""
    return float(math.ceil(sim.now()))


def resumes_at(t: float) -> str:
    return "resumes at " + datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def held_back_until(app: Flask, job: UpdaterJob, name: str, until: float) -> None:
    """One run of `job`: no pod of `name` changed, and the hold said where users see it (the
    workload's condition, which the API and the dashboard show, and the run's summary line)."""
    before = len(changes(app))
    summary = job.run_once(LEADER)
    assert len(changes(app)) == before, summary
    assert "0 pods updated" in summary and "2 held back" in summary, summary
    reason, message = conditions(app, name)[HELD]
    assert reason == "MinInterval"
    assert f"the policy's minIntervalSeconds is {INTERVAL}" in message
    assert resumes_at(until) in message and "or when its policy changes" in message


def test_new_values_wait_for_min_interval_from_the_start_of_the_last_change(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    step(sim, api, cluster, Clock(0), 60)  # the simulated clock ahead of the policy's creation
    policy(app, "web", "InPlaceOrRecreate", observationWindow=WINDOW)
    recommend(app, "web", cpu=200, memory=512 * MI)  # 1 CPU, 1Gi requested: outside its range
    clock = Clock(whole_second(sim))
    start = clock.t
    job = make_job(app, cluster, api, clock)

    # the first change: one pod a run (2 replicas, tolerance 0.5), the second the next run
    job.run_once(LEADER)
    step(sim, api, cluster, clock, 60)
    summary = job.run_once(LEADER)
    assert [r.action for r in changes(app)] == ["resize", "resize"], summary
    assert container_requests(api, "web") == [{"cpu": "200m", "memory": "512Mi"}] * 2
    assert HELD not in conditions(app, "web")  # the rest of the current change is no new one

    # new values 2 minutes after the change began: held back until 10 minutes after it
    step(sim, api, cluster, clock, 60)
    retarget(app, "web", cpu=600, memory=MI * 1024)  # 200m is outside 300m..900m
    held_back_until(app, job, "web", start + INTERVAL)
    # a restarted updater remembers when the change began (the audit trail)
    job = make_job(app, cluster, api, clock)
    held_back_until(app, job, "web", start + INTERVAL)
    # a second before the interval is over, still
    step(sim, api, cluster, clock, start + INTERVAL - 1 - clock.t)
    held_back_until(app, job, "web", start + INTERVAL)
    assert container_requests(api, "web") == [{"cpu": "200m", "memory": "512Mi"}] * 2

    # minIntervalSeconds after the start of the last change: the next one begins
    step(sim, api, cluster, clock, 1)
    summary = job.run_once(LEADER)
    assert "1 pods updated" in summary, summary
    assert HELD not in conditions(app, "web")
    assert container_requests(api, "web") == [
        {"cpu": "200m", "memory": "512Mi"},
        {"cpu": "600m", "memory": "1Gi"},
    ]
    # and its other pod follows at the next run: the same values, the same change
    step(sim, api, cluster, clock, 60)
    summary = job.run_once(LEADER)
    assert "1 pods updated" in summary, summary
    assert container_requests(api, "web") == [{"cpu": "600m", "memory": "1Gi"}] * 2
    assert len(changes(app)) == 4


def test_a_change_of_pod_level_requests_alone_waits_for_min_interval(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    shared(sim, api, cluster)
    step(sim, api, cluster, Clock(0), 60)
    policy(app, "shared", "InPlaceOrRecreate", observationWindow=WINDOW)
    recommend(app, "shared", cpu=500, memory=512 * MI)
    clock = Clock(whole_second(sim))
    start = clock.t
    job = make_job(app, cluster, api, clock)
    job.run_once(LEADER)
    step(sim, api, cluster, clock, 60)
    job.run_once(LEADER)
    first = changes(app)
    assert len(first) == 2
    assert pod_level_requests(api, "shared") == [{"cpu": "500m", "memory": "512Mi"}] * 2

    step(sim, api, cluster, clock, 60)
    retarget(app, "shared", cpu=200, memory=256 * MI)
    held_back_until(app, job, "shared", start + INTERVAL)
    assert pod_level_requests(api, "shared") == [{"cpu": "500m", "memory": "512Mi"}] * 2

    step(sim, api, cluster, clock, start + INTERVAL - clock.t)
    summary = job.run_once(LEADER)
    assert "1 pods updated" in summary, summary
    assert HELD not in conditions(app, "shared")
    [second] = changes(app)[2:]
    assert second.details["after"][POD_VIEW]["requests"] == {"cpu": 200, "memory": 256 * MI}
    # the containers' values are the same in both changes: the pod-level requests alone changed
    containers = {k: v for k, v in second.details["after"].items() if k != POD_VIEW}
    assert containers == {k: v for k, v in first[0].details["after"].items() if k != POD_VIEW}
    assert sorted(pod_level_requests(api, "shared"), key=str) == [
        {"cpu": "200m", "memory": "256Mi"},
        {"cpu": "500m", "memory": "512Mi"},
    ]
