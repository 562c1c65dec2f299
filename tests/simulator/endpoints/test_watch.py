"""Watches: resuming from a resourceVersion, 410 Gone, bookmarks, selector transitions."""

from __future__ import annotations

import json
import threading

import pytest
from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException

from app.simulator.testing import running_simulator
from tests.support.json_bodies import plain, raw_answer
from tests.support.simulators import SMALL, pod_body


def test_watch_from_list_resource_version_sees_only_later_changes(sim, core):
    rv = core.list_namespaced_pod("other").metadata.resource_version
    core.create_namespaced_pod("other", pod_body("a"))
    sim.settle()  # the scheduler binds it: one MODIFIED
    core.patch_namespaced_pod("a", "other", {"metadata": {"labels": {"x": "1"}}})
    core.delete_namespaced_pod("a", "other")
    w = watch.Watch()
    events = [
        (e["type"], e["object"].metadata.name)
        for e in w.stream(core.list_namespaced_pod, "other", resource_version=rv, timeout_seconds=1)
    ]
    assert events == [("ADDED", "a"), ("MODIFIED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]


def test_watch_without_resource_version_starts_with_synthetic_adds(core):
    w = watch.Watch()
    events = list(w.stream(core.list_namespaced_pod, "shop", timeout_seconds=1))
    assert [e["type"] for e in events] == ["ADDED"] * 3


def test_watch_streams_live_events_to_a_blocked_watcher(core):
    rv = core.list_namespaced_pod("other").metadata.resource_version
    got: list[tuple[str, str]] = []
    w = watch.Watch()

    def consume() -> None:
        for e in w.stream(
            core.list_namespaced_pod, "other", resource_version=rv, timeout_seconds=20
        ):
            got.append((e["type"], e["object"].metadata.name))
            w.stop()

    t = threading.Thread(target=consume)
    t.start()
    core.create_namespaced_pod("other", pod_body("live"))
    t.join(timeout=20)
    assert not t.is_alive() and got == [("ADDED", "live")]


def test_too_old_resource_version_is_410_gone_as_an_error_event():
    with running_simulator(SMALL, watch_window=5) as sim:
        api = sim.api_client()
        core = client.CoreV1Api(api)
        rv = core.list_namespaced_pod("other").metadata.resource_version
        for i in range(12):  # more writes than the window keeps
            core.create_namespaced_pod("other", plain(pod_body(f"p{i}")))
        w = watch.Watch()
        with pytest.raises(ApiException) as e:
            list(
                w.stream(core.list_namespaced_pod, "other", resource_version=rv, timeout_seconds=1)
            )
        assert e.value.status == 410 and "too old resource version" in e.value.reason
        # The raw stream is one ERROR event carrying a Status, as kube-apiserver sends it.
        resp = core.list_namespaced_pod(
            "other", watch=True, resource_version=rv, timeout_seconds=1, _preload_content=False
        )
        lines = [line for line in raw_answer(resp).read().decode().splitlines() if line]
        assert len(lines) == 1
        event = json.loads(lines[0])
        assert event["type"] == "ERROR" and event["object"]["kind"] == "Status"
        assert event["object"]["code"] == 410 and event["object"]["reason"] == "Expired"
        # A continue token from before the compaction is too old as well.
        with pytest.raises(ApiException) as e:
            page = core.list_namespaced_pod("other", limit=1)
            for i in range(12):
                core.create_namespaced_pod("other", plain(pod_body(f"q{i}")))
            core.list_namespaced_pod("other", limit=1, _continue=page.metadata._continue)
        assert e.value.status == 410
        api.close()


def test_bookmarks_when_allowed(core):
    rv = core.list_namespaced_pod("other").metadata.resource_version
    resp = core.list_namespaced_pod(
        "other",
        watch=True,
        resource_version=rv,
        allow_watch_bookmarks=True,
        timeout_seconds=1,
        _preload_content=False,
    )
    events = [json.loads(x) for x in resp.read().decode().splitlines() if x]
    assert events and events[-1]["type"] == "BOOKMARK"
    assert int(events[-1]["object"]["metadata"]["resourceVersion"]) >= int(rv)
    # sendInitialEvents' end bookmark (k8s.io/initial-events-end) needs the WatchList gate, off
    # by default in 1.33 (this cluster's release): endpoints/test_watch_list.py on 1.34.
    # Without allowWatchBookmarks there are none.
    resp = core.list_namespaced_pod(
        "other", watch=True, resource_version=rv, timeout_seconds=1, _preload_content=False
    )
    assert not [x for x in resp.read().decode().splitlines() if x]


def test_label_selector_watch_sees_objects_leave_and_enter(sim, core):
    core.create_namespaced_pod("other", pod_body("a", labels={"app": "x"}))
    sim.settle()
    rv = core.list_namespaced_pod("other").metadata.resource_version
    core.patch_namespaced_pod("a", "other", {"metadata": {"labels": {"app": "y"}}})
    core.patch_namespaced_pod("a", "other", {"metadata": {"labels": {"app": "x"}}})
    w = watch.Watch()
    events = [
        e["type"]
        for e in w.stream(
            core.list_namespaced_pod,
            "other",
            label_selector="app=x",
            resource_version=rv,
            timeout_seconds=1,
        )
    ]
    assert events == ["DELETED", "ADDED"]
