"""The updater brings each pod of a DaemonSet sized per node group toward its own group's
recommendation (the one the webhook gives a new pod on that node), against the simulated cluster
and read back with the official client; a group whose recommendation rests on too little history
waits."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from flask import Flask

from app.core.recommend.aggregate import AggregateState
from app.core.recommend.checkpoint import save_aggregate
from app.core.recommend.settings import RecommenderSettings
from app.kube.cluster import ClusterView
from app.simulator.simulator import Simulator
from app.store.extensions import db
from app.store.models import NodeGroupRecommendation, Policy, Recommendation
from app.store.node_groups import checkpoint_json
from tests.support.updater_runs import LEADER, Clock, audit, make_job, server_pods, settled

NS = "shop"
TYPE = "node.kubernetes.io/instance-type"
MI = 2**20


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return {
        "nodes": [
            {"namePrefix": "small", "count": 2, "labels": {TYPE: "m5.large"}},
            {"namePrefix": "large", "count": 2, "labels": {TYPE: "m5.4xlarge"}},
        ],
        "namespaces": [{"name": NS}],
        "workloads": [
            {
                "kind": "DaemonSet",
                "namespace": NS,
                "name": "agent",
                "containers": [{"name": "agent", "requests": {"cpu": "100m", "memory": "256Mi"}}],
            }
        ],
    }


def amounts(cpu: int, memory: int) -> dict[str, Any]:
    return {
        "target_cpu": cpu,
        "target_memory": memory,
        "lower_bound_cpu": cpu,
        "lower_bound_memory": memory,
        "upper_bound_cpu": cpu,
        "upper_bound_memory": memory,
        "uncapped_target_cpu": cpu,
        "uncapped_target_memory": memory,
    }


def rows(app: Flask, large_history: float = 7200.0) -> None:
    now = datetime.now(UTC)
    ident = {"namespace": NS, "kind": "DaemonSet", "name": "agent", "container": "agent"}
    cp = checkpoint_json(save_aggregate(AggregateState.empty(RecommenderSettings())))
    with app.app_context():
        db.session.add(
            Policy(
                name="agent",
                namespace=NS,
                target_kind="DaemonSet",
                target_name="agent",
                update_mode="InPlace",
                container_policies=[],
                update_options={"inPlaceSkipDisruptionBudget": True},
                node_group_label=TYPE,
            )
        )
        db.session.add(
            Recommendation(
                **ident,
                **amounts(150, 400 * MI),
                sample_count=100,
                first_sample_at=now - timedelta(hours=2),
                last_sample_at=now,
            )
        )
        for group, cpu, memory, history in (
            ("m5.large", 60, 300 * MI, 7200.0),
            ("m5.4xlarge", 240, 900 * MI, large_history),
        ):
            db.session.add(
                NodeGroupRecommendation(
                    **ident,
                    **amounts(cpu, memory),
                    node_label=TYPE,
                    node_group=group,
                    sample_count=50,
                    first_sample_at=now - timedelta(seconds=history),
                    last_sample_at=now,
                    checkpoint=cp,
                )
            )
        db.session.commit()


def requests_by_node(api: Any) -> dict[str, tuple[str, str]]:
    out = {}
    for p in server_pods(api):
        r = p["spec"]["containers"][0]["resources"]["requests"]
        out[p["spec"]["nodeName"]] = (r["cpu"], r["memory"])
    return out


def test_each_pod_is_resized_to_its_own_groups_recommendation(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    rows(app)
    job = make_job(app, cluster, api, Clock(sim.now()))
    assert "4 pods updated" in job.run_once(LEADER)
    settled(sim, api, cluster)
    assert requests_by_node(api) == {
        "small-0": ("60m", "300Mi"),
        "small-1": ("60m", "300Mi"),
        "large-0": ("240m", "900Mi"),
        "large-1": ("240m", "900Mi"),
    }
    assert [r.action for r in audit(app)] == ["resize"] * 4
    assert "0 pods updated" in job.run_once(LEADER)  # each holds what the webhook would give


def test_a_group_with_too_little_history_waits(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    rows(app, large_history=60.0)
    job = make_job(app, cluster, api, Clock(sim.now()))
    assert "2 pods updated" in job.run_once(LEADER)
    settled(sim, api, cluster)
    got = requests_by_node(api)
    assert got["small-0"] == got["small-1"] == ("60m", "300Mi")
    assert got["large-0"] == got["large-1"] == ("100m", "256Mi")  # left as they were
