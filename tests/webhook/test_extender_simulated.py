"""The simulated cluster's scheduler calling rightsizer's extender over HTTP, configured as a
KubeSchedulerConfiguration configures kube-scheduler: pods go to the node whose real usage is
lowest, where the default scores (by requests) would have spread them."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from kubernetes import client
from werkzeug.serving import make_server

from app.core.placement.windows import NodeLevel
from app.simulator.control.extenders import parse_extenders
from app.simulator.simulator import Simulator
from app.store.extensions import db
from app.store.node_levels import save_node_levels
from app.webhook import extender_of
from tests.support.json_bodies import plain
from tests.support.reviews import refresh

GI = 1 << 30


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return {
        "nodes": [{"namePrefix": "worker", "count": 3, "cpu": "8", "memory": "32Gi"}],
        "namespaces": ["shop"],
    }


@pytest.fixture
def served(app: Flask) -> Iterator[str]:
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/scheduler"
    server.shutdown()


def pod(name: str) -> dict[str, Any]:
    requests = {"cpu": "500m", "memory": "256Mi"}
    return {
        "metadata": {"name": name},
        "spec": {
            "containers": [{"name": "app", "image": "a", "resources": {"requests": requests}}]
        },
    }


def test_pods_go_to_the_lowest_node(app: Flask, served: str, sim: Simulator, api: Any) -> None:
    allocatable = {
        n.metadata.name: n.status.allocatable for n in client.CoreV1Api(api).list_node().items
    }
    assert sorted(allocatable) == ["worker-0", "worker-1", "worker-2"]
    levels = [
        NodeLevel(name, 7740, 30 * GI, (cpu,) * 3, (0.3,) * 3, 1_000_000.0, cpu, 0.3)
        for name, cpu in (("worker-0", 0.7), ("worker-1", 0.2), ("worker-2", 0.5))
    ]
    save_node_levels(db.session, levels, 0.0)
    db.session.commit()
    assert extender_of(app).levels.refresh()
    refresh(app)
    core = client.CoreV1Api(api)
    core.create_namespaced_pod("shop", plain(pod("before")))  # no extender: the default scores
    sim.settle()
    sim.cluster.extenders = parse_extenders(
        [
            {
                "urlPrefix": served,
                "filterVerb": "filter",
                "prioritizeVerb": "prioritize",
                "weight": 5,
                "nodeCacheCapable": True,
                "ignorable": True,
            }
        ]
    )
    for i in range(3):
        core.create_namespaced_pod("shop", plain(pod(f"p{i}")))
        sim.settle()
    nodes = {p.metadata.name: p.spec.node_name for p in core.list_namespaced_pod("shop").items}
    assert nodes["before"] == "worker-0"  # requests alone: all equal, the first
    assert {nodes[f"p{i}"] for i in range(3)} == {"worker-1"}
