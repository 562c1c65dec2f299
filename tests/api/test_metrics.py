"""GET /metrics: Prometheus text with our request counters and other modules' metrics."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from flask import Flask
from flask.testing import FlaskClient
from prometheus_client import Counter
from prometheus_client.parser import text_string_to_metric_families

from app.core.workload_key import WorkloadKey
from app.jobs.runner import JobRunner
from app.store.extensions import db
from app.store.models import AuditEvent
from app.store.recommendations import count_recommendations, delete_workload
from app.webhook.metrics import CACHE_LAST_SUCCESS
from tests.support.usage import seed

OTHER = Counter("rightsizer_test_other_module", "A metric some other module defines.")


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_requests_counted_by_route_template(client: FlaskClient, anon: FlaskClient) -> None:
    def count(route: str, status: str) -> float:
        text = anon.get("/metrics").get_data(as_text=True)
        key = (
            "rightsizer_http_requests_total",
            (("method", "GET"), ("route", route), ("status", status)),
        )
        return samples(text).get(key, 0.0)

    route = "/api/v1/policies/<namespace>/<name>"
    before_404, before_401 = count(route, "404"), count(route, "401")
    client.get("/api/v1/policies/shop/a")
    client.get("/api/v1/policies/shop/b")
    anon.get("/api/v1/policies/shop/c")
    assert count(route, "404") == before_404 + 2
    assert count(route, "401") == before_401 + 1


def test_exposition_format_and_other_modules_metrics(anon: FlaskClient) -> None:
    OTHER.inc()  # runs once per database: compare with the counter's own value
    resp = anon.get("/metrics")
    assert resp.status_code == 200
    assert resp.mimetype == "text/plain"
    text = resp.get_data(as_text=True)
    assert f"rightsizer_test_other_module_total {OTHER._value.get()}" in text
    assert "# TYPE rightsizer_http_request_duration_seconds histogram" in text


# Jobs, actions, recommendations, cache age ----------------------------------------------------


def value(anon: FlaskClient, name: str, **labels: str) -> float | None:
    """One sample from a real scrape of /metrics; None when the series is absent."""
    text = anon.get("/metrics").get_data(as_text=True)
    return samples(text).get((name, tuple(sorted(labels.items()))))


class FakeJob:
    """A job whose runs succeed or raise, as told (a job, not a Kubernetes client)."""

    interval = 60.0

    def __init__(self, name: str, fail: bool = False) -> None:
        self.name, self.fail = name, fail

    def run_once(self, still_leader: Callable[[], bool]) -> str:
        if self.fail:
            raise RuntimeError("boom")
        return "did things"


def test_job_runs_and_durations_by_job_and_outcome(anon: FlaskClient) -> None:
    job = FakeJob(f"job-{uuid.uuid4().hex[:8]}")
    runner = JobRunner([job])
    # every series exists (at 0) as soon as the runner knows the job
    assert value(anon, "rightsizer_job_runs_total", job=job.name, outcome="ok") == 0
    assert value(anon, "rightsizer_job_runs_total", job=job.name, outcome="failed") == 0
    assert value(anon, "rightsizer_job_last_success_timestamp_seconds", job=job.name) is None

    assert runner.run_one(job, lambda: True) is True
    assert runner.run_one(job, lambda: True) is True
    job.fail = True
    assert runner.run_one(job, lambda: True) is False

    assert value(anon, "rightsizer_job_runs_total", job=job.name, outcome="ok") == 2
    assert value(anon, "rightsizer_job_runs_total", job=job.name, outcome="failed") == 1
    durations = "rightsizer_job_run_duration_seconds_count"
    assert value(anon, durations, job=job.name, outcome="ok") == 2
    assert value(anon, durations, job=job.name, outcome="failed") == 1
    assert (value(anon, "rightsizer_job_last_success_timestamp_seconds", job=job.name) or 0) > 0
    assert (runner.runs[job.name], runner.failures[job.name]) == (2, 1)


ACTION_METRICS = {
    "evict": "rightsizer_evictions_total",
    "resize": "rightsizer_resizes_total",
    "scale": "rightsizer_scale_changes_total",
}


def audit_event(action: str, actor: str) -> AuditEvent:
    return AuditEvent(actor=actor, action=action, object_kind="Pod", object_ref="shop/web-1")


def test_evictions_resizes_and_scale_changes_counted_when_their_audit_event_commits(
    app: Flask, anon: FlaskClient
) -> None:
    before = {a: value(anon, m) for a, m in ACTION_METRICS.items()}
    assert None not in before.values()  # present before anything happened
    lost_before = value(anon, "rightsizer_unanswered_updates_total")
    assert lost_before is not None

    # an eviction and two resizes whose answers were lost: counted apart, as maybe done
    lost = (("evict-unanswered", 1), ("resize-unanswered", 2))
    for action, n in (("evict", 2), ("resize", 3), ("scale", 1), *lost):
        for _ in range(n):  # one transaction per event, as the updater and the scaler write them
            db.session.add(audit_event(action, f"rightsizer/{action}"))
            db.session.commit()
    db.session.add(audit_event("evict", "rightsizer/updater"))
    db.session.add(audit_event("resize", "rightsizer/updater"))
    db.session.flush()
    db.session.rollback()  # never happened: not counted
    db.session.add(audit_event("update", "alice"))  # a policy edit is no action on the cluster
    db.session.commit()

    after = {a: value(anon, m) for a, m in ACTION_METRICS.items()}
    assert {a: (after[a] or 0) - (before[a] or 0) for a in ACTION_METRICS} == {
        "evict": 2,
        "resize": 3,
        "scale": 1,
    }
    assert (value(anon, "rightsizer_unanswered_updates_total") or 0) - lost_before == 3


def test_recommendations_gauge_follows_the_stored_rows(app: Flask, anon: FlaskClient) -> None:
    seed()  # three workloads, one container each
    assert count_recommendations(db.session) == (3, 3)
    assert value(anon, "rightsizer_recommendations") == 3
    assert value(anon, "rightsizer_recommended_workloads") == 3
    delete_workload(db.session, WorkloadKey("ops", "Deployment", "web"))
    count_recommendations(db.session)
    assert value(anon, "rightsizer_recommendations") == 2
    assert value(anon, "rightsizer_recommended_workloads") == 2


def test_webhook_cache_age(anon: FlaskClient) -> None:
    previous = CACHE_LAST_SUCCESS._value.get()
    try:
        CACHE_LAST_SUCCESS.set(0)  # never loaded: no age at all
        assert value(anon, "rightsizer_webhook_cache_age_seconds") is None
        CACHE_LAST_SUCCESS.set(time.time() - 1000)
        age = value(anon, "rightsizer_webhook_cache_age_seconds")
        assert age is not None and 1000 <= age < 1000 + 3600
    finally:
        CACHE_LAST_SUCCESS.set(previous)


MULTIPROCESS_SCRIPT = """
import json, sys, time
from app import create_app
from app.store.extensions import db
from app.jobs.runner import JobRunner
from app.store.models import AuditEvent
from app.store.recommendations import RECOMMENDATIONS
from app.webhook.metrics import CACHE_LAST_SUCCESS
from flask_migrate import upgrade

