"""Fixtures: a simulated cluster per test, reached only through the official client."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from app.simulator.simulator import Simulator
from app.simulator.testing import running_simulator

SMALL: dict[str, Any] = {
    "seed": 7,
    "nodes": [
        {
            "namePrefix": "node",
            "count": 3,
            "cpu": "4",
            "memory": "16Gi",
            "labels": {"pool": "general"},
        }
    ],
    "namespaces": [{"name": "shop", "labels": {"team": "shop"}}, "other"],
    "workloads": [
        {
            "kind": "Deployment",
            "namespace": "shop",
            "name": "web",
            "replicas": 3,
            "containers": [
                {
                    "name": "app",
                    "image": "nginx:1.27",
                    "requests": {"cpu": "250m", "memory": "256Mi"},
                    "limits": {"memory": "512Mi"},
                    "usage": {"cpu": {"base": 0.1}, "memory": {"base": "100Mi"}},
                }
            ],
        },
    ],
}


@pytest.fixture
def sim() -> Iterator[Simulator]:
    with running_simulator(SMALL) as s:
        yield s


@pytest.fixture
def api_client(sim: Simulator) -> Iterator[client.ApiClient]:
    c = sim.api_client()
    yield c
    c.close()


@pytest.fixture
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


@pytest.fixture
def apps(api_client: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(api_client)


def pod_body(
    name: str = "",
    *,
    labels: dict[str, str] | None = None,
    cpu: str = "100m",
    memory: str = "128Mi",
    limit_memory: str | None = None,
    generate_name: str | None = None,
) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": {"cpu": cpu, "memory": memory}}
    if limit_memory:
        resources["limits"] = {"memory": limit_memory}
    meta: dict[str, Any] = {"labels": labels or {"app": "test"}}
    if name:
        meta["name"] = name
    if generate_name:
        meta["generateName"] = generate_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "image": "busybox:1.36", "resources": resources}]},
    }
