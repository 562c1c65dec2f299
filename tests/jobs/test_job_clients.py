"""Which API client each background job calls through (app/jobs/startup.py build_jobs).

Every client has its own client-side rate limiter (app/kube/throttle.py): the recommender and
updater share one; the scaler has one of its own, so their calls never delay its runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from kubernetes import client
from sqlalchemy import select

from app.config import override
from app.jobs.scaler import ScalerJob
from app.jobs.startup import Jobs, build_jobs
from app.kube.throttle import RateLimiter
from app.settings import settings_of
from app.simulator.simulator import Simulator
from app.store.extensions import db
from app.store.models import Scaler
from app.store.session import app_sessions
from tests.support.scaler_runs import NS, add_scaler


@pytest.fixture
def jobs(app: Flask, sim: Simulator) -> Iterator[Jobs]:
    override(app, {"KUBECONFIG": sim.kubeconfig_path})
    # nothing started: no Lease campaign, no caches
    built = build_jobs(settings_of(app), app_sessions(app))
    yield built
    built.cluster.nodes.stop()


def test_the_scaler_scales_while_the_jobs_rate_limiter_is_exhausted(
    app: Flask, sim: Simulator, jobs: Jobs
) -> None:
    nodes = jobs.cluster.nodes
    nodes.start()  # the one cache the scaler reads, listed before the bucket is emptied
    assert nodes.wait_synced(30)
    rest: Any = jobs.cluster.api.rest_client  # app.kube.client's _TimedREST
    limiter: RateLimiter = rest.limiter
    waits: list[float] = []
    limiter.sleep = waits.append  # a call behind it is recorded, not slept
    while limiter.reserve() == 0:  # the recommender and updater took every token
        pass
    add_scaler(app, "dns", "coredns")
    scaler = next(job for job in jobs.runner.jobs if isinstance(job, ScalerJob))

    assert scaler.run_once(lambda: True) == "1 scalers over 5 nodes: 1 changed, 0 with errors"

    assert waits == []  # no scaler call waited for the jobs' tokens
    api = sim.api_client()
    scale = client.AppsV1Api(api).read_namespaced_deployment_scale("coredns", NS)
    api.close()
    assert scale.spec is not None and scale.spec.replicas == 5
    with app.app_context():
        row = db.session.scalar(select(Scaler).where(Scaler.name == "dns"))
        assert row is not None and row.last_applied == 5
