"""Daemon pods bound through node affinity, the scheduler's NodeAffinity filter, and usage that
differs per node group (`usage.nodeFactors`), read with the official client and kubectl."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from app.simulator.scenarios.scenario import ScenarioError, parse
from app.simulator.simulator import Simulator
from tests.support.json_bodies import json_object, plain
from tests.support.kubectl import run_kubectl
from tests.support.simulators import pod_body

TYPE = "node.kubernetes.io/instance-type"
MiB = 1 << 20

AGENT_USAGE = {
    "cpu": {"base": 0.05},
    "memory": {"base": "100Mi"},
    "nodeFactors": {"label": TYPE, "values": {"m5.4xlarge": {"cpu": 4, "memory": 3}}},
}
SCENARIO: dict[str, Any] = {
    "seed": 3,
    "nodes": [
        {
            "namePrefix": "small",
            "count": 2,
            "cpu": "2",
            "memory": "8Gi",
            "labels": {TYPE: "m5.large"},
        },
        {
            "namePrefix": "large",
            "count": 2,
            "cpu": "16",
            "memory": "64Gi",
            "labels": {TYPE: "m5.4xlarge"},
        },
    ],
    "namespaces": ["ops"],
    "workloads": [
        {
            "kind": "DaemonSet",
            "namespace": "ops",
            "name": "agent",
            "containers": [
                {
                    "name": "agent",
                    "requests": {"cpu": "100m", "memory": "200Mi"},
                    "usage": AGENT_USAGE,
                }
            ],
        },
    ],
}


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return SCENARIO


@pytest.fixture(scope="module")
def sim_warmup() -> float:
    return 60.0  # a metrics scrape or more behind the pods


def _agents(core: client.CoreV1Api) -> list[Any]:
    return list(core.list_namespaced_pod("ops", label_selector="app=agent").items)


def test_daemon_pods_name_their_node_in_affinity_and_the_scheduler_binds_them_there(
    sim: Simulator, core: client.CoreV1Api
) -> None:
    agents = _agents(core)
    assert sorted(p.spec.node_name for p in agents) == ["large-0", "large-1", "small-0", "small-1"]
    for p in agents:
        required = p.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
        [term] = required.node_selector_terms
        [field] = term.match_fields
        assert (field.key, field.operator, field.values) == (
            "metadata.name",
            "In",
            [p.spec.node_name],
        )
        assert term.match_expressions is None
        scheduled = [
            e
            for e in core.list_namespaced_event(
                "ops", field_selector=f"involvedObject.name={p.metadata.name}"
            ).items
            if e.reason == "Scheduled"
        ]
        assert [e.message for e in scheduled] == [
            f"Successfully assigned ops/{p.metadata.name} to {p.spec.node_name}"
        ]
    out = run_kubectl(
        sim,
        "get",
        "pods",
        "-n",
        "ops",
        "-l",
        "app=agent",
        "-o",
        "jsonpath={range .items[*]}{.spec.nodeName}="
        "{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchFields[0].values[0]}{'\\n'}{end}",
    ).stdout
    pairs = [line.split("=") for line in out.split()]
    assert len(pairs) == 4 and all(a == b for a, b in pairs)


def test_a_daemonset_with_a_required_affinity_runs_only_on_matching_nodes(
    sim: Simulator, core: client.CoreV1Api, apps: client.AppsV1Api
) -> None:
    large_only = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": TYPE, "operator": "In", "values": ["m5.4xlarge"]}
                        ]
                    }
                ]
            }
        }
    }
    body = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "big"},
        "spec": {
            "selector": {"matchLabels": {"app": "big"}},
            "template": {
                "metadata": {"labels": {"app": "big"}},
                "spec": {
                    "affinity": large_only,
                    "containers": [{"name": "c", "image": "big:1"}],
                },
            },
        },
    }
    apps.create_namespaced_daemon_set("ops", plain(body))
    sim.settle()
    pods = core.list_namespaced_pod("ops", label_selector="app=big").items
    assert sorted(p.spec.node_name for p in pods) == ["large-0", "large-1"]
    assert apps.read_namespaced_daemon_set("big", "ops").status.desired_number_scheduled == 2
    apps.delete_namespaced_daemon_set("big", "ops")
    sim.settle()


def test_a_pod_no_node_matches_stays_pending_with_the_schedulers_reason(
    sim: Simulator, core: client.CoreV1Api
) -> None:
    body = pod_body("nowhere")
    body["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": TYPE, "operator": "In", "values": ["m7.metal"]}]}
                ]
            }
        }
    }
    core.create_namespaced_pod("ops", plain(body))
    sim.settle()
    pod = core.read_namespaced_pod("nowhere", "ops")
    assert pod.status.phase == "Pending" and not pod.spec.node_name
    [condition] = pod.status.conditions
    assert condition.message == (
        "0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
    )
    core.delete_namespaced_pod("nowhere", "ops")
    sim.settle()


def test_usage_scales_with_the_node_group_of_the_pods_node(
    sim: Simulator, core: client.CoreV1Api, api_client: client.ApiClient
) -> None:
    node_of = {p.metadata.name: p.spec.node_name for p in _agents(core)}
    metrics = json_object(
        client.CustomObjectsApi(api_client).list_namespaced_custom_object(
            "metrics.k8s.io", "v1beta1", "ops", "pods", label_selector="app=agent"
        )
    )
    seen = {}
    for item in metrics["items"]:
        usage = item["containers"][0]["usage"]
        cores = int(usage["cpu"][:-1]) / 1e9
        mib = int(usage["memory"][:-2]) * 1024 / MiB
        seen[node_of[item["metadata"]["name"]]] = (cores, mib)
    assert set(seen) == {"small-0", "small-1", "large-0", "large-1"}
    for name, (cores, mib) in seen.items():
        large = name.startswith("large")
        assert cores == pytest.approx(0.2 if large else 0.05, rel=0.01)
        assert mib == pytest.approx(300 if large else 100, rel=0.01)


def test_node_factors_are_validated_naming_the_field() -> None:
    def workload(usage: Any) -> dict[str, Any]:
        c = {"name": "a", "usage": usage}
        return {"workloads": [{"kind": "DaemonSet", "name": "a", "containers": [c]}]}

    path = "workloads[0].containers[0].usage.nodeFactors"
    for factors, message in (
        ("big", f"{path}: expected a mapping with label and values"),
        ({"values": {}}, f"{path}.label: required"),
        (
            {"label": TYPE, "values": {"x": {"cpu": -1}}},
            f"{path}.values.x.cpu: must not be negative",
        ),
        ({"label": TYPE, "values": {"x": {"disk": 2}}}, f"{path}.values.x.disk: unknown field"),
        (
            {"label": TYPE, "values": {"x": {"cpu": "2"}}},
            f"{path}.values.x.cpu: expected int or float",
        ),
        ({"label": TYPE, "value": {}}, f"{path}.value: unknown field"),
    ):
        with pytest.raises(ScenarioError) as e:
            parse(workload({"nodeFactors": factors}))
        assert str(e.value).startswith(message), (factors, str(e.value))
