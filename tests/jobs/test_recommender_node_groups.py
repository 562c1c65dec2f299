"""The recommender job sizes a DaemonSet per node group (issue 20, VPA issue #5928) against the
simulated cluster: two node types, an agent using four times the CPU and three times the memory
on the large nodes, and nodes without the label as a group of their own."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.kube.cluster import ClusterView
from app.simulator.simulator import Simulator
from app.store.extensions import db
from app.store.models import NodeGroupRecommendation, Recommendation
from app.store.models import Policy as PolicyRow
from tests.support.recommender_runs import add_policy as policy_row
from tests.support.recommender_runs import deployment, make_job, step

TYPE = "node.kubernetes.io/instance-type"
ZONE = "topology.kubernetes.io/zone"
MIB = 2**20


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    agent = {
        "kind": "DaemonSet",
        "namespace": "ops",
        "name": "agent",
        "containers": [
            {
                "name": "agent",
                "requests": {"cpu": "100m", "memory": "256Mi"},
                "usage": {
                    "cpu": {"base": 0.05},
                    "memory": {"base": "300Mi"},
                    "nodeFactors": {
                        "label": TYPE,
                        "values": {"m5.4xlarge": {"cpu": 4, "memory": 3}},
                    },
                },
            }
        ],
    }
    return {
        "nodes": [
            {"namePrefix": "small", "count": 2, "labels": {TYPE: "m5.large", ZONE: "a"}},
            {"namePrefix": "large", "count": 2, "labels": {TYPE: "m5.4xlarge", ZONE: "b"}},
            {"namePrefix": "bare", "count": 1, "labels": {ZONE: "a"}},
        ],
        "namespaces": [{"name": "ops"}],
        "workloads": [agent, deployment("ops", "web")],
    }


def add_policy(app: Flask, name: str, label: str | None, kind: str | None = "DaemonSet") -> None:
    policy_row(app, name, "ops", kind, "agent" if kind else None, node_group_label=label)


def set_label(app: Flask, name: str, label: str | None) -> None:
    with app.app_context():
        row = db.session.scalar(select(PolicyRow).where(PolicyRow.name == name))
        assert row is not None
        row.node_group_label = label
        db.session.commit()


def groups(app: Flask) -> dict[tuple[str, str], NodeGroupRecommendation]:
    with app.app_context():
        rows = db.session.scalars(select(NodeGroupRecommendation)).all()
        db.session.expunge_all()
        return {(r.name, r.node_group): r for r in rows}


def test_a_daemonset_gets_a_recommendation_per_node_group(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    add_policy(app, "agent", TYPE)
    job = make_job(app, cluster, sim)
    for _ in range(3):
        step(sim, job)
    got = groups(app)
    assert set(got) == {("agent", "m5.large"), ("agent", "m5.4xlarge"), ("agent", "<none>")}
    small, large, bare = (
        got["agent", "m5.large"],
        got["agent", "m5.4xlarge"],
        got["agent", "<none>"],
    )
    assert {r.node_label for r in got.values()} == {TYPE}
    assert (small.pods, large.pods, bare.pods) == (2, 2, 1)
    assert small.current_cpu_request == 100 and small.current_memory_request == 256 * MIB
    assert small.target_cpu and large.target_cpu and bare.target_cpu
    assert small.target_memory and large.target_memory
    assert large.target_cpu > 3 * small.target_cpu
    assert large.target_memory > 2.5 * small.target_memory
    assert bare.target_cpu == small.target_cpu  # both run the unscaled profile
    assert small.sample_count == 2 * 3  # 2 pods, 3 runs: the CPU samples
    assert small.reason and small.reason.startswith("vpa: ")
    with app.app_context():
        whole = db.session.scalar(select(Recommendation).where(Recommendation.name == "agent"))
        # sized as a whole, the p90 is the large nodes' usage: 4x what a small node's pod uses
        assert whole is not None and whole.target_cpu > 3 * small.target_cpu
        assert whole.replicas == 5
    # the Deployment's pods are not grouped
    assert not [k for k in got if k[0] == "web"]


def test_groups_survive_a_restart_and_follow_the_policys_label(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    add_policy(app, "agent", TYPE)
    job = make_job(app, cluster, sim)
    for _ in range(2):
        step(sim, job)
    before = groups(app)["agent", "m5.large"].sample_count
    job.forget()  # a new leadership term: from the rows
    step(sim, job)
    assert groups(app)["agent", "m5.large"].sample_count == before + 2  # 2 pods, one run
    set_label(app, "agent", ZONE)  # another label: its groups start afresh
    step(sim, job)
    got = groups(app)
    assert set(got) == {("agent", "a"), ("agent", "b")}
    assert {r.node_label for r in got.values()} == {ZONE}
    assert got["agent", "a"].pods == 3 and got["agent", "a"].sample_count == 3
    set_label(app, "agent", None)  # sized as a whole again
    step(sim, job)
    assert groups(app) == {}
    assert not job.node_groups.groups.models


def test_a_namespace_policy_groups_its_daemonsets_only(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    add_policy(app, "everything", TYPE, kind=None)
    job = make_job(app, cluster, sim)
    step(sim, job)
    assert {name for name, _ in groups(app)} == {"agent"}


def test_groups_take_the_history_as_the_policys_vpa_parameters_say(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    """A policy's `vpa` parameters (a memory interval, a half-life) tune the DaemonSet's groups
    as they tune the DaemonSet-wide model (ArrayModel.tune)."""
    add_policy(app, "agent", TYPE)
    params = {"memoryAggregationIntervalSeconds": 120, "cpuHistogramDecayHalfLifeSeconds": 3600}
    with app.app_context():
        row = db.session.scalar(select(PolicyRow).where(PolicyRow.name == "agent"))
        assert row is not None
        row.recommender, row.recommender_params = "vpa", params
        db.session.commit()
    job = make_job(app, cluster, sim)
    step(sim, job)
    agent = next(w for w in job.model.rows if w.name == "agent")
    assert job.node_groups.groups.models
    for model in [job.model, *job.node_groups.groups.models.values()]:
        s = model.tuning(agent).settings
        assert (s.memory_aggregation_interval_seconds, s.cpu_half_life_seconds) == (120, 3600)
