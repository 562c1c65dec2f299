"""What the updater asks the API server for, counted by the simulator (`/sim/stats`): an
eviction is sent without reading the pod first (its uid precondition protects a pod that changed
since the cache saw it, as VPA's updater relies on it), and a pod that took the name of a cached
one since is left alone."""

from __future__ import annotations

from typing import Any

from flask import Flask
from kubernetes import client

from app.core.bodies import EvictionBody
from app.kube.actions import PodActions
from app.kube.cluster import ClusterView
from app.simulator.testing import running_simulator
from tests.support.json_bodies import plain
from tests.support.updater_runs import (
    LEADER,
    NS,
    Clock,
    deployment,
    make_job,
    policy,
    recommend,
    settled,
    uids,
)

SCENARIO: dict[str, Any] = {
    "nodes": [{"namePrefix": "node", "count": 3, "cpu": "4", "memory": "16Gi"}],
    "namespaces": [{"name": NS}],
    "workloads": [deployment("web", 4)],
}


def test_an_eviction_is_sent_without_a_get_of_the_pod(app: Flask) -> None:
    with running_simulator(SCENARIO) as sim:
        api = sim.api_client()
        cluster = ClusterView(sim.api_client()).start()
        try:
            assert cluster.wait_synced(30)
            settled(sim, api, cluster)
            before = uids(api, "web")
            policy(app, "web", "Recreate")
            recommend(app, "web", cpu=200)
            job = make_job(app, cluster, api, Clock(sim.now()))
            sim.reset_stats()
            summary = job.run_once(LEADER)
            pods = sim.stats()["byResource"]
            assert "2 pods updated" in summary, summary
            assert len(before - uids(api, "web")) == 2
            assert pods["pods/eviction"] == {"create": 2}
            assert "get" not in pods.get("pods", {}), pods  # no GET before the evictions
        finally:
            cluster.stop()
            api.close()


def test_an_eviction_of_a_pod_whose_name_was_taken_since_leaves_the_new_pod_alone() -> None:
    """The cache's pod is gone and another has its name (as a StatefulSet's replacement would):
    the eviction names the old uid, the API server refuses it (409), and it reads as `gone`."""
    with running_simulator(SCENARIO) as sim:
        api = sim.api_client()
        try:
            core = client.CoreV1Api(api)
            core.create_namespaced_pod(
                NS,
                plain(
                    {
                        "metadata": {"name": "solo"},
                        "spec": {"containers": [{"name": "app", "image": "example.com/app:1"}]},
                    }
                ),
            )
            old = core.read_namespaced_pod("solo", NS).metadata.uid
            core.delete_namespaced_pod("solo", NS, grace_period_seconds=0)
            core.create_namespaced_pod(
                NS,
                plain(
                    {
                        "metadata": {"name": "solo"},
                        "spec": {"containers": [{"name": "app", "image": "example.com/app:1"}]},
                    }
                ),
            )
            new = core.read_namespaced_pod("solo", NS).metadata.uid
            assert new != old
            outcome = PodActions(api).evict(EvictionBody(NS, "solo", old))
            assert outcome == "gone"
            assert core.read_namespaced_pod("solo", NS).metadata.uid == new
        finally:
            api.close()
