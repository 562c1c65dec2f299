"""The webhook's node label cache (app/kube/nodelabels.py) against the simulated cluster, with
the official client: names and labels only, following label changes and deleted nodes, and a
bounded wait for the first listing in its first seconds only."""

from __future__ import annotations

import time
from typing import Any

import pytest
from kubernetes import client

from app.kube import nodelabels
from app.kube.nodelabels import NodeLabelCache
from app.simulator.simulator import Simulator
from tests.support.processes import wait_for

TYPE = "node.kubernetes.io/instance-type"


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return {"nodes": [{"namePrefix": "small", "count": 2, "labels": {TYPE: "m5.large"}}]}


def test_labels_of_each_node_follow_the_cluster(sim: Simulator) -> None:
    api = sim.api_client()
    cache = NodeLabelCache(api).start()
    try:
        assert cache.wait_listed(10)
        assert cache("small-0") is not None and cache("small-0")[TYPE] == "m5.large"
        assert cache("nowhere") is None
        [kept] = [cache.informer.get("", "small-0")]
        # names, labels and what a pod's fit reads (app.core.sizing.node_fit), nothing more
        assert kept["metadata"] == {"name": "small-0", "labels": cache("small-0")}
        assert set(kept["status"]["allocatable"]) == {"cpu", "memory"}
        assert kept["status"]["conditions"] == [{"type": "Ready", "status": "True"}]
        client.CoreV1Api(api).patch_node(
            "small-0", {"spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}}
        )
        wait_for(
            lambda: any(v.taints for v in cache.views() if v.name == "small-0"), 10, "the taint"
        )
        [view] = [v for v in cache.views() if v.name == "small-0"]
        assert view.taints == (("k", "v", "NoSchedule"),) and view.takes_pods
        assert view.cpu_allocatable and view.memory_allocatable
        client.CoreV1Api(api).patch_node("small-1", {"metadata": {"labels": {TYPE: "m5.xlarge"}}})
        wait_for(lambda: (cache("small-1") or {}).get(TYPE) == "m5.xlarge", 10, "the new label")
        sim.remove_node("small-0")
        wait_for(lambda: cache("small-0") is None, 10, "the deleted node forgotten")
    finally:
        cache.stop()
        api.close()


def test_a_cache_that_cannot_list_waits_only_in_its_first_seconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = client.Configuration()
    config.host = "http://127.0.0.1:9"  # nothing listens: the list never succeeds
    api = client.ApiClient(config)
    monkeypatch.setattr(nodelabels, "STARTUP", 0.5)
    cache = NodeLabelCache(api).start()
    try:
        start = time.monotonic()
        assert not cache.wait_listed(0.2)
        assert 0.15 <= time.monotonic() - start < 1.0  # waited, within the window
        time.sleep(0.5)
        start = time.monotonic()
        assert not cache.wait_listed(5)  # after the window: no wait at all
        assert time.monotonic() - start < 0.1
        assert cache("small-0") is None
    finally:
        cache.stop()
        api.close()
