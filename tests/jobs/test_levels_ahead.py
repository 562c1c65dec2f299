"""The levels ahead end to end in the leader: the recommender's runs feed the workloads' daily
profiles, and the node-levels job turns the profiles of the pods each node runs into the node's
levels ahead, saved for the extender. Against the simulated cluster, one run at a time."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from flask import Flask
from sqlalchemy import func, select

from app.core.placement.profile import SLOT_SECONDS, SLOTS, Profiles, slot_of
from app.core.workload_key import WorkloadKey
from app.jobs.node_levels import NodeLevelsJob
from app.kube.cluster import ClusterView
from app.simulator.simulator import Simulator
from app.store.extensions import db
from app.store.models import WorkloadProfileRow
from app.store.node_levels import load_node_levels
from app.store.session import app_sessions
from tests.support.recommender_runs import deployment, make_job, step

SCENARIO = {
    "nodes": [{"namePrefix": "node", "count": 3, "cpu": "8", "memory": "32Gi"}],
    "namespaces": [{"name": "shop"}],
    "workloads": [deployment("shop", "web", replicas=2, cpu=0.2), deployment("shop", "api")],
}
WEB, API = WorkloadKey("shop", "Deployment", "web"), WorkloadKey("shop", "Deployment", "api")


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return SCENARIO


def test_recommender_runs_feed_profiles_that_give_nodes_their_levels_ahead(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    profiles = Profiles()
    job = make_job(app, cluster, sim, profiles=profiles)
    step(sim, job)
    web = profiles.profile(WEB)  # views of its row: what is set below is the profile's
    assert web is not None
    seen = np.flatnonzero(web.weight)
    assert len(seen) == 1  # one run: one slot of the day
    assert web.cpu[seen[0]] == pytest.approx(200.0, rel=0.25)  # 0.2 cores per pod
    web_pods = {p for (ns, p), w in profiles.workload_of_pod.items() if w == WEB}
    assert len(web_pods) == 2 and API in profiles.index

    # A whole day learned for web (none for api): 200m a pod, 1,200m from two slots on.
    now = sim.now()
    rise = (slot_of(now) + 2 + np.arange(SLOTS - 2)) % SLOTS
    web.cpu[:] = 200.0
    web.cpu[rise] = 1200.0
    web.memory[:] = web.memory[seen[0]]  # memory flat all day
    web.weight[:] = 1.0
    web.seen_at[:] = now - SLOT_SECONDS
    levels_job = NodeLevelsJob(app_sessions(app), cluster, 30.0, profiles=profiles, ahead_hours=2)
    assert "saved" in levels_job.run_once(lambda: True)
    with app.app_context():
        saved = {n.name: n for n in load_node_levels(db.session)}
    on_node: dict[str, int] = {}
    for pod in cluster.pods.items():
        if pod.name in web_pods and pod.node_name:
            on_node[pod.node_name] = on_node.get(pod.node_name, 0) + 1
    assert saved and on_node
    for name, level in saved.items():
        if name not in on_node:
            assert level.cpu_ahead == ()  # only api's pods, whose profile is not whole
            continue
        # one level an hour: the rise comes at its third slot, so the first hour has half of it
        step_up = on_node[name] * 1000.0 / level.cpu_allocatable
        now_level = level.cpu_now
        assert now_level is not None
        expected = (now_level + step_up / 2, now_level + step_up)
        assert level.cpu_ahead == pytest.approx(expected, abs=1e-5)
        assert level.memory_ahead == pytest.approx((level.memory_now,) * 2, abs=1e-4)


def test_a_new_leader_resumes_the_stored_profiles_and_stores_them_every_hour(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    first = Profiles()
    job = make_job(app, cluster, sim, profiles=first)
    step(sim, job)  # its first run: nothing stored yet to load, nothing stored within the hour
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(WorkloadProfileRow)) == 0
    step(sim, job, 3600)  # an hour on: stored
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(WorkloadProfileRow)) == 2
    kept = first.profile(WEB)
    assert kept is not None and int((kept.weight > 0).sum()) == 2  # two slots of the day

    second = Profiles()  # a new leader, in another process
    successor = make_job(app, cluster, sim, profiles=second)
    step(sim, successor, 60)
    resumed = second.profile(WEB)
    assert resumed is not None and int((resumed.weight > 0).sum()) >= 2
    assert set(second.index) == {WEB, API}
