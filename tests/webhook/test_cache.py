"""The webhook cache's refresh thread, as a server (not the test fixtures) runs it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from flask import Flask

from app import create_app
from app.core.workload_key import WorkloadKey
from app.store.extensions import db
from app.store.snapshot import Snapshot, build_snapshot
from app.webhook import webhook_of
from app.webhook.cache import WebhookCache
from tests.support.reviews import add_policy, add_recommendation, app_pod, post, review

WEB = WorkloadKey("shop", "Deployment", "web")


@pytest.fixture
def server_app(app: Flask, database_url: str) -> Iterator[Flask]:
    """A second app on the migrated database, configured like a server (not TESTING)."""
    served = create_app({"SQLALCHEMY_DATABASE_URI": database_url})
    yield served
    webhook_of(served).stop()  # also writes its audit counts while the database exists
    with served.app_context():
        db.engine.dispose()


def wait_for(cache: WebhookCache, done: threading.Event, predicate: object) -> None:
    """Waits (bounded) for the refresh thread to load a snapshot satisfying `predicate`."""
    for _ in range(200):
        snap = cache.snapshot
        if snap is not None and predicate(snap):  # type: ignore[operator]
            return
        done.wait(0.05)
    pytest.fail("the refresh thread never loaded the expected snapshot")


def test_first_review_starts_the_thread_and_waits_for_its_first_load(server_app: Flask) -> None:
    add_policy()
    add_recommendation()
    cache = webhook_of(server_app).cache
    assert not cache.running and cache.snapshot is None
    body = post(server_app.test_client(), review(app_pod())).get_json()
    assert "patch" in body["response"]
    assert cache.running


def test_the_thread_picks_up_new_rows(server_app: Flask) -> None:
    cache = webhook_of(server_app).cache
    cache.interval = 0.05
    cache.start(wait=10)
    assert cache.snapshot is not None and cache.snapshot.policy_for(WEB) is None
    add_policy()
    add_recommendation()
    # both rows: a load between the two commits sees the policy alone
    wait_for(
        cache,
        threading.Event(),
        lambda s: s.policy_for(WEB) is not None and WEB in s.recommendations,
    )
    snap = cache.snapshot
    assert snap is not None
    assert snap.recommendations[WEB]["app"].target.cpu == 250
    assert snap.counts == {"policies": 1, "recommendations": 1}


def test_a_forked_process_starts_its_own_thread() -> None:
    loads = []

    def load() -> Snapshot:
        loads.append(1)
        return build_snapshot([], [], 0.0)

    cache = WebhookCache(load, interval=3600)
    cache.start(wait=10)
    first, first_stop = cache._thread, cache._stop
    cache._pid = -1  # as seen from a child forked after start: that thread is not ours
    assert not cache.running
    cache.start(wait=10)
    assert cache.running and cache._thread is not first
    for _ in range(200):  # the new thread loads at once (bounded wait, no timing asserted)
        if len(loads) == 2:
            break
        threading.Event().wait(0.05)
    assert len(loads) == 2
    cache.stop()
    first_stop.set()  # in a real child the parent's thread does not exist; here, end it
    assert first is not None
    first.join(10)


def test_a_database_down_at_start_costs_one_wait_not_one_per_review() -> None:
    """Calls before the first load wait for what is left of the window opened when the thread
    started; after it, none waits (a clock of our own: no time is asserted)."""

    def load() -> Snapshot:
        raise OSError("connection refused")

    cache = WebhookCache(load, interval=3600)
    now = [100.0]
    cache._monotonic = lambda: now[0]
    waits: list[float | None] = []

    class RecordingEvent(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            waits.append(timeout)
            return False

    cache._loaded = RecordingEvent()
    assert cache.start(wait=0.5) is True
    now[0] = 100.2
    assert cache.start(wait=0.5) is False  # within the window: what is left of it
    now[0] = 100.5
    assert cache.start(wait=0.5) is False  # the window has passed: no wait
    assert cache.start(wait=0.5) is False
    assert waits == [0.5, pytest.approx(0.3)]
    assert cache.state() == (None, "cache_empty")
    cache.stop()


def test_reviews_made_during_the_first_load_wait_for_it_not_only_the_first() -> None:
    """Failed before: only the call that started the thread waited; a review on another thread
    meanwhile found the cache empty and allowed its pod unsized (15 of 16 reviews sent as a new
    server came up)."""
    release = threading.Event()

    def load() -> Snapshot:
        release.wait(10)
        return build_snapshot([], [], time.monotonic())

    cache = WebhookCache(load, interval=3600)
    first = threading.Thread(target=cache.start, kwargs={"wait": 10})
    first.start()
    for _ in range(200):  # the first call has started the thread (bounded wait)
        if cache.running:
            break
        release.wait(0.05)
    assert cache.running
    seen: list[str] = []

    def review() -> None:
        cache.start(wait=10)
        seen.append(cache.state()[1])

    second = threading.Thread(target=review)
    second.start()
    second.join(0.2)  # the load is still held: before the fix, the review is done by now
    release.set()
    second.join(10)
    first.join(10)
    assert seen == ["fresh"]
    cache.stop()


def test_a_reload_of_the_same_rows_keeps_the_patch_cache_hitting(server_app: Flask) -> None:
    add_policy()
    add_recommendation()
    hook = webhook_of(server_app)
    hook.cache.interval = 3600  # refreshed by hand below
    client = server_app.test_client()
    assert "patch" in post(client, review(app_pod())).get_json()["response"]
    misses = hook.patches.misses
    assert hook.cache.refresh()  # new objects for the same values
    assert "patch" in post(client, review(app_pod())).get_json()["response"]
    assert hook.patches.misses == misses  # answered from the cache (a miss before carry_forward)
    add_recommendation(cpu=300, workload=("shop", "Deployment", "web"), container_name="side")
    assert hook.cache.refresh()
    post(client, review(app_pod()))
    assert hook.patches.misses == misses + 1  # a changed recommendation is computed again
