"""Controllers, scheduler and the write subresources: scale, eviction, resize; leases."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.simulator.testing import running_simulator
from tests.support.simulators import SMALL, pod_body


def _web_pods(core: client.CoreV1Api) -> list[Any]:
    return core.list_namespaced_pod("shop", label_selector="app=web").items


def test_scale_subresource_get_patch_replace(sim, apps, core):
    scale = apps.read_namespaced_deployment_scale("web", "shop")
    assert scale.spec.replicas == 3 and scale.status.replicas == 3
    assert scale.status.selector == "app=web"
    apps.patch_namespaced_deployment_scale("web", "shop", {"spec": {"replicas": 5}})
    sim.settle()
    assert len(_web_pods(core)) == 5
    assert apps.read_namespaced_deployment("web", "shop").status.ready_replicas == 5
    scale = apps.read_namespaced_deployment_scale("web", "shop")
    scale.spec.replicas = 1
    apps.replace_namespaced_deployment_scale("web", "shop", scale)
    sim.settle()
    assert len(_web_pods(core)) == 1
    rs = apps.list_namespaced_replica_set("shop").items[0]
    assert apps.read_namespaced_replica_set_scale(rs.metadata.name, "shop").spec.replicas == 1
    stale = scale  # its resourceVersion is older than the last write
    stale.spec.replicas = 4
    with pytest.raises(ApiException) as e:
        apps.replace_namespaced_deployment_scale("web", "shop", stale)
    assert e.value.status == 409
    with pytest.raises(ApiException) as e:
        apps.patch_namespaced_deployment_scale("web", "shop", {"spec": {"replicas": -1}})
    assert e.value.status == 422


def test_eviction_without_a_budget_deletes_and_the_replicaset_replaces(sim, core):
    victim = _web_pods(core)[0].metadata.name
    core.create_namespaced_pod_eviction(
        victim,
        "shop",
        client.V1Eviction(metadata=client.V1ObjectMeta(name=victim, namespace="shop")),
    )
    sim.settle()
    names = {p.metadata.name for p in _web_pods(core)}
    assert victim not in names and len(names) == 3


def test_eviction_preconditions_on_uid_and_resource_version_are_409(sim, core):
    pod = _web_pods(core)[0]
    name = pod.metadata.name
    for pre in ({"uid": "not-this-pod"}, {"resourceVersion": "1"}):
        with pytest.raises(ApiException) as e:
            core.create_namespaced_pod_eviction(
                name,
                "shop",
                {"metadata": {"name": name}, "deleteOptions": {"preconditions": pre}},
            )
        assert e.value.status == 409
        assert "Precondition failed" in json.loads(e.value.body)["message"]
    assert name in {p.metadata.name for p in _web_pods(core)}
    core.create_namespaced_pod_eviction(
        name,
        "shop",
        {"metadata": {"name": name}, "deleteOptions": {"preconditions": {"uid": pod.metadata.uid}}},
    )
    sim.settle()
    assert name not in {p.metadata.name for p in _web_pods(core)}


def test_dry_run_eviction_deletes_nothing(sim, core):
    victim = _web_pods(core)[0].metadata.name
    core.create_namespaced_pod_eviction(
        victim,
        "shop",
        client.V1Eviction(metadata=client.V1ObjectMeta(name=victim, namespace="shop")),
        dry_run="All",
    )
    sim.settle()
    assert victim in {p.metadata.name for p in _web_pods(core)}


def test_stats_tell_pod_metrics_from_pods(sim, core):
    sim.reset_stats()
    core.list_pod_for_all_namespaces()
    client.CustomObjectsApi(core.api_client).list_cluster_custom_object(
        "metrics.k8s.io", "v1beta1", "pods"
    )
    by_resource = sim.stats()["byResource"]
    assert by_resource["pods"]["list"] == 1
    assert by_resource["pods.metrics.k8s.io"]["list"] == 1


def test_eviction_blocked_by_a_disruption_budget_is_429(sim, core):
    # Bare pods: nothing replaces an evicted one, so the budget's arithmetic is exact.
    for i in range(3):
        core.create_namespaced_pod("other", pod_body(f"solo-{i}", labels={"app": "solo"}))
    policy = client.PolicyV1Api(core.api_client)
    policy.create_namespaced_pod_disruption_budget(
        "other",
        client.V1PodDisruptionBudget(
            metadata=client.V1ObjectMeta(name="solo"),
            spec=client.V1PodDisruptionBudgetSpec(
                min_available=2, selector=client.V1LabelSelector(match_labels={"app": "solo"})
            ),
        ),
    )
    sim.settle()
    pdb = policy.read_namespaced_pod_disruption_budget("solo", "other")
    assert pdb.status.disruptions_allowed == 1 and pdb.status.expected_pods == 3
    assert pdb.status.current_healthy == 3 and pdb.status.desired_healthy == 2
    core.create_namespaced_pod_eviction(
        "solo-0", "other", client.V1Eviction(metadata=client.V1ObjectMeta(name="solo-0"))
    )
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod_eviction(
            "solo-1", "other", client.V1Eviction(metadata=client.V1ObjectMeta(name="solo-1"))
        )
    body = json.loads(e.value.body)
    assert e.value.status == 429 and body["reason"] == "TooManyRequests"
    assert body["details"]["causes"][0]["reason"] == "DisruptionBudget"
    assert core.read_namespaced_pod("solo-1", "other").status.phase == "Running"
    sim.settle()
    pdb = policy.read_namespaced_pod_disruption_budget("solo", "other")
    assert pdb.status.disruptions_allowed == 0 and pdb.status.expected_pods == 2


def test_pending_when_nothing_fits_then_scheduled_on_a_new_node(sim, core):
    core.create_namespaced_pod("other", pod_body("huge", cpu="6"))
    sim.settle()
    pod = core.read_namespaced_pod("huge", "other")
    assert pod.status.phase == "Pending" and not pod.spec.node_name
    cond = pod.status.conditions[0]
    assert cond.reason == "Unschedulable" and "Insufficient cpu" in cond.message
    sim.add_node("big", cpu="16", memory="64Gi")
    pod = core.read_namespaced_pod("huge", "other")
    assert pod.status.phase == "Running" and pod.spec.node_name == "big"


def test_cordoned_nodes_get_no_new_pods(sim, core):
    for n in ("node-0", "node-1"):
        sim.cordon(n)
    node = core.read_node("node-0")
    assert node.spec.unschedulable and node.spec.taints[0].key == "node.kubernetes.io/unschedulable"
    for i in range(3):
        core.create_namespaced_pod("other", pod_body(f"p{i}"))
    sim.settle()
    assert {p.spec.node_name for p in core.list_namespaced_pod("other").items} == {"node-2"}
    sim.uncordon("node-0")
    assert not core.read_node("node-0").spec.unschedulable


def test_statefulset_and_daemonset_pods():
    scenario = {
        **SMALL,
        "workloads": [
            {
                "kind": "StatefulSet",
                "namespace": "shop",
                "name": "db",
                "replicas": 2,
                "containers": [{"name": "db", "image": "postgres:16", "requests": {"cpu": "100m"}}],
            },
            {
                "kind": "DaemonSet",
                "namespace": "shop",
                "name": "agent",
                "containers": [{"name": "a", "image": "agent:1", "requests": {"cpu": "10m"}}],
            },
        ],
    }
    with running_simulator(scenario) as sim:
        api = sim.api_client()
        core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
        names = sorted(
            p.metadata.name for p in core.list_namespaced_pod("shop", label_selector="app=db").items
        )
        assert names == ["db-0", "db-1"]
        apps.patch_namespaced_stateful_set_scale("db", "shop", {"spec": {"replicas": 3}})
        sim.settle()
        assert apps.read_namespaced_stateful_set("db", "shop").status.ready_replicas == 3
        agents = core.list_namespaced_pod("shop", label_selector="app=agent").items
        assert sorted(p.spec.node_name for p in agents) == ["node-0", "node-1", "node-2"]
        sim.add_node("node-3")
        agents = core.list_namespaced_pod("shop", label_selector="app=agent").items
        assert len(agents) == 4
        assert apps.read_namespaced_daemon_set("agent", "shop").status.number_ready == 4
        sim.remove_node("node-3")
        assert len(core.list_namespaced_pod("shop", label_selector="app=agent").items) == 3
        api.close()


def test_deleting_a_deployment_collects_its_replicasets_and_pods(sim, apps, core):
    apps.delete_namespaced_deployment("web", "shop")
    sim.settle()
    assert not apps.list_namespaced_replica_set("shop").items
    assert not core.list_namespaced_pod("shop").items


def test_lease_create_get_replace_and_conflict(api_client):
    coord = client.CoordinationV1Api(api_client)
    now = dt.datetime.now(dt.UTC)
    lease = coord.create_namespaced_lease(
        "other",
        client.V1Lease(
            metadata=client.V1ObjectMeta(name="leader"),
            spec=client.V1LeaseSpec(
                holder_identity="a", lease_duration_seconds=15, acquire_time=now, renew_time=now
            ),
        ),
    )
    got = coord.read_namespaced_lease("leader", "other")
    assert got.spec.holder_identity == "a"
    got.spec.holder_identity = "b"
    updated = coord.replace_namespaced_lease("leader", "other", got)
    assert updated.spec.holder_identity == "b"
    assert int(updated.metadata.resource_version) > int(lease.metadata.resource_version)
    lease.spec.holder_identity = "c"  # stale resourceVersion
    with pytest.raises(ApiException) as e:
        coord.replace_namespaced_lease("leader", "other", lease)
    assert e.value.status == 409 and json.loads(e.value.body)["reason"] == "Conflict"
    with pytest.raises(ApiException) as e:
        coord.create_namespaced_lease("other", lease)
    assert e.value.status == 409 and json.loads(e.value.body)["reason"] == "AlreadyExists"


def test_in_place_resize(sim, core):
    pod = _web_pods(core)[0]
    name = pod.metadata.name
    out = core.patch_namespaced_pod_resize(
        name,
        "shop",
        {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "300m"}}}]}},
    )
    assert out.spec.containers[0].resources.requests["cpu"] == "300m"
    assert out.status.container_statuses[0].resources.requests["cpu"] == "300m"
    out = core.patch_namespaced_pod_resize(
        name,
        "shop",
        {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "3900m"}}}]}},
    )
    pending = [c for c in out.status.conditions if c.type == "PodResizePending"]
    assert pending and pending[0].reason == "Infeasible"
    # Not a resource change: dropped, not refused (strategy.go dropNonResizeUpdates).
    out = core.patch_namespaced_pod_resize(
        name, "shop", {"spec": {"containers": [{"name": "app", "image": "other:1"}]}}
    )
    assert out.spec.containers[0].image == pod.spec.containers[0].image
    with pytest.raises(ApiException) as e:  # requests above limits
        core.patch_namespaced_pod_resize(
            name,
            "shop",
            {
                "spec": {
                    "containers": [{"name": "app", "resources": {"requests": {"memory": "1Gi"}}}]
                }
            },
        )
    assert e.value.status == 422
