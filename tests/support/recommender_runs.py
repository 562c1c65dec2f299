"""The recommender run one step at a time against the simulated cluster, as tests/jobs does:
scenario workloads, the job over a ClusterView, and a step that advances the simulator's clock and
runs once when the pod cache has caught up."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from flask import Flask
from kubernetes import client

from app.core.placement.profile import Profiles
from app.jobs.recommender import RecommenderJob
from app.kube.cluster import ClusterView
from app.settings import Settings, settings_of
from app.simulator.simulator import Simulator
from app.store.extensions import db
from app.store.models import Policy
from app.store.session import app_sessions


def deployment(namespace: str, name: str, replicas: int = 2, cpu: float = 0.2) -> dict[str, Any]:
    return {
        "kind": "Deployment",
        "namespace": namespace,
        "name": name,
        "replicas": replicas,
        "containers": [
            {
                "name": "app",
                "image": "example.com/app:1",
                "requests": {"cpu": "500m", "memory": "512Mi"},
                "usage": {"cpu": {"base": cpu}, "memory": {"base": "200Mi"}},
            }
        ],
    }


def add_policy(
    app: Flask, name: str, ns: str, kind: str | None, target: str | None, **fields: Any
) -> None:
    """A policy row for workload `kind`/`target` (None, None: every workload of namespace `ns`);
    `fields` are the model's columns (update mode Off and no container policies unless given)."""
    with app.app_context():
        db.session.add(
            Policy(name=name, namespace=ns, target_kind=kind, target_name=target, **fields)
        )
        db.session.commit()


def recommender_settings(
    base: Settings,
    excluded_namespaces: frozenset[str] = frozenset(),
    min_history_seconds: float | None = None,
    **recommender: Any,
) -> Settings:
    """Settings (`settings_of(app)`) as the recommender job reads them, changed for a test:
    `recommender` replaces fields of `settings.recommender` (interval, gc_grace_seconds,
    idle_after_seconds, checkpoint_interval_seconds, checkpoint_batch_size, track, ...),
    `excluded_namespaces` adds namespaces left alone, `min_history_seconds` (the updater's)
    is the history under which a recommendation is LowConfidence."""
    updater = base.updater
    if min_history_seconds is not None:
        updater = replace(updater, min_history_seconds=min_history_seconds)
    return replace(
        base,
        recommender=replace(base.recommender, **recommender),
        updater=updater,
        cluster=replace(
            base.cluster, excluded_namespaces=base.cluster.excluded_namespaces | excluded_namespaces
        ),
    )


def recommender_job(
    app: Flask,
    cluster: Any,
    clock: Any,
    history: Any = None,
    profiles: Profiles | None = None,
    **settings: Any,
) -> RecommenderJob:
    """The job as `rightsizer serve` builds it (sessions on `app`'s database, its settings),
    `settings` changed as recommender_settings says."""
    return RecommenderJob(
        app_sessions(app),
        cluster,
        recommender_settings(settings_of(app), **settings),
        history=history,
        clock=clock,
        profiles=profiles,
    )


def make_job(app: Flask, cluster: ClusterView, sim: Simulator, **settings: Any) -> RecommenderJob:
    return recommender_job(app, cluster, sim.now, **settings)


def step(sim: Simulator, job: RecommenderJob, seconds: float = 60) -> str:
    sim.advance(seconds)
    sim.settle()
    wait_cache_caught_up(sim, job.cluster)
    return job.run_once(lambda: True)


def wait_cache_caught_up(sim: Simulator, cluster: ClusterView) -> None:
    """The pods informer is a watch: give it the simulator's latest pods before a run."""
    core = client.CoreV1Api(sim.api_client())
    want = {
        (p.metadata.namespace, p.metadata.name) for p in core.list_pod_for_all_namespaces().items
    }
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        have = {(p.namespace, p.name) for p in cluster.pods.items()}
        if have == want:
            return
        time.sleep(0.05)
    raise AssertionError("pod cache did not catch up with the simulator")
