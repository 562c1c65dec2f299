"""Scale mode (`rightsizer sim --nodes N --pods M`) at a size a test can afford, through the
official client and plain HTTP for /sim/stats, as the benchmarks use it at 5000 x 150000."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
import requests
from kubernetes import client

from app.simulator.simulator import Simulator
from app.simulator.workload.clock import rfc3339
from app.simulator.workload.usage import SAMPLE
from tests.support.json_bodies import json_object, raw_answer, raw_body

NODES, PODS = 40, 1000


@pytest.fixture(scope="module")
def scenario() -> None:
    """Scale mode generates the cluster: no scenario."""
    return None


@pytest.fixture(scope="module")
def sim_options() -> dict[str, Any]:
    return {"nodes": NODES, "pods": PODS}


def all_pods(core: client.CoreV1Api, limit: int) -> list[dict[str, Any]]:
    items, token = [], None
    while True:
        resp = core.list_pod_for_all_namespaces(
            limit=limit, _continue=token, _preload_content=False
        )
        page = json.loads(raw_body(resp))
        items += page["items"]
        token = page["metadata"].get("continue")
        if not token:
            return items


def test_scale_mode_generates_the_asked_cluster_in_steady_state(module_sim: Simulator) -> None:
    api = module_sim.api_client()
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    nodes = core.list_node().items
    assert len(nodes) == NODES
    pods = all_pods(core, limit=300)
    assert len(pods) == PODS
    assert {p["status"]["phase"] for p in pods} == {"Running"}
    node_names = {n.metadata.name for n in nodes}
    assert {p["spec"]["nodeName"] for p in pods} <= node_names
    # Every pod belongs to a ReplicaSet of a Deployment, as the recommender resolves them.
    rs = {r.metadata.name for r in apps.list_replica_set_for_all_namespaces().items}
    owners = {p["metadata"]["ownerReferences"][0]["name"] for p in pods}
    assert owners <= rs
    deployments = apps.list_deployment_for_all_namespaces().items
    assert sum(d.spec.replicas for d in deployments) == PODS
    metrics = json_object(
        client.CustomObjectsApi(api).list_cluster_custom_object("metrics.k8s.io", "v1beta1", "pods")
    )
    assert len(metrics["items"]) == PODS


def test_sim_stats_over_http_tell_lists_from_watches_and_reset(module_sim: Simulator) -> None:
    stats_url = f"{module_sim.url}/sim/stats"
    assert requests.delete(stats_url, timeout=5).ok
    core = client.CoreV1Api(module_sim.api_client())
    all_pods(core, limit=400)  # 3 pages: 3 LIST requests
    w = core.list_pod_for_all_namespaces(
        watch=True, resource_version="0", timeout_seconds=1, _preload_content=False
    )
    raw_answer(w).release_conn()
    core.read_node(core.list_node(limit=1).items[0].metadata.name)
    stats = requests.get(stats_url, timeout=5).json()
    assert stats["byClass"]["LIST"] == 4  # 3 pod pages + 1 node page
    assert stats["byClass"]["WATCH"] == 1
    assert stats["byClass"]["other"] == 1
    assert stats["byResource"]["pods"]["list"] == 3
    assert requests.delete(stats_url, timeout=5).json()["byClass"].get("LIST", 0) == 0


def test_metrics_are_scraped_when_the_cluster_starts_and_when_the_clock_moves() -> None:
    """As metrics-server's background scrape has them ready: the first LIST of a window serves
    the kept answer, it does not compute every pod's usage (endpoints.metrics)."""
    with Simulator(nodes=4, pods=40) as sim:
        metrics = sim.server.api.metrics

        def window() -> float:
            return math.floor(sim.cluster.now() / SAMPLE) * SAMPLE

        started = metrics._scrape
        assert started is not None and started.at == window()
        assert requests.post(f"{sim.url}/sim/clock?advance=60", timeout=5).ok
        moved = metrics._scrape
        assert moved is not None and moved is not started and moved.at == window()
        listed = json_object(
            client.CustomObjectsApi(sim.api_client()).list_cluster_custom_object(
                "metrics.k8s.io", "v1beta1", "pods"
            )
        )
        assert metrics._scrape is moved  # served from the scrape, not a new one
        assert {p["timestamp"] for p in listed["items"]} == {rfc3339(moved.at)}
