"""The simulated cluster writes its own Events, as the real components do, and the real kubectl
finds them: `kubectl describe` (by involvedObject name, namespace, kind and uid), `kubectl get
events` and `kubectl events`; after scaling, cordoning, deleting and evicting pods, an admission
refusal (FailedCreate), an unschedulable pod and OOM kills; they expire after an hour."""

from __future__ import annotations

import re
from typing import Any

import pytest
from kubernetes import client

from app.simulator.simulator import Simulator
from app.simulator.testing import running_simulator
from tests.support.json_bodies import plain
from tests.support.kubectl import describe_events, run_kubectl
from tests.support.simulators import SMALL

NS = "shop"
LEAKY = {
    "kind": "Deployment",
    "namespace": "other",
    "name": "leaky",
    "replicas": 1,
    "containers": [
        {
            "name": "app",
            "image": "redis:7.4",
            "requests": {"cpu": "100m", "memory": "64Mi"},
            "limits": {"memory": "128Mi"},
            "usage": {"memory": {"base": "200Mi"}},  # above its limit: OOM-killed at once
        }
    ],
}


SMALL_POD = {"name": "app", "image": "busybox:1.36", "requests": {"cpu": "50m", "memory": "32Mi"}}
DB = {
    "kind": "StatefulSet",
    "namespace": "other",
    "name": "db",
    "replicas": 2,
    "containers": [SMALL_POD],
}
AGENT = {"kind": "DaemonSet", "namespace": "other", "name": "agent", "containers": [SMALL_POD]}


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return {**SMALL, "workloads": [*SMALL["workloads"], LEAKY, DB, AGENT]}


@pytest.fixture
def core(sim: Simulator) -> Any:
    api = sim.api_client()
    yield client.CoreV1Api(api)
    api.close()


def _events(core: Any, ns: str, **fields: str) -> list[Any]:
    selector = ",".join(f"involvedObject.{k}={v}" for k, v in fields.items())
    return list(core.list_namespaced_event(ns, field_selector=selector).items)


def _pods(core: Any, app: str, ns: str = NS) -> list[Any]:
    return list(core.list_namespaced_pod(ns, label_selector=f"app={app}").items)


def _reasons(lines: list[str]) -> list[str]:
    return [line.split()[1] for line in lines[2:]]  # after the header and its underline


def test_scaling_up_and_down_is_told_by_the_deployment_replicaset_scheduler_and_kubelets(
    sim: Simulator, core: Any
) -> None:
    before = {p.metadata.name for p in _pods(core, "web")}
    run_kubectl(sim, "scale", "deployment/web", "-n", NS, "--replicas=5")
    sim.settle()
    lines = describe_events(sim, "deployment", "web", NS)
    assert any(
        line.startswith("Normal")
        and "ScalingReplicaSet" in line
        and "deployment-controller" in line
        and re.search(r"Scaled up replica set web-\S+ from 3 to 5", line)
        for line in lines
    ), lines
    new = [p for p in _pods(core, "web") if p.metadata.name not in before]
    assert len(new) == 2
    pod = new[0]
    rs = pod.metadata.owner_references[0].name
    rs_lines = describe_events(sim, "replicaset", rs, NS)
    assert any(f"Created pod: {pod.metadata.name}" in line for line in rs_lines), rs_lines
    pod_lines = describe_events(sim, "pod", pod.metadata.name, NS)
    assert _reasons(pod_lines)[0] == "Scheduled"
    assert {"Pulled", "Created", "Started"} <= set(_reasons(pod_lines)), pod_lines
    assert any(
        f"default-scheduler  Successfully assigned {NS}/{pod.metadata.name} to {pod.spec.node_name}"
        in line
        for line in pod_lines
    ), pod_lines
    assert any("kubelet" in line and "Started container app" in line for line in pod_lines)
    [started] = [
        e for e in _events(core, NS, name=pod.metadata.name, kind="Pod") if e.reason == "Started"
    ]
    assert started.involved_object.field_path == "spec.containers{app}"
    assert (started.source.component, started.source.host) == ("kubelet", pod.spec.node_name)
    assert started.involved_object.uid == pod.metadata.uid

    run_kubectl(sim, "scale", "deployment/web", "-n", NS, "--replicas=2")
    sim.settle()
    lines = describe_events(sim, "deployment", "web", NS)
    assert any(re.search(r"Scaled down replica set web-\S+ from 5 to 2", line) for line in lines)
    left = {p.metadata.name for p in _pods(core, "web")}
    gone = sorted((before | {p.metadata.name for p in new}) - left)
    assert len(gone) == 3
    rs_events = _events(core, NS, name=rs, kind="ReplicaSet")
    deleted = {e.message for e in rs_events if e.reason == "SuccessfulDelete"}
    assert deleted == {f"Deleted pod: {name}" for name in gone}
    for name in gone:  # the kubelet stopped each deleted pod's container
        [killing] = [e for e in _events(core, NS, name=name) if e.reason == "Killing"]
        assert killing.message == "Stopping container app" and killing.type == "Normal"


