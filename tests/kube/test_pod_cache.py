"""What the pod cache keeps of a pod (app.kube.cluster.trim_pod, pod_view): every field the jobs
read, equal parts of pods kept once, and the conditions code asks for."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kubernetes import client

from app.kube.cluster import POD_CONDITIONS_READ, ClusterView, Shared, pod_view, trim_pod
from app.simulator.testing import running_simulator
from tests.support.json_bodies import plain, raw_body
from tests.support.processes import wait_for

APP = Path(__file__).resolve().parents[2] / "app"
SCENARIO: dict[str, Any] = {
    "nodes": [{"namePrefix": "node", "count": 2, "cpu": "4", "memory": "16Gi"}],
    "namespaces": [{"name": "shop"}],
    "workloads": [
        {
            "kind": "Deployment",
            "namespace": "shop",
            "name": "web",
            "replicas": 3,
            "containers": [
                {"name": "app", "image": "example.com/app:1", "requests": {"cpu": "250m"}}
            ],
        }
    ],
}


def test_every_condition_the_code_reads_is_kept() -> None:
    asked = set()
    for path in APP.rglob("*.py"):
        if "simulator" in path.parts:
            continue
        asked |= set(re.findall(r"\.condition\(\s*\"([A-Za-z]+)\"", path.read_text()))
    assert asked and asked <= set(POD_CONDITIONS_READ), asked - set(POD_CONDITIONS_READ)


def test_pods_of_one_replicaset_share_their_equal_parts_and_read_the_same() -> None:
    with running_simulator(SCENARIO) as sim:
        api = sim.api_client()
        try:
            body = raw_body(
                client.CoreV1Api(api).list_namespaced_pod("shop", _preload_content=False)
            )
        finally:
            api.close()
    pods = json.loads(body)["items"]
    assert len(pods) == 3
    share = Shared()
    views = [pod_view(p, share) for p in pods]
    alone = [pod_view(json.loads(json.dumps(p))) for p in pods]
    assert views == alone  # sharing changes nothing that is read
    a, b = (v.wire for v in views[:2])
    assert a["spec"]["containers"] is b["spec"]["containers"]
    assert a["metadata"]["labels"] is b["metadata"]["labels"]
    assert a["metadata"]["ownerReferences"] is b["metadata"]["ownerReferences"]
    assert a["metadata"]["name"] != b["metadata"]["name"]
    # Only the conditions code reads are kept; the pod had five true ones.
    assert [c.type for c in views[0].conditions] == ["Ready"]
    assert len(pods[0]["status"]["conditions"]) == 5
    assert trim_pod(pods[0])["spec"]["containers"] == [
        {"name": "app", "resources": {"requests": {"cpu": "250m"}}}
    ]


def test_a_pod_being_deleted_reads_as_deleting_from_the_cache() -> None:
    """A pod held by a finalizer after its DELETE carries a deletionTimestamp: the cache's view
    says `deleting` (the updater neither counts nor touches it). The trimmed pod dropped the
    timestamp before, so every cached pod read as not being deleted."""
    with running_simulator(SCENARIO) as sim:
        api = sim.api_client()
        view = ClusterView(sim.api_client()).start()
        try:
            assert view.wait_synced(30)
            core = client.CoreV1Api(api)
            core.create_namespaced_pod(
                "shop",
                plain(
                    {
                        "metadata": {"name": "held", "finalizers": ["example.com/hold"]},
                        "spec": {"containers": [{"name": "app", "image": "example.com/app:1"}]},
                    }
                ),
            )
            wait_for(lambda: view.pods.get("shop", "held") is not None, 10, "the pod cached")
            assert not view.pods.get("shop", "held").deleting
            core.delete_namespaced_pod("held", "shop")
            wait_for(
                lambda: getattr(view.pods.get("shop", "held"), "deleting", False),
                10,
                "the deletion seen",
            )
            core.patch_namespaced_pod("held", "shop", {"metadata": {"finalizers": None}})
        finally:
            view.stop()
            api.close()
