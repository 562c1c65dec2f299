"""The real kubectl's read-only commands against the simulator: `get` with kube's columns,
`get events`, `top pods|nodes` (metrics.k8s.io), `describe pod|node|deployment` with their Events,
and `logs` (a Status: the simulated kubelets have no logs). Each is checked against what the
official Python client reads. One cluster for the module, left as it was found."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.simulator.apiserver import quantity
from app.simulator.simulator import Simulator
from tests.support.json_bodies import json_object
from tests.support.kubectl import WORKFLOWS, Kubectl, deployment, manifest

NS = "demo"


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return WORKFLOWS


@pytest.fixture(scope="module")
def web(
    module_kubectl: Kubectl, module_sim: Simulator, tmp_path_factory: pytest.TempPathFactory
) -> str:
    """A two-pod Deployment `web` that has run for a minute."""
    module_kubectl(
        "apply", "-f", manifest(tmp_path_factory.mktemp("web"), deployment("web", replicas=2))
    )
    module_sim.settle()
    module_sim.advance(60)
    return "web"


def rows(out: str) -> list[list[str]]:
    """kubectl's table: the header and each row, split on runs of spaces."""
    return [line.split() for line in out.splitlines() if line.strip()]


def test_get_prints_kubes_columns_for_pods_deployments_and_nodes(
    module_kubectl: Kubectl, web: str, module_api: client.ApiClient
) -> None:
    pods = client.CoreV1Api(module_api).list_namespaced_pod(NS, label_selector="app=web").items
    table = rows(module_kubectl.out("get", "pods", "-n", NS, "-o", "wide"))
    assert table[0] == [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED",
        "NODE",
        "READINESS",
        "GATES",
    ]
    printed = {r[0]: r for r in table[1:]}
    for pod in pods:
        row = printed[pod.metadata.name]
        assert row[1:5] == ["1/1", "Running", "0", "60s"]
        assert (row[5], row[6]) == (pod.status.pod_ip, pod.spec.node_name)
    table = rows(module_kubectl.out("get", "deploy", "web", "-n", NS, "-o", "wide"))
    assert table == [
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"],
        ["web", "2/2", "2", "2", "60s", "app", "nginx:1.27", "app=web"],
    ]
    nodes = rows(module_kubectl.out("get", "nodes"))
    assert nodes[0] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert [r[:3] for r in nodes[1:]] == [[f"node-{i}", "Ready", "<none>"] for i in range(3)]


def test_get_events_shows_what_the_controllers_scheduler_and_kubelets_did(
    module_kubectl: Kubectl, web: str, module_api: client.ApiClient
) -> None:
    table = rows(module_kubectl.out("get", "events", "-n", NS))
    assert table[0] == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    reasons = {(r[2], r[3].split("/")[0]) for r in table[1:]}
    assert {("ScalingReplicaSet", "deployment"), ("SuccessfulCreate", "replicaset")} <= reasons
    assert {("Scheduled", "pod"), ("Started", "pod")} <= reasons
    stored = client.CoreV1Api(module_api).list_namespaced_event(NS).items
    assert len(stored) == len(table) - 1


def test_top_pods_containers_and_nodes_print_metrics_server_usage(
    module_kubectl: Kubectl, web: str, module_api: client.ApiClient
) -> None:
    metrics = client.CustomObjectsApi(module_api)
    pods = json_object(
        metrics.list_namespaced_custom_object("metrics.k8s.io", "v1beta1", NS, "pods")
    )["items"]
    assert len(pods) == 2

    def millicores(text: str) -> str:
        return f"{math.ceil(quantity.cores(text) * 1000)}m"

    def mebibytes(text: str) -> str:
        return f"{quantity.bytes_(text) // (1 << 20)}Mi"

    table = rows(module_kubectl.out("top", "pods", "-n", NS, "--containers"))
    assert table[0] == ["POD", "NAME", "CPU(cores)", "MEMORY(bytes)"]
    expected = [
        [
            p["metadata"]["name"],
            c["name"],
            millicores(c["usage"]["cpu"]),
            mebibytes(c["usage"]["memory"]),
        ]
        for p in pods
        for c in p["containers"]
    ]
    assert sorted(table[1:]) == sorted(expected)
    table = rows(module_kubectl.out("top", "pods", "-n", NS))
    assert table[0] == ["NAME", "CPU(cores)", "MEMORY(bytes)"]
    assert sorted(r[0] for r in table[1:]) == sorted(p["metadata"]["name"] for p in pods)
    nodes = json_object(metrics.list_cluster_custom_object("metrics.k8s.io", "v1beta1", "nodes"))[
        "items"
    ]
    table = rows(module_kubectl.out("top", "nodes"))
    assert table[0] == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
    assert {r[0]: r[1] for r in table[1:]} == {
        n["metadata"]["name"]: millicores(n["usage"]["cpu"]) for n in nodes
    }


