"""ClusterView.pod_metrics reads the PodMetrics LIST as json.loads would, whatever parses it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client

from app.kube.cluster import ClusterView


class Answer:
    def __init__(self, data: bytes) -> None:
        self.data = data


class Custom:
    def __init__(self, data: bytes) -> None:
        self.body = data

    def list_cluster_custom_object(self, *args: Any, **kwargs: Any) -> Answer:
        return Answer(self.body)


def view(data: bytes) -> ClusterView:
    cluster = ClusterView(client.ApiClient())
    cluster.custom = Custom(data)  # type: ignore[assignment]
    return cluster


ITEM = {
    "metadata": {"name": "web-1", "namespace": "shop"},
    "timestamp": "2024-07-01T00:00:00Z",
    "containers": [{"name": "app", "usage": {"cpu": "123456789n", "memory": "1Mi"}}],
}


def test_items_are_the_objects_json_loads_gives() -> None:
    body = json.dumps({"kind": "PodMetricsList", "items": [ITEM, ITEM]}).encode()
    assert view(body).pod_metrics() == json.loads(body)["items"]


def test_what_orjson_refuses_is_read_as_json_loads_reads_it() -> None:
    body = b'{"items": [{"metadata": {"name": "odd-\\ud800"}}]}'  # an escaped lone surrogate
    assert view(body).pod_metrics() == [{"metadata": {"name": "odd-\ud800"}}]


def test_a_malformed_list_is_refused_with_json_loads_error() -> None:
    with pytest.raises(json.JSONDecodeError, match="Expecting"):
        view(b'{"items": [').pod_metrics()
    assert view(b"{}").pod_metrics() == []
