"""Policies that select workloads by their pods' labels, and workloads of a kind beyond the six
(an Argo-Rollouts-like custom resource with /scale), through the recommender and the updater
against the simulated cluster (docs/policies.md, "Targets")."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.kube.cluster import ClusterView
from app.simulator.simulator import Simulator
from app.store.extensions import db
from app.store.models import Policy, Recommendation
from tests.support.recommender_runs import make_job as make_recommender
from tests.support.recommender_runs import step
from tests.support.rollouts import create_rollout, install_rollouts, rollout
from tests.support.updater_runs import (
    LEADER,
    NS,
    Clock,
    audit,
    deployment,
    make_job,
    recommend,
    settled,
    uids,
)

ROLLOUT_KIND = "Rollout.argoproj.io"


def labelled(name: str, tier: str) -> dict[str, Any]:
    workload = deployment(name, 2, cpu="1")
    workload["labels"] = {"app": name, "tier": tier}
    return workload


SCENARIO = {
    "nodes": [{"namePrefix": "node", "count": 3, "cpu": "8", "memory": "32Gi"}],
    "namespaces": [{"name": NS}],
    "workloads": [labelled("front", "web"), labelled("api", "web"), labelled("db", "data")],
}


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return SCENARIO


def add_policy(app: Flask, name: str, mode: str, **columns: Any) -> None:
    with app.app_context():
        db.session.add(Policy(name=name, namespace=NS, update_mode=mode, **columns))
        db.session.commit()


def evicted(app: Flask) -> set[str]:
    """The workloads whose pods the updater evicted (from the audit trail)."""
    return {e.details["workload"] for e in audit(app) if e.action == "evict"}


def test_a_selector_policy_picks_both_labelled_deployments_and_a_named_policy_wins(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    add_policy(
        app,
        "tier-web",
        "Recreate",
        target_options={"selector": {"matchLabels": {"tier": "web"}}},
    )
    for name in ("front", "api", "db"):
        recommend(app, name, cpu=200)  # requests 1000m: each far from its target
    before = {name: uids(api, name) for name in ("front", "api", "db")}
    job = make_job(app, cluster, api, Clock(sim.now()))
    for _ in range(3):
        job.run_once(LEADER)
        settled(sim, api, cluster)
    assert before["front"] - uids(api, "front") and before["api"] - uids(api, "api")
    assert uids(api, "db") == before["db"]  # tier=data: not selected
    assert evicted(app) == {f"{NS}/Deployment/front", f"{NS}/Deployment/api"}
    # A policy naming `api` (Off) beats the selector: its pods are left alone from now on.
    add_policy(app, "api", "Off", target_kind="Deployment", target_name="api")
    api_pods = uids(api, "api")
    for _ in range(3):
        job.run_once(LEADER)
        settled(sim, api, cluster)
    assert uids(api, "api") == api_pods


def test_a_rollout_is_recommended_for_and_updated_through_its_scale(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    install_rollouts(api)
    create_rollout(api, rollout("canary", NS, replicas=2, cpu="1", memory="1Gi"))
    for _ in range(3):
        sim.settle()
    cluster.scalable.refresh()  # the definition is newer than the view's first listing
    recommender = make_recommender(app, cluster, sim)
    step(sim, recommender)
    step(sim, recommender)
    with app.app_context():
        kinds = set(
            db.session.scalars(select(Recommendation.kind).where(Recommendation.name == "canary"))
        )
    assert kinds == {ROLLOUT_KIND}
    # The updater: the Rollout's pods are its pods; its budget counts the Scale's replicas.
    add_policy(
        app,
        "canary",
        "Recreate",
        target_kind=ROLLOUT_KIND,
        target_name="canary",
        target_options={"apiVersion": "argoproj.io/v1alpha1"},
    )
    with app.app_context():
        db.session.query(Recommendation).filter_by(name="canary").delete()
        db.session.commit()
    recommend(app, "canary", cpu=200)  # a Deployment's row: rewritten as the Rollout's below
    with app.app_context():
        for row in db.session.scalars(
            select(Recommendation).where(Recommendation.name == "canary")
        ):
            row.kind = ROLLOUT_KIND
        db.session.commit()
    before = uids(api, "canary")
    job = make_job(app, cluster, api, Clock(sim.now()))
    job.run_once(LEADER)
    settled(sim, api, cluster)
    assert len(before - uids(api, "canary")) == 1  # int(2 x 0.5): one per run
    assert evicted(app) == {f"{NS}/{ROLLOUT_KIND}/canary"}