def test_describe_pod_node_and_deployment_show_their_state_and_events(
    module_kubectl: Kubectl, web: str, module_api: client.ApiClient
) -> None:
    pod = client.CoreV1Api(module_api).list_namespaced_pod(NS, label_selector="app=web").items[0]
    out = module_kubectl.out("describe", "pod", pod.metadata.name, "-n", NS)
    assert f"Node:             {pod.spec.node_name}/{pod.status.host_ip}" in out
    assert "Status:           Running" in out
    assert f"Controlled By:  ReplicaSet/{pod.metadata.owner_references[0].name}" in out
    assert f"Successfully assigned {NS}/{pod.metadata.name} to {pod.spec.node_name}" in out
    out = module_kubectl.out("describe", "node", pod.spec.node_name)
    assert "Non-terminated Pods:" in out and pod.metadata.name in out
    assert "Allocated resources:" in out
    out = module_kubectl.out("describe", "deployment", "web", "-n", NS)
    rs = pod.metadata.owner_references[0].name
    assert (
        "Replicas:               2 desired | 2 updated | 2 total | 2 available | 0 unavailable"
        in out
    )
    assert "StrategyType:           RollingUpdate" in out
    assert "RollingUpdateStrategy:  0 max unavailable, 1 max surge" in out
    assert "Available      True    MinimumReplicasAvailable" in out
    assert "Progressing    True    NewReplicaSetAvailable" in out
    assert f"NewReplicaSet:   {rs} (2/2 replicas created)" in out
    assert f"Scaled up replica set {rs} from 0 to 2" in out


def test_logs_answer_that_the_simulated_cluster_has_none(
    module_kubectl: Kubectl,
    module_sim: Simulator,
    web: str,
    module_api: client.ApiClient,
    tmp_path: Path,
) -> None:
    core = client.CoreV1Api(module_api)
    pod = core.list_namespaced_pod(NS, label_selector="app=web").items[0].metadata.name
    failed = module_kubectl("logs", "-n", NS, pod, check=False)
    assert failed.returncode == 1
    assert failed.stderr.strip() == (
        "Error from server (ServiceUnavailable): container logs are not available in the "
        "simulated cluster: its kubelets run no containers "
        f'(pod "{pod}" in namespace "{NS}", container "app")'
    )
    failed = module_kubectl("logs", "-n", NS, "deployment/web", check=False)
    assert "Error from server (ServiceUnavailable)" in failed.stderr
    with pytest.raises(ApiException) as refused:
        core.read_namespaced_pod_log(pod, NS, container="nope")
    assert refused.value.status == 400
    assert json.loads(refused.value.body)["message"] == f"container nope is not valid for pod {pod}"
    with pytest.raises(ApiException) as missing:
        core.read_namespaced_pod_log("no-such-pod", NS)
    assert missing.value.status == 404
    # A pod no node took yet has no logs: an empty answer, as kube-apiserver gives.
    module_kubectl("apply", "-f", manifest(tmp_path, deployment("big", replicas=1, cpu="64")))
    module_sim.settle()
    pending = core.list_namespaced_pod(NS, label_selector="app=big").items[0].metadata.name
    assert module_kubectl.out("logs", "-n", NS, pending) == ""
    module_kubectl("delete", "-n", NS, "deployment/big")
    module_sim.settle()
