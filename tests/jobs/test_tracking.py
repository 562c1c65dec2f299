"""Opt-in tracking (RIGHTSIZER_TRACK, app/jobs/tracking.py) against the simulated cluster: only
what a policy covers (VPA's --memory-saver), only labelled namespaces (Goldilocks'
goldilocks.fairwinds.com/enabled), both, and the default, every namespace not excluded."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from kubernetes import client
from sqlalchemy import select

from app.jobs.tracking import namespace_enabled
from app.kube.cluster import ClusterView
from app.simulator.simulator import Simulator
from app.store.extensions import db
from app.store.models import Policy, Recommendation
from tests.support.recommender_runs import deployment, make_job, step

GOLDILOCKS = "goldilocks.fairwinds.com/enabled"
SCENARIO: dict[str, Any] = {
    "nodes": [{"namePrefix": "node", "count": 2, "cpu": "8", "memory": "32Gi"}],
    "namespaces": [
        {"name": "shop", "labels": {GOLDILOCKS: "true"}},
        {"name": "lab", "labels": {GOLDILOCKS: "False"}},
        "ops",
    ],
    "workloads": [
        deployment("shop", "web"),
        deployment("shop", "api"),
        deployment("lab", "trial"),
        deployment("ops", "tools"),
    ],
}


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return SCENARIO


def recommended(app: Flask) -> set[str]:
    with app.app_context():
        rows = db.session.execute(select(Recommendation.namespace, Recommendation.name))
        return {f"{ns}/{name}" for ns, name in rows}


def add_policy(app: Flask, name: str, namespace: str, **columns: Any) -> None:
    with app.app_context():
        db.session.add(Policy(name=name, namespace=namespace, update_mode="Off", **columns))
        db.session.commit()


def test_by_default_every_namespace_is_learned(
    app: Flask, sim: Simulator, cluster: ClusterView
) -> None:
    job = make_job(app, cluster, sim)
    step(sim, job)
    assert recommended(app) == {"shop/web", "shop/api", "lab/trial", "ops/tools"}


def test_memory_saver_learns_only_what_a_policy_covers_and_forgets_the_rest(
    app: Flask, sim: Simulator, cluster: ClusterView
) -> None:
    add_policy(app, "web", "shop", target_kind="Deployment", target_name="web")
    add_policy(app, "lab", "lab")  # the whole namespace
    job = make_job(app, cluster, sim, track=frozenset({"policies"}), gc_grace_seconds=60.0)
    step(sim, job)
    assert recommended(app) == {"shop/web", "lab/trial"}
    assert {w.name for w in job.model.rows} == {"web", "trial"}
    # The namespace policy goes: its workload is forgotten, its rows go after the grace.
    with app.app_context():
        db.session.query(Policy).filter_by(name="lab").delete()
        db.session.commit()
    step(sim, job)
    assert {w.name for w in job.model.rows} == {"web"}
    step(sim, job, seconds=120)
    assert recommended(app) == {"shop/web"}


def test_goldilocks_label_learns_the_labelled_namespaces_only(
    app: Flask, sim: Simulator, cluster: ClusterView
) -> None:
    job = make_job(app, cluster, sim, track=frozenset({"labelled"}))
    step(sim, job)
    assert recommended(app) == {"shop/web", "shop/api"}  # lab says False
    # Labelling a namespace takes it in at the next run.
    core = client.CoreV1Api(sim.api_client())
    core.patch_namespace("ops", {"metadata": {"labels": {GOLDILOCKS: "1"}}})
    step(sim, job)
    assert recommended(app) == {"shop/web", "shop/api", "ops/tools"}


def test_both_take_what_either_covers_and_a_label_of_another_name(
    app: Flask, sim: Simulator, cluster: ClusterView
) -> None:
    core = client.CoreV1Api(sim.api_client())
    core.patch_namespace("ops", {"metadata": {"labels": {"example.com/rightsize": "TRUE"}}})
    add_policy(app, "trial", "lab", target_kind="Deployment", target_name="trial")
    job = make_job(
        app,
        cluster,
        sim,
        track=frozenset({"labelled", "policies"}),
        track_label="example.com/rightsize",
    )
    step(sim, job)
    assert recommended(app) == {"ops/tools", "lab/trial"}


@pytest.mark.parametrize(
    ("labels", "enabled"),
    [
        ({GOLDILOCKS: "true"}, True),
        ({GOLDILOCKS: "T"}, True),
        ({GOLDILOCKS: "1"}, True),
        ({GOLDILOCKS: "yes"}, False),  # strconv.ParseBool refuses it: Goldilocks says false
        ({GOLDILOCKS: "false"}, False),
        ({"goldilocks.fairwinds.com/Enabled": "True"}, True),  # the key compared in lower case
        ({}, False),
    ],
)
def test_a_namespace_is_enabled_as_goldilocks_reads_its_label(
    labels: dict[str, str], enabled: bool
) -> None:
    assert namespace_enabled(labels, GOLDILOCKS) is enabled
