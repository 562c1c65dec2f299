"""The real control plane itself: the release its tools module pins, and pods of a real Deployment
controller scheduled by the real scheduler onto kwok's nodes, Running."""

from __future__ import annotations

import time

import requests
from kubernetes import client

from tests.realkube.cluster import ADMIN_TOKEN, RealCluster, pinned_release
from tests.support.json_bodies import plain


def test_version_is_the_pinned_release(real_cluster: RealCluster) -> None:
    answer = requests.get(
        f"{real_cluster.server}/version",
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
        verify=str(real_cluster.ca_file),
        timeout=5,
    ).json()
    assert answer["gitVersion"] == pinned_release(real_cluster.kube)


def test_a_deployments_pods_run_on_kwok_nodes(real_cluster: RealCluster) -> None:
    deployment = {
        "metadata": {"name": "smoke"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "smoke"}},
            "template": {
                "metadata": {"labels": {"app": "smoke"}},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                        }
                    ]
                },
            },
        },
    }
    with real_cluster.api() as api:
        client.AppsV1Api(api).create_namespaced_deployment("default", plain(deployment))
        core = client.CoreV1Api(api)
        deadline = time.monotonic() + 60
        running: list[client.V1Pod] = []
        while time.monotonic() < deadline:
            pods = core.list_namespaced_pod("default", label_selector="app=smoke").items
            running = [p for p in pods if p.status.phase == "Running"]
            if len(running) == 3:
                break
            time.sleep(0.5)
        client.AppsV1Api(api).delete_namespaced_deployment("smoke", "default")
    assert len(running) == 3, real_cluster.logs("kube-controller-manager", "kube-scheduler", "kwok")
    assert {p.spec.node_name for p in running} <= {"kwok-node-0", "kwok-node-1", "kwok-node-2"}