class Job:
    name, interval = "recommender", 60.0
    def run_once(self, still_leader):
        return "ok"

app = create_app({"TESTING": True, "JOBS": False, "SQLALCHEMY_DATABASE_URI": sys.argv[1]})
with app.app_context():
    upgrade()
    JobRunner([Job()]).run_one(Job(), lambda: True)
    db.session.add(AuditEvent(actor="rightsizer/scaler", action="scale", object_kind="Deployment",
                              object_ref="shop/web"))
    db.session.commit()
    RECOMMENDATIONS.set(7)
    CACHE_LAST_SUCCESS.set(time.time() - 50)
    print(app.test_client().get("/metrics").get_data(as_text=True))
"""


def test_metrics_merge_across_gunicorn_workers_in_multiprocess_mode(tmp_path: Path) -> None:
    """With PROMETHEUS_MULTIPROC_DIR, two worker processes' values reach one scrape."""
    proc_dir = tmp_path / "prom"
    proc_dir.mkdir()
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(proc_dir)}
    outputs = []
    for i in range(2):  # two "workers", one after the other, each writing its own files
        done = subprocess.run(
            [sys.executable, "-c", MULTIPROCESS_SCRIPT, f"sqlite:///{tmp_path}/db{i}.sqlite"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        outputs.append(samples(done.stdout))
    last = outputs[-1]  # the second scrape sees both processes
    assert last[("rightsizer_job_runs_total", (("job", "recommender"), ("outcome", "ok")))] == 2
    assert last[("rightsizer_scale_changes_total", ())] == 2
    assert last[("rightsizer_recommendations", ())] == 7
    age = last[("rightsizer_webhook_cache_age_seconds", ())]
    assert 50 <= age < 50 + 3600