def test_statefulset_and_daemonset_controllers_tell_their_pods(sim: Simulator, core: Any) -> None:
    lines = describe_events(sim, "statefulset", "db", "other")
    for name in ("db-0", "db-1"):
        assert any(
            "SuccessfulCreate" in line
            and "statefulset-controller" in line
            and line.endswith(f"create Pod {name} in StatefulSet db successful")
            for line in lines
        ), lines
    run_kubectl(sim, "scale", "statefulset/db", "-n", "other", "--replicas=1")
    sim.settle()
    lines = describe_events(sim, "statefulset", "db", "other")
    assert any(
        "SuccessfulDelete" in line and line.endswith("delete Pod db-1 in StatefulSet db successful")
        for line in lines
    ), lines
    agents = {p.metadata.name for p in _pods(core, "agent", "other")}
    assert len(agents) == 3
    created = {
        (e.source.component, e.message)
        for e in _events(core, "other", name="agent", kind="DaemonSet")
        if e.reason == "SuccessfulCreate"
    }
    assert created == {("daemonset-controller", f"Created pod: {name}") for name in agents}


def test_kubectl_get_events_and_kubectl_events_list_them(sim: Simulator) -> None:
    run_kubectl(sim, "scale", "deployment/web", "-n", NS, "--replicas=4")
    sim.settle()
    out = run_kubectl(
        sim,
        "get",
        "events",
        "-n",
        NS,
        "--field-selector",
        "involvedObject.kind=Deployment,involvedObject.name=web",
        "-o",
        "custom-columns=TYPE:.type,REASON:.reason,SOURCE:.source.component,MESSAGE:.message",
    ).stdout
    assert re.search(
        r"Normal\s+ScalingReplicaSet\s+deployment-controller\s+Scaled up replica set web-\S+ "
        r"from 3 to 4",
        out,
    ), out
    out = run_kubectl(sim, "events", "-n", NS, "--for", "deployment/web").stdout
    assert "ScalingReplicaSet" in out and "from 3 to 4" in out, out


def test_cordon_and_uncordon_are_reported_by_the_node_s_kubelet(sim: Simulator, core: Any) -> None:
    run_kubectl(sim, "cordon", "node-1")
    sim.settle()
    run_kubectl(sim, "uncordon", "node-1")
    sim.settle()
    lines = describe_events(sim, "node", "node-1", "default")
    assert any(
        "NodeNotSchedulable" in line and "Node node-1 status is now: NodeNotSchedulable" in line
        for line in lines
    ), lines
    assert any("Node node-1 status is now: NodeSchedulable" in line for line in lines), lines
    [event] = [e for e in _events(core, "default", name="node-1") if e.reason == "NodeSchedulable"]
    # the kubelet's nodeRef: kind Node, the node's name as uid, no namespace
    assert (event.involved_object.kind, event.involved_object.uid) == ("Node", "node-1")
    assert event.reporting_component == "kubelet" and event.reporting_instance == "node-1"


def test_deleting_and_evicting_pods_kill_their_containers_and_bring_replacements(
    sim: Simulator, core: Any
) -> None:
    first, second = (p.metadata.name for p in _pods(core, "web")[:2])
    run_kubectl(sim, "delete", "pod", first, "-n", NS)
    core.create_namespaced_pod_eviction(
        second, NS, {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": second}}
    )
    sim.settle()
    for name in (first, second):
        reasons = [e.reason for e in _events(core, NS, name=name)]
        assert "Killing" in reasons, reasons
        assert "Evicted" not in reasons  # the Eviction subresource itself writes no Event
    replacements = [
        p.metadata.name for p in _pods(core, "web") if p.metadata.name not in (first, second)
    ]
    rs = _pods(core, "web")[0].metadata.owner_references[0].name
    created = {e.message for e in _events(core, NS, name=rs) if e.reason == "SuccessfulCreate"}
    assert {f"Created pod: {name}" for name in replacements} <= created


def test_an_admission_refusal_is_a_failed_create_on_the_replicaset(
    sim: Simulator, core: Any
) -> None:
    core.create_namespaced_limit_range(
        "other",
        {
            "metadata": {"name": "limits"},
            "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]},
        },
    )
    client.AppsV1Api(core.api_client).create_namespaced_deployment(
        "other",
        plain(
            {
                "metadata": {"name": "big"},
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": {"app": "big"}},
                    "template": {
                        "metadata": {"labels": {"app": "big"}},
                        "spec": {
                            "containers": [
                                {
                                    "name": "app",
                                    "image": "x:1",
                                    "resources": {"limits": {"cpu": "2"}},
                                }
                            ]
                        },
                    },
                },
            }
        ),
    )
    sim.settle()
    [rs] = (
        client.AppsV1Api(core.api_client)
        .list_namespaced_replica_set("other", label_selector="app=big")
        .items
    )
    lines = describe_events(sim, "replicaset", rs.metadata.name, "other")
    assert any(
        line.startswith("Warning")
        and "FailedCreate" in line
        and "replicaset-controller" in line
        and re.search(
            r'Error creating: pods "big-\S+-\w{5}" is forbidden: maximum cpu usage per '
            r"Container is 1, but limit is 2",
            line,
        )
        for line in lines
    ), lines
    for _ in range(12):  # the controller retries; messages differ only by the pod's name...
        sim.advance(10)
    failed = [
        e for e in _events(core, "other", name=rs.metadata.name) if e.reason == "FailedCreate"
    ]
    # ... so after 10 in 10 minutes client-go's aggregator combines them into one Event
    combined = [e for e in failed if e.message.startswith("(combined from similar events): ")]
    assert len(combined) == 1 and len(failed) == 10, [e.message for e in failed]


