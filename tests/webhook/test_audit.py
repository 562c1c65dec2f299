"""Mutations counted per workload in memory and flushed to the audit trail in the background."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select, text

from app.config import override
from app.core.sizing.boost import BoostOptions
from app.core.workload_key import WorkloadKey
from app.store import audit as audit_trail
from app.store.extensions import db
from app.store.models import AuditEvent
from app.store.snapshot import build_snapshot
from app.webhook import webhook_of
from app.webhook.audit import MutationCount, MutationCounter
from app.webhook.cache import WebhookCache
from app.webhook.handler import Webhook
from tests.support.reviews import (
    add_policy,
    add_recommendation,
    app_pod,
    metric,
    patch_of,
    post,
    refresh,
    review,
)

WEB = WorkloadKey("shop", "Deployment", "web")
API = WorkloadKey("shop", "Deployment", "api")


class Clock:
    def __init__(self, t: float = 1_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


class Store:
    def __init__(self) -> None:
        self.batches: list[list[MutationCount]] = []
        self.down = False

    def __call__(self, counts: Sequence[MutationCount]) -> None:
        if self.down:
            raise ConnectionError("database is down")
        self.batches.append(list(counts))


def test_counts_per_workload_and_one_event_each_per_flush() -> None:
    store, clock = Store(), Clock()
    counter = MutationCounter(store, clock=clock)
    for _ in range(3):
        counter.count(WEB, "web")
        clock.t += 1
    counter.count(API, "ns-default")
    assert counter.flush() is True
    [batch] = store.batches
    assert [(c.workload, c.pods, c.policy) for c in batch] == [
        (API, 1, "ns-default"),
        (WEB, 3, "web"),
    ]
    web = batch[1]
    assert web.last - web.first == 2
    assert web.message() == "set requests on 3 new pods"
    assert web.details()["pods"] == 3
    assert counter.pending() == {}
    assert counter.flush() is True and len(store.batches) == 1  # nothing new: nothing written


def test_a_database_outage_keeps_the_counts_for_the_next_flush(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = Store()
    counter = MutationCounter(store)
    counter.count(WEB, "web")
    counter.count(WEB, "web")
    store.down = True
    failed_before = metric("rightsizer_webhook_audit_flushes_total", result="failed")
    with caplog.at_level(logging.WARNING, logger="app.webhook.audit"):
        assert counter.flush() is False
        counter.count(WEB, "web")  # counting goes on meanwhile
        counter.count(API, "api")
        assert counter.flush() is False
    assert len([r for r in caplog.records if "cannot write" in r.getMessage()]) == 1
    assert metric("rightsizer_webhook_audit_flushes_total", result="failed") == failed_before + 2
    store.down = False
    assert counter.flush() is True
    [batch] = store.batches
    assert {c.workload: c.pods for c in batch} == {WEB: 3, API: 1}


def test_memory_is_bounded_while_the_database_is_down() -> None:
    store = Store()
    store.down = True
    counter = MutationCounter(store, max_workloads=2)
    before = metric("rightsizer_webhook_audit_dropped_total")
    for name in ("a", "b", "c"):
        counter.count(WorkloadKey("shop", "Deployment", name), "p")
    assert len(counter.pending()) == 2
    assert metric("rightsizer_webhook_audit_dropped_total") == before + 1
    counter.flush()
    assert len(counter.pending()) == 2


def test_flushes_only_when_the_interval_has_passed() -> None:
    store, clock = Store(), Clock()
    counter = MutationCounter(store, interval=60, clock=clock)
    counter.count(WEB, "web")
    assert counter.maybe_flush() is None and store.batches == []
    clock.t += 60
    assert counter.maybe_flush() is True and len(store.batches) == 1


def test_the_cache_thread_runs_periodic_tasks_and_survives_their_failures() -> None:
    ran = threading.Event()
    calls: list[str] = []

    def broken() -> None:
        calls.append("broken")
        raise RuntimeError("boom")

    def ok() -> None:
        calls.append("ok")
        if calls.count("ok") >= 2:
            ran.set()

    cache = WebhookCache(lambda: build_snapshot([], [], 0.0), interval=0.01, periodic=[broken, ok])
    cache.start()
    try:
        assert ran.wait(10)
    finally:
        cache.stop()
    assert calls.count("broken") >= 2  # a failing task does not stop the loop


def test_patched_pods_become_audit_events(app: Flask, client: FlaskClient) -> None:
    add_policy()
    add_recommendation()
    refresh(app)
    hook = webhook_of(app)
    assert hook.mutations is not None
    post(client, review(app_pod()))
    post(client, review(app_pod()))
    post(client, review(app_pod(), dry_run=True))  # dry run: writes nothing, counts nothing
    assert {w: c.pods for w, c in hook.mutations.pending().items()} == {WEB: 2}
    assert db.session.scalars(select(AuditEvent)).all() == []  # nothing written per request

    # The database is unavailable for the audit table: the counts wait, the webhook goes on.
    db.session.execute(text("ALTER TABLE audit_events RENAME TO audit_events_away"))
    db.session.commit()
    assert hook.mutations.flush() is False
    assert "patch" in post(client, review(app_pod())).get_json()["response"]
    db.session.execute(text("ALTER TABLE audit_events_away RENAME TO audit_events"))
    db.session.commit()

    assert hook.mutations.flush() is True
    [event] = db.session.scalars(select(AuditEvent)).all()
    assert (event.actor, event.action, event.object_kind, event.object_ref) == (
        "rightsizer/webhook",
        "mutate",
        "Deployment",
        "shop/web",
    )
    assert event.details["pods"] == 3 and event.details["policy"] == "web"
    assert event.message == "set requests on 3 new pods"
    # ... and the REST API's audit trail lists it.
    events = client.get("/api/v1/events", headers=auth_headers(app)).get_json()
    assert [e["action"] for e in events["items"]] == ["mutate"]


def test_an_audit_event_keeps_the_time_of_the_admission_not_of_the_flush(
    app: Flask, client: FlaskClient
) -> None:
    """A pod sized at 12:00:00 and written at 12:01:00, after an eviction at 12:00:30, is listed
    at 12:00:00, below that eviction: the trail reads in the order things happened."""
    add_policy()
    add_recommendation()
    refresh(app)
    hook = webhook_of(app)
    assert hook.mutations is not None
    admitted = datetime(2024, 7, 4, 12, tzinfo=UTC)
    clock = Clock(admitted.timestamp())
    hook.mutations.clock = clock
    post(client, review(app_pod()))
    clock.t += 30
    audit_trail.record(db.session, "rightsizer/updater", "evict", "Pod", "shop/web-1", "x", {})
    db.session.get_one(AuditEvent, 1).time = admitted + timedelta(seconds=30)
    db.session.commit()
    clock.t += 30
    assert hook.mutations.flush() is True
    mutate = db.session.scalars(select(AuditEvent).where(AuditEvent.action == "mutate")).one()
    assert mutate.time.replace(tzinfo=UTC) == admitted
    events = client.get("/api/v1/events", headers=auth_headers(app)).get_json()
    assert [(e["action"], e["time"]) for e in events["items"]] == [
        ("evict", "2024-07-04T12:00:30Z"),
        ("mutate", "2024-07-04T12:00:00Z"),
    ]


def auth_headers(app: Flask) -> dict[str, str]:
    override(app, {"PUBLIC_READS": True})
    return {}


def test_a_startup_boost_is_applied_by_mutate_and_counted(app: Flask, client: FlaskClient) -> None:
    boost = {"startupBoost": {"cpu": {"type": "Factor", "factor": 2}}}
    add_policy("Off", target_kind="Deployment", target_name="web", update_options=boost)
    add_recommendation()
    refresh(app)
    hook = webhook_of(app)
    # the webhook as init_app builds it with RIGHTSIZER_MAX_CPU_BOOST=1500m
    boosting = Webhook(
        hook.cache, autostart=False, mutations=hook.mutations, boost=BoostOptions(max_cpu=1500)
    )
    status, doc = boosting.admit(json.dumps(review(app_pod())).encode())
    assert status == 200
    ops = {op["path"]: op.get("value") for op in patch_of(doc["response"])}
    # updateMode Off sizes nothing but boosts: 1 core x 2, capped at 1500m; limit 2 x 1.5
    assert ops["/spec/containers/0/resources/requests/cpu"] == "1500m"
    assert ops["/spec/containers/0/resources/limits/cpu"] == "3"
    assert hook.mutations is not None and hook.mutations.flush() is True
    [event] = db.session.scalars(select(AuditEvent)).all()
    assert event.details["boosted"] == 1
    assert event.message == "set requests on 1 new pod, 1 with a CPU startup boost"
