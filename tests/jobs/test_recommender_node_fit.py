"""Recommendations that fit a node, through the recommender against the simulated cluster
(kubernetes/autoscaler #4515, #7147, AEP #7397): a workload using more than any node it may run on
can give gets a target capped at the largest such node less its DaemonSets, says so in its
CappedToNode condition and in the recommendation's reason, and keeps the uncapped target."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask
from kubernetes import client as k8s
from sqlalchemy import select

from app.core.nodes import NodeView
from app.core.quantity import format_quantity
from app.kube.cluster import ClusterView
from app.simulator.simulator import Simulator
from app.store.conditions import workload_conditions
from app.store.extensions import db
from app.store.models import Recommendation
from tests.support.json_bodies import raw_body
from tests.support.recommender_runs import add_policy, make_job, step

GI = 1024**3


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    agent = {
        "kind": "DaemonSet",
        "namespace": "ops",
        "name": "agent",
        "containers": [
            {
                "name": "agent",
                "requests": {"cpu": "250m", "memory": "512Mi"},
                "usage": {"cpu": {"base": 0.05}, "memory": {"base": "100Mi"}},
            }
        ],
    }
    hungry = {
        "kind": "Deployment",
        "namespace": "ops",
        "name": "hungry",
        "replicas": 2,
        "containers": [
            {
                "name": "app",
                "image": "example.com/app:1",
                "requests": {"cpu": "500m", "memory": "512Mi"},
                # more than a small node has: 3 cores, 6Gi
                "usage": {"cpu": {"base": 3.0}, "memory": {"base": "6Gi"}},
            }
        ],
    }
    return {
        "nodes": [
            {"namePrefix": "small", "count": 2, "cpu": "2", "memory": "4Gi"},
            {"namePrefix": "big", "count": 1, "cpu": "16", "memory": "64Gi"},
        ],
        "namespaces": [{"name": "ops"}],
        "workloads": [agent, hungry],
    }


def allocatable(api: Any, name: str) -> tuple[int, int]:
    node = json.loads(raw_body(k8s.CoreV1Api(api).read_node(name, _preload_content=False)))
    view = NodeView.parse(node)
    assert view.cpu_allocatable is not None and view.memory_allocatable is not None
    return view.cpu_allocatable, view.memory_allocatable


def row(app: Flask) -> Recommendation:
    with app.app_context():
        found = db.session.scalars(select(Recommendation).filter_by(name="hungry")).one()
        db.session.expunge(found)
        return found


def conditions(app: Flask) -> dict[str, tuple[str, str]]:
    with app.app_context():
        found = workload_conditions(db.session, "ops", "Deployment", "hungry")
        return {r.type: (r.reason, r.message) for rows in found.values() for r in rows}


def test_a_target_larger_than_every_node_it_may_run_on_is_capped_with_a_condition(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    # the big node is kept for others: its taint is not tolerated by hungry's pods
    taint = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
    k8s.CoreV1Api(api).patch_node("big-0", {"spec": {"taints": [taint]}})
    add_policy(app, "hungry", "ops", "Deployment", "hungry", update_mode="Initial")
    job = make_job(app, cluster, sim)
    for _ in range(3):
        step(sim, job)
    rec = row(app)
    # a small node's allocatable (its 2 cpu and 4Gi less what the kubelet reserves), less the
    # agent DaemonSet's 250m and 512Mi
    small = allocatable(api, "small-0")
    room = (small[0] - 250, small[1] - 512 * 2**20)
    assert (rec.target_cpu, rec.target_memory) == room
    assert rec.upper_bound_cpu <= room[0] and rec.upper_bound_memory <= room[1]
    assert rec.uncapped_target_cpu > 3000 and rec.uncapped_target_memory > 6 * GI
    assert rec.reason is not None and "capped to fit node small-" in rec.reason
    reason, message = conditions(app)["CappedToNode"]
    assert reason == "LargestNode"
    assert "more than any node it may run on has; capped to node small-" in message
    cpu, memory = format_quantity("cpu", room[0]), format_quantity("memory", room[1])
    assert f"(cpu {cpu}, memory {memory} allocatable less its DaemonSets)" in message

    # tolerated, the big node takes the pod: nothing is capped
    with app.app_context():
        from app.store.models import Policy

        db.session.query(Policy).delete()
        db.session.commit()
    k8s.CoreV1Api(api).patch_node("big-0", {"spec": {"taints": []}})
    add_policy(app, "hungry", "ops", "Deployment", "hungry", update_mode="Initial")
    step(sim, job)
    rec = row(app)
    assert rec.target_cpu > 3000 and rec.target_memory > 6 * GI
    assert "capped to fit node" not in (rec.reason or "")
    assert "CappedToNode" not in conditions(app)
