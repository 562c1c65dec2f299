"""metrics.k8s.io from the real metrics-server, through kube-apiserver's aggregator, scraping the
usage kwok emulates (tests/realkube/metrics.py); and rightsizer's recommender learning from it.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.utils import parse_quantity

from tests.realkube import metrics
from tests.realkube.cluster import RealCluster
from tests.support import vpa_oracle
from tests.support.json_bodies import plain
from tests.support.processes import AppProcess, recommendations, wait_for

NS, OWN_NS = "metrics-real", "rightsizer-metrics"
PAUSE = "registry.k8s.io/pause:3.10"


@pytest.fixture(scope="module")
def namespace(real_cluster: RealCluster) -> Iterator[str]:
    with real_cluster.api() as api:
        client.CoreV1Api(api).create_namespace(plain({"metadata": {"name": NS}}))
    yield NS


def container_usage(found: dict[str, Any] | None, name: str) -> dict[str, Decimal] | None:
    for c in (found or {}).get("containers") or []:
        if c["name"] == name:
            return {k: parse_quantity(v) for k, v in c["usage"].items()}
    return None


def near(usage: dict[str, Decimal] | None, cpu: str, memory: str) -> bool:
    """Memory is a gauge, served as set; CPU a rate metrics-server derives from kwok's counter
    between two scrapes (each side's clock read a little apart): within 5%."""
    if usage is None:
        return False
    want = parse_quantity(cpu)
    return usage["memory"] == parse_quantity(memory) and abs(usage["cpu"] - want) <= want / 20


def test_the_api_service_is_available(real_cluster: RealCluster) -> None:
    metrics.wait_available(real_cluster)
    condition = metrics.api_service_available(real_cluster)
    assert condition is not None and condition["status"] == "True", condition
    with real_cluster.api() as api:
        groups = {g.name for g in client.ApisApi(api).get_api_versions().groups}
    assert "metrics.k8s.io" in groups


def test_pod_and_node_metrics_serve_the_usage_set(
    real_cluster: RealCluster, namespace: str
) -> None:
    metrics.wait_available(real_cluster)
    metrics.set_usage(real_cluster, namespace, "busy", cpu="250m", memory="300Mi")
    pod = {
        "metadata": {"name": "busy"},
        "spec": {"containers": [{"name": "app", "image": PAUSE}]},
    }
    with real_cluster.api() as api:
        client.CoreV1Api(api).create_namespaced_pod(namespace, plain(pod))
    first = metrics.wait_pod_metrics(real_cluster, namespace, "busy")
    assert [c["name"] for c in first["containers"]] == ["app"], first
    found = wait_for(
        lambda: (lambda m: m if near(container_usage(m, "app"), "250m", "300Mi") else None)(
            metrics.pod_metrics(real_cluster, namespace, "busy")
        ),
        120,
        "PodMetrics of busy at 250m and 300Mi",
        interval=1,
    )
    assert found["kind"] == "PodMetrics" and found["metadata"]["namespace"] == namespace

    # the usage is live: changed, the next scrapes serve it
    metrics.set_usage(real_cluster, namespace, "busy", cpu="500m", memory="400Mi")
    wait_for(
        lambda: near(
            container_usage(metrics.pod_metrics(real_cluster, namespace, "busy"), "app"),
            "500m",
            "400Mi",
        ),
        120,
        "PodMetrics of busy at 500m and 400Mi",
        interval=1,
    )

    # the node's usage is the sum of its pods' (each other pod uses kwok's default 1Mi)
    with real_cluster.api() as api:
        node_name = client.CoreV1Api(api).read_namespaced_pod("busy", namespace).spec.node_name
    node = wait_for(
        lambda: metrics.node_metrics(real_cluster, node_name), 120, f"NodeMetrics of {node_name}"
    )
    assert node["kind"] == "NodeMetrics"
    assert parse_quantity(node["usage"]["memory"]) >= parse_quantity("400Mi"), node


def deployment(cpu: str, memory: str) -> dict[str, Any]:
    container = {
        "name": "app",
        "image": PAUSE,
        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
    }
    return {
        "metadata": {"name": "shop"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "shop"}},
            "template": {
                "metadata": {
                    "labels": {"app": "shop"},
                    "annotations": metrics.usage_annotations(cpu, memory),
                },
                "spec": {"containers": [container]},
            },
        },
    }


def oracle_target(tmp_path: Path, cpu: str, memory: str) -> dict[str, str]:
    """VPA's target for a container that always used `cpu` and `memory` (the naive oracle: all
    samples in one bucket, so their number and times do not change it)."""
    path = tmp_path / "constant.csv"
    with path.open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["timestamp", "container", "cpu", "memory", "cpu_request"])
        for i in range(3):
            row = [60 * i, "app", parse_quantity(cpu), parse_quantity(memory), "0.1"]
            out.writerow([str(v) for v in row])
    return vpa_oracle.recommend(path)["app"]["target"]


def test_the_recommender_learns_from_the_real_metrics_server(
    real_cluster: RealCluster, namespace: str, tmp_path: Path
) -> None:
    metrics.wait_available(real_cluster)
    with real_cluster.api() as api:
        client.CoreV1Api(api).create_namespace(plain({"metadata": {"name": OWN_NS}}))
        client.AppsV1Api(api).create_namespaced_deployment(
            namespace, plain(deployment("250m", "300Mi"))
        )
    app = AppProcess(
        real_cluster.kubeconfig_path,
        f"sqlite:///{tmp_path}/rightsizer.db",
        tmp_path / "app.log",
        RIGHTSIZER_RECOMMENDER_INTERVAL="1",
        RIGHTSIZER_NAMESPACE=OWN_NS,  # its leader Lease (the jobs run once it leads); left alone
    )
    expected = oracle_target(tmp_path, "250m", "300Mi")
    key = (namespace, "Deployment", "shop", "app")
    try:
        app.wait_ready()
        served = wait_for(
            lambda: (lambda r: r if r and r["target"] == expected else None)(
                recommendations(app).get(key)
            ),
            180,
            f"a recommendation of {key} at {expected}",
            interval=1,
        )
        assert served["sampleCount"] >= 2, served  # both pods' samples, from metrics-server
        assert "Traceback" not in app.log(), app.log()[-3000:]
    finally:
        app.stop()
