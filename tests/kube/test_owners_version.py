"""ClusterView.owners_version: what the owner walk reads besides the pod, as counts that move
after it does (the recommender's owner memo carries its answers across runs only while it is
unchanged: app.core.owner_memo)."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from app.kube.cluster import ClusterView
from app.simulator.simulator import Simulator
from tests.support.processes import wait_for
from tests.support.recommender_runs import deployment


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return {
        "nodes": [{"namePrefix": "node", "count": 1, "cpu": "8", "memory": "32Gi"}],
        "namespaces": [{"name": "shop"}],
        "workloads": [deployment("shop", "web", replicas=1)],
    }


def test_an_owner_change_moves_the_owners_version_and_a_scale_does_not(
    cluster: ClusterView, sim: Simulator
) -> None:
    before = cluster.owners_version()
    assert cluster.owners_version() == before  # nothing moved: the same reading
    apps = client.AppsV1Api(sim.api_client())
    (rs,) = apps.list_namespaced_replica_set("shop").items
    name = rs.metadata.name
    # the Deployment scaled: it and its ReplicaSet change, not their owners
    apps.patch_namespaced_deployment_scale("web", "shop", {"spec": {"replicas": 2}})
    wait_for(
        lambda: (
            (cluster.lookup("shop", "ReplicaSet", name) or {}).get("spec", {}).get("replicas") == 2
        ),
        30,
        "the scaled ReplicaSet in the cache",
    )
    assert cluster.owners_version() == before
    # the ReplicaSet orphaned: its pods' workload is now the ReplicaSet itself
    orphaned = [{"op": "remove", "path": "/metadata/ownerReferences"}]  # a JSON patch
    apps.patch_namespaced_replica_set(name, "shop", orphaned)
    wait_for(lambda: cluster.owners_version() != before, 30, "the ReplicaSet event")
    moved = cluster.owners_version()
    cluster.scalable.refresh()  # discovery listed again: the scalable kinds may have moved
    assert cluster.owners_version() != moved
