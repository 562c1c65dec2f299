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
            {"metadata": {"name": "new"}, "spec": {"containers": [{"name": "app", "image": "a"}]}},
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
