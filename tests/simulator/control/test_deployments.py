"""Property: whatever the size and the fenceposts, a rolling update by the simulator's Deployment
controller never wants more than replicas + maxSurge pods, never has fewer than
replicas - maxUnavailable ready, and ends with every pod on the new template (kube's
ResolveFenceposts: maxSurge rounds up, maxUnavailable down, both 0 makes maxUnavailable 1).
Also: scaling in the middle of a paused rollout shares the new size between the ReplicaSets."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from kubernetes import client

from app.simulator.apiserver.resources import POD, REPLICASET
from app.simulator.apiserver.store import WatchEvent
from app.simulator.simulator import Simulator
from tests.support.json_bodies import plain
from tests.support.kubectl import deployment

NS = "demo"
_names = itertools.count()


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return {
        "nodes": [{"namePrefix": "n", "count": 4, "cpu": "16", "memory": "64Gi"}],
        "namespaces": [NS],
    }


@pytest.fixture(scope="module")
def apps(module_sim: Simulator) -> Iterator[client.AppsV1Api]:
    api = module_sim.api_client()
    yield client.AppsV1Api(api)
    api.close()


fencepost = st.one_of(st.integers(0, 3), st.sampled_from(["0%", "10%", "25%", "50%", "100%"]))


def resolve(value: int | str, replicas: int, *, up: bool) -> int:
    if isinstance(value, str):
        exact = int(value[:-1]) * replicas / 100
        return math.ceil(exact) if up else math.floor(exact)
    return value


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(replicas=st.integers(1, 7), surge=fencepost, unavailable=fencepost)
def test_a_rolling_update_stays_within_its_fenceposts(
    module_sim: Simulator,
    apps: client.AppsV1Api,
    replicas: int,
    surge: int | str,
    unavailable: int | str,
) -> None:
    assume(not (surge in (0, "0%") and unavailable in (0, "0%")))  # validation refuses it
    name = f"p{next(_names)}"
    apps.create_namespaced_deployment(
        NS, plain(deployment(name, replicas=replicas, max_surge=surge, max_unavailable=unavailable))
    )
    module_sim.settle()
    max_surge = resolve(surge, replicas, up=True)
    max_unavailable = resolve(unavailable, replicas, up=False)
    if max_surge == 0 and max_unavailable == 0:
        max_unavailable = 1
    store = module_sim.cluster.store
    seen: list[tuple[int, int]] = []
    recording = [True]

    def record(event: WatchEvent) -> None:
        if not recording[0] or event.rt not in (POD, REPLICASET):
            return
        rss = [
            e.obj
            for _, e in store.scan(REPLICASET, NS)[0]
            if e.obj["metadata"]["name"].startswith(f"{name}-")
        ]
        pods = [
            e.obj
            for _, e in store.scan(POD, NS)[0]
            if (e.obj["metadata"].get("labels") or {}).get("app") == name
        ]
        up = sum(
            1
            for p in pods
            if any(
                c["type"] == "Ready" and c["status"] == "True"
                for c in p["status"].get("conditions") or []
            )
        )
        seen.append((sum(rs["spec"]["replicas"] for rs in rss), up))

    store.add_listener(record)
    try:
        patch = {
            "spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}}}
        }
        apps.patch_namespaced_deployment(name, NS, patch)
        module_sim.settle()
    finally:
        recording[0] = False
    assert max(want for want, _ in seen) <= replicas + max_surge
    assert min(up for _, up in seen) >= replicas - max_unavailable
    d = apps.read_namespaced_deployment(name, NS)
    assert (d.status.updated_replicas, d.status.available_replicas, d.status.replicas) == (
        replicas,
    ) * 3
    apps.delete_namespaced_deployment(name, NS)


def test_scaling_a_paused_rollout_shares_the_new_size_proportionally(
    module_sim: Simulator, apps: client.AppsV1Api
) -> None:
    apps.create_namespaced_deployment(
        NS, plain(deployment("prop", replicas=10, max_surge=3, max_unavailable=2))
    )
    module_sim.settle()
    # Pause in the middle of a rollout: hold the new pods back with a request no node fits.
    patch = {
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "64"}}}]}
            }
        }
    }
    apps.patch_namespaced_deployment("prop", NS, patch)
    module_sim.settle()
    apps.patch_namespaced_deployment("prop", NS, {"spec": {"paused": True}})
    module_sim.settle()
    rss = apps.list_namespaced_replica_set(NS, label_selector="app=prop").items
    before = {
        int(rs.metadata.annotations["deployment.kubernetes.io/revision"]): rs.spec.replicas
        for rs in rss
    }
    assert before == {1: 8, 2: 5}  # 13 = 10 + maxSurge; 8 = 10 - maxUnavailable
    apps.patch_namespaced_deployment_scale("prop", NS, {"spec": {"replicas": 20}})
    module_sim.settle()
    rss = apps.list_namespaced_replica_set(NS, label_selector="app=prop").items
    after = {
        int(rs.metadata.annotations["deployment.kubernetes.io/revision"]): rs.spec.replicas
        for rs in rss
    }
    # 23 = 20 + 3 shared by size (GetReplicaSetProportion): 8*23/13 -> 14, 5*23/13 -> 9
    assert after == {1: 14, 2: 9}
    assert {rs.metadata.annotations["deployment.kubernetes.io/max-replicas"] for rs in rss} == {
        "23"
    }


def test_a_rolling_update_with_neither_surge_nor_unavailability_is_refused(
    apps: client.AppsV1Api,
) -> None:
    with pytest.raises(client.ApiException) as refused:
        apps.create_namespaced_deployment(
            NS, plain(deployment("frozen", max_surge=0, max_unavailable="0%"))
        )
    assert refused.value.status == 422
    assert json.loads(refused.value.body)["message"] == (
        'Deployment.apps "frozen" is invalid: spec.strategy.rollingUpdate.maxUnavailable: '
        'Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"0%"}: '
        "may not be 0 when `maxSurge` is 0"
    )
