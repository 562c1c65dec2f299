"""ClusterView.pod_metrics reads the PodMetrics LIST into the fields the recommender uses, as
json.loads would give them, whatever reads it (app.core.recommend.podmetrics)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client

from app.core.recommend.podmetrics import (
    ContainerMetrics,
    ContainerUsage,
    PodMetrics,
    PodMetricsMeta,
)
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


READ = PodMetrics(
    PodMetricsMeta("web-1", "shop"),
    "2024-07-01T00:00:00Z",
    [ContainerMetrics("app", ContainerUsage("123456789n", "1Mi"))],
)


def test_items_are_read_into_their_fields() -> None:
    body = json.dumps({"kind": "PodMetricsList", "items": [ITEM, ITEM]}).encode()
    assert view(body).pod_metrics() == [READ, READ]


def test_what_the_typed_reading_refuses_is_read_as_json_loads_reads_it() -> None:
    body = b'{"items": [{"metadata": {"name": "odd-\\ud800"}}]}'  # an escaped lone surrogate
    assert view(body).pod_metrics() == [PodMetrics(PodMetricsMeta("odd-\ud800"))]


def test_a_malformed_list_is_refused_with_json_loads_error() -> None:
    with pytest.raises(json.JSONDecodeError, match="Expecting"):
        view(b'{"items": [').pod_metrics()
    with pytest.raises(ValueError, match="a PodMetricsList is a JSON object, got list"):
        view(b"[]").pod_metrics()
    assert view(b"{}").pod_metrics() == []
    assert view(b'{"items": null}').pod_metrics() == []
