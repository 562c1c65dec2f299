"""The recommender reads the PodMetrics LIST in a thread of its own while it reads the pods
(app.jobs.background): at 150,000 pods the LIST is tens of MB, mostly a wait on the socket. A
failed LIST fails the run as before, with nothing of the run half done."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select

from app.core.pods import PodView
from app.core.recommend.podmetrics import PodMetrics
from app.core.workload_key import WorkloadKey
from app.jobs.background import in_background
from app.jobs.recommender import RecommenderJob
from app.store.extensions import db
from app.store.models import Recommendation
from tests.support.fixed_cluster import FixedCluster, cache_pod
from tests.support.recommender_runs import recommender_job

CACHE = WorkloadKey("shop", "StatefulSet", "cache")
SCRAPE = "2026-01-01T00:00:00Z"


def pod() -> PodView:
    """The cache's pod, OOM-killed once (a kill the run counts from the pod's status)."""
    return cache_pod(1, "2026-01-01T00:00:10Z")


class SlowMetrics(FixedCluster):
    """PodMetrics that come only once the run has found its live pods (or after `patience`)."""

    def __init__(self, patience: float) -> None:
        super().__init__(CACHE, "redis", {"cpu": "50m", "memory": "150Mi"}, SCRAPE)
        self.patience = patience
        self.pods_read = threading.Event()
        self.waited: bool | None = None
        self.thread = ""
        self.failure: Exception | None = None

    def pod_metrics(self) -> list[PodMetrics]:
        self.thread = threading.current_thread().name
        self.waited = self.pods_read.wait(self.patience)
        if self.failure is not None:
            raise self.failure
        return super().pod_metrics()


def job(app: Flask, cluster: SlowMetrics) -> RecommenderJob:
    j = recommender_job(app, cluster, lambda: 1767225660.0)
    find = j.conditions.live_pods

    def finding(pods: Any) -> Any:
        found = find(pods)
        cluster.pods_read.set()
        return found

    j.conditions.live_pods = finding  # type: ignore[method-assign]
    return j


def rows(app: Flask) -> int:
    with app.app_context():
        return db.session.scalar(select(func.count()).select_from(Recommendation)) or 0


def test_the_pods_are_read_while_the_podmetrics_list_is(app: Flask) -> None:
    """Sequential reads would leave pod_metrics waiting its whole patience for the live pods."""
    cluster = SlowMetrics(patience=10.0)
    cluster.pods.live = [pod()]
    summary = job(app, cluster).run_once(lambda: True)
    assert cluster.waited is True
    assert cluster.thread == "recommender-pod-metrics"
    assert "1 pod metrics, 2 samples, 1 OOM kills" in summary, summary
    assert rows(app) == 1


def test_a_failed_list_fails_the_run_and_leaves_its_oom_kill_for_the_next(app: Flask) -> None:
    cluster = SlowMetrics(patience=10.0)
    cluster.pods.live = [pod()]
    cluster.failure = RuntimeError("metrics.k8s.io unavailable")
    recommender = job(app, cluster)
    with pytest.raises(RuntimeError, match="unavailable"):
        recommender.run_once(lambda: True)
    assert rows(app) == 0 and not recommender.model.rows
    cluster.failure = None
    cluster.pods_read.clear()
    summary = recommender.run_once(lambda: True)
    assert "1 pod metrics, 2 samples, 1 OOM kills" in summary, summary  # not taken as seen
    assert rows(app) == 1


def test_in_background_hands_over_a_result_or_an_error() -> None:
    names: list[str] = []

    def named() -> str:
        names.append(threading.current_thread().name)
        return "done"

    assert in_background(named, "worker").result(timeout=5) == "done"
    assert names == ["worker"]

    def failing() -> None:
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        in_background(failing, "worker").result(timeout=5)
