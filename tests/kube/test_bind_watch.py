"""The watch of binds the scheduler extender's hot spots are fed from (app.kube.binds), against the
simulated API server: pods bound from now on are reported once, deleted ones too, and the
pods bound before it started are not sent at all."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from kubernetes import client

from app.kube.binds import BindWatch
from app.simulator.simulator import Simulator
from tests.support.json_bodies import plain


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return {
        "nodes": [{"namePrefix": "worker", "count": 2, "cpu": "4", "memory": "8Gi"}],
        "namespaces": ["shop"],
        "objects": [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "old", "namespace": "shop"},
                "spec": {"containers": [{"name": "app", "image": "app"}]},
            }
        ],
    }


def wait_for(check: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_binds_from_now_on(sim: Simulator, api: Any) -> None:
    bound: list[dict[str, Any]] = []
    gone: list[str] = []
    lock = threading.Lock()

    def on_bound(pod: dict[str, Any]) -> None:
        with lock:
            bound.append(pod)

    def on_gone(pod: dict[str, Any]) -> None:
        with lock:
            gone.append(pod["metadata"]["uid"])

    watch = BindWatch(api, on_bound, on_gone).start()
    try:
        assert watch.watching.wait(30)
        core = client.CoreV1Api(api)
        core.create_namespaced_pod(
            "shop",
            plain(
                {
                    "metadata": {"name": "new"},
                    "spec": {"containers": [{"name": "app", "image": "a"}]},
                }
            ),
        )
        sim.settle()
        wait_for(lambda: bound)
        pod = core.read_namespaced_pod("new", "shop")
        core.patch_namespaced_pod("new", "shop", {"metadata": {"labels": {"x": "y"}}})
        core.delete_namespaced_pod("new", "shop", grace_period_seconds=0)
        sim.settle()
        wait_for(lambda: gone)
        with lock:
            assert [p["metadata"]["name"] for p in bound] == ["new"]  # not "old", not twice
            assert bound[0]["spec"]["nodeName"] == pod.spec.node_name
            assert gone == [pod.metadata.uid]
    finally:
        watch.stop()


def test_binds_made_while_no_watch_was_open_are_not_missed(sim: Simulator, api: Any) -> None:
    """Failed before: a watch that ended (its timeout, a dropped connection) started again from
    a fresh LIST, so the pods bound in between were never reported. It resumes from the last
    resourceVersion it saw: the API server sends them."""
    bound: list[str] = []
    lock = threading.Lock()

    def on_bound(pod: dict[str, Any]) -> None:
        with lock:
            bound.append(pod["metadata"]["name"])

    core = client.CoreV1Api(api)

    def create(name: str) -> None:
        core.create_namespaced_pod(
            "shop",
            plain(
                {
                    "metadata": {"name": name},
                    "spec": {"containers": [{"name": "app", "image": "a"}]},
                }
            ),
        )
        sim.settle()

    watch = BindWatch(api, on_bound, lambda pod: None).start()
    try:
        assert watch.watching.wait(30)
        create("before-gap")
        wait_for(lambda: bound == ["before-gap"])
        watch.stop()  # the watch ends at its next event: the first bind of the gap
        create("in-gap-1")
        wait_for(lambda: not watch.watching.is_set())
        create("in-gap-2")
        watch.start()
        wait_for(lambda: len(bound) == 3)
        create("after-gap")
        wait_for(lambda: len(bound) == 4)
        with lock:
            assert bound == ["before-gap", "in-gap-1", "in-gap-2", "after-gap"]
    finally:
        watch.stop()
        for name in ("before-gap", "in-gap-1", "in-gap-2", "after-gap"):
            core.delete_namespaced_pod(name, "shop", grace_period_seconds=0)
