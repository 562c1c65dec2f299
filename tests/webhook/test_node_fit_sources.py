"""The webhook caps a pod to fit a node from its own informers (nodes and DaemonSets, app.webhook
.sources) against the simulated API server, through POST /mutate: a node added or a DaemonSet
created later changes the cap without a restart."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from kubernetes import client as k8s

from app.core.nodes import NodeView
from app.simulator.simulator import Simulator
from app.webhook import node_fit, webhook_of
from app.webhook.sources import ClusterSources
from tests.support.json_bodies import raw_body
from tests.support.pods import amounts, apply_strictly, container, pod
from tests.support.reviews import (
    MI,
    add_policy,
    add_recommendation,
    patch_of,
    post,
    refresh,
    review,
)

GI = 1024 * MI


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    agent = {
        "kind": "DaemonSet",
        "namespace": "shop",
        "name": "agent",
        "containers": [
            {
                "name": "agent",
                "requests": {"cpu": "250m", "memory": "512Mi"},
                "usage": {"cpu": {"base": 0.05}, "memory": {"base": "100Mi"}},
            }
        ],
    }
    return {
        "nodes": [{"namePrefix": "small", "count": 2, "cpu": "2", "memory": "4Gi"}],
        "namespaces": [{"name": "shop"}],
        "workloads": [agent],
    }


def eventually(check: Callable[[], Any], what: str) -> Any:
    pause = threading.Event()
    for _ in range(200):
        value = check()
        if value:
            return value
        pause.wait(0.05)
    pytest.fail(f"never happened: {what}")


def allocatable(api: Any, name: str) -> tuple[int, int]:
    view = NodeView.parse(
        json.loads(raw_body(k8s.CoreV1Api(api).read_node(name, _preload_content=False)))
    )
    assert view.cpu_allocatable is not None and view.memory_allocatable is not None
    return view.cpu_allocatable, view.memory_allocatable


def sized(client: FlaskClient) -> dict[str, int]:
    p = pod(container("app", {"cpu": "1", "memory": "1Gi"}))
    body = post(client, review(p)).get_json()["response"]
    return amounts(apply_strictly(p, patch_of(body))["spec"]["containers"][0], "requests")


def test_the_webhook_caps_from_its_node_and_daemonset_informers(
    app: Flask, client: FlaskClient, sim: Simulator, api: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(node_fit, "REBUILD_EVERY", 0.0)  # rebuilt at each change
    hook = webhook_of(app)
    hook.sources = ClusterSources(api_client=api)
    add_policy("Initial")
    add_recommendation("app", 16000, 64 * GI)
    refresh(app)
    try:
        hook.start(wait=10)
        assert hook.node_fit is not None
        cpu, memory = allocatable(api, "small-0")
        room = {"cpu": cpu - 250, "memory": memory - 512 * MI}  # less the agent DaemonSet
        eventually(lambda: sized(client) == room, f"the pod capped to {room}")
        sim.add_node("big-0", cpu="8", memory="32Gi")
        cpu, memory = allocatable(api, "big-0")
        room = {"cpu": cpu - 250, "memory": memory - 512 * MI}
        eventually(lambda: sized(client) == room, f"the pod capped to the new node, {room}")
    finally:
        hook.stop()