def test_an_unschedulable_pod_gets_failed_scheduling_with_the_scheduler_s_message(
    sim: Simulator, core: Any
) -> None:
    core.create_namespaced_pod(
        NS,
        {
            "metadata": {"name": "huge"},
            "spec": {
                "containers": [
                    {"name": "app", "image": "x:1", "resources": {"requests": {"cpu": "64"}}}
                ]
            },
        },
    )
    sim.settle()
    lines = describe_events(sim, "pod", "huge", NS)
    message = (
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod."
    )
    assert any(
        line.startswith("Warning")
        and "FailedScheduling" in line
        and "default-scheduler" in line
        and line.endswith(message)
        for line in lines
    ), lines
    cond = core.read_namespaced_pod("huge", NS).status.conditions[0]
    assert cond.message == message


def test_oom_kills_show_as_back_off_and_restarts_not_as_oom_events(
    sim: Simulator, core: Any
) -> None:
    sim.advance(90)
    [pod] = _pods(core, "leaky", "other")
    status = pod.status.container_statuses[0]
    assert status.restart_count >= 2
    assert status.last_state.terminated.reason == "OOMKilled"
    events = {e.reason: e for e in _events(core, "other", name=pod.metadata.name)}
    assert "OOMKilling" not in events and "SystemOOM" not in events
    back_off = events["BackOff"]
    assert back_off.type == "Warning" and back_off.count == status.restart_count
    assert back_off.message == (
        f"Back-off restarting failed container app in pod "
        f"{pod.metadata.name}_other({pod.metadata.uid})"
    )
    running = status.state.running is not None
    assert events["Started"].count == status.restart_count + (1 if running else 0)
    lines = describe_events(sim, "pod", pod.metadata.name, "other")
    assert any(
        line.startswith("Warning") and "BackOff" in line and f"(x{back_off.count} over" in line
        for line in lines
    ), lines


def test_events_expire_an_hour_after_they_were_last_written(sim: Simulator, core: Any) -> None:
    assert [e.reason for e in _events(core, NS, name="web", kind="Deployment")] == [
        "ScalingReplicaSet"
    ]
    sim.advance(3599)
    assert _events(core, NS, name="web", kind="Deployment")
    sim.advance(2)
    assert _events(core, NS, name="web", kind="Deployment") == []
    out = run_kubectl(sim, "describe", "deployment", "web", "-n", NS).stdout
    assert re.search(r"Events:\s+<none>\s*$", out), out[-300:]


def test_scale_mode_keeps_controller_and_scheduler_events_but_not_kubelet_chatter() -> None:
    with running_simulator(nodes=3, pods=20) as sim:
        api = sim.api_client()
        core = client.CoreV1Api(api)
        pod = core.list_pod_for_all_namespaces(limit=1).items[0]
        core.delete_namespaced_pod(pod.metadata.name, pod.metadata.namespace)
        sim.settle()
        sim.cordon(pod.spec.node_name)
        sim.settle()
        events = core.list_event_for_all_namespaces().items
        sources = {(e.source.component, e.reason) for e in events}
        assert ("replicaset-controller", "SuccessfulCreate") in sources
        assert ("default-scheduler", "Scheduled") in sources
        assert ("kubelet", "NodeNotSchedulable") in sources
        assert not {r for c, r in sources if c == "kubelet"} - {"NodeNotSchedulable"}, sources
        api.close()
