"""Pod templates get only what kube-apiserver defaults in a PodTemplateSpec (SetDefaults_PodSpec,
SetDefaults_Container of pkg/apis/core/v1/defaults.go); pods get, on top, SetDefaults_Pod's
enableServiceLinks and what the pod-only admission plugins set (ServiceAccount, Priority,
DefaultTolerationSeconds). Read back with the official Python client and the real kubectl."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client

from app.simulator.apiserver import kinds
from app.simulator.simulator import Simulator
from tests.support.json_bodies import plain, raw_body
from tests.support.kubectl import WORKFLOWS, Kubectl, workload

NS = "demo"
# A PodTemplateSpec's spec as kube-apiserver stores it for `containers` alone.
TEMPLATE_SPEC_DEFAULTS = {
    "restartPolicy": "Always",
    "terminationGracePeriodSeconds": 30,
    "dnsPolicy": "ClusterFirst",
    "securityContext": {},
    "schedulerName": "default-scheduler",
}
CONTAINER_DEFAULTS = {
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "File",
    "imagePullPolicy": "IfNotPresent",
}
POD_ONLY = ("enableServiceLinks", "serviceAccountName", "priority", "preemptionPolicy")
TOLERATE_300S = [
    {
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
    {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
]


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return WORKFLOWS


def raw(api: client.ApiClient, method: str, *args: Any) -> dict[str, Any]:
    """The object as the API server sent it (JSON), through the official client."""
    resp = getattr(client.AppsV1Api(api), method)(*args, _preload_content=False)
    return dict(json.loads(resp.data))


def pods_of(api: client.ApiClient, app: str) -> list[dict[str, Any]]:
    resp = client.CoreV1Api(api).list_namespaced_pod(
        NS, label_selector=f"app={app}", _preload_content=False
    )
    return list(json.loads(raw_body(resp))["items"])


def assert_template_defaults_only(spec: dict[str, Any]) -> None:
    container = spec["containers"][0]
    assert {k: v for k, v in spec.items() if k != "containers"} == TEMPLATE_SPEC_DEFAULTS
    assert {k: container[k] for k in CONTAINER_DEFAULTS} == CONTAINER_DEFAULTS


def assert_pod_defaults(pod: dict[str, Any], tolerations: list[dict[str, Any]]) -> None:
    spec = pod["spec"]
    for key, value in TEMPLATE_SPEC_DEFAULTS.items():
        assert spec[key] == value, key
    assert spec["enableServiceLinks"] is True
    assert spec["serviceAccountName"] == "default"
    assert (spec["priority"], spec["preemptionPolicy"]) == (0, "PreemptLowerPriority")
    assert spec["tolerations"] == tolerations


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "StatefulSet"])
def test_a_workloads_template_has_kubes_template_defaults_and_its_pods_the_pod_ones(
    module_sim: Simulator, module_api: client.ApiClient, kind: str
) -> None:
    name = f"t-{kind.lower()}"
    plural = {"Deployment": "deployment", "ReplicaSet": "replica_set"}.get(kind, "stateful_set")
    getattr(client.AppsV1Api(module_api), f"create_namespaced_{plural}")(NS, workload(kind, name))
    typed = getattr(client.AppsV1Api(module_api), f"read_namespaced_{plural}")(name, NS)
    spec = typed.spec.template.spec
    assert (spec.restart_policy, spec.dns_policy, spec.scheduler_name) == (
        "Always",
        "ClusterFirst",
        "default-scheduler",
    )
    assert spec.termination_grace_period_seconds == 30
    assert spec.containers[0].image_pull_policy == "IfNotPresent"
    assert spec.enable_service_links is None and spec.service_account_name is None
    assert spec.priority is None and spec.preemption_policy is None and spec.tolerations is None
    assert_template_defaults_only(
        raw(module_api, f"read_namespaced_{plural}", name, NS)["spec"]["template"]["spec"]
    )
    module_sim.settle()
    pods = pods_of(module_api, name)
    assert len(pods) == 2
    for pod in pods:
        assert_pod_defaults(pod, TOLERATE_300S)


def test_daemon_pods_keep_the_controllers_tolerations_without_seconds(
    module_sim: Simulator, module_api: client.ApiClient
) -> None:
    """The DaemonSet controller adds not-ready/unreachable NoExecute tolerations without
    tolerationSeconds (util.AddOrUpdateDaemonPodTolerations); DefaultTolerationSeconds then
    finds them tolerated and adds nothing. A template with the 300 s ones would pass them on."""
    client.AppsV1Api(module_api).create_namespaced_daemon_set(
        NS, plain(workload("DaemonSet", "t-ds"))
    )
    ds = raw(module_api, "read_namespaced_daemon_set", "t-ds", NS)
    assert_template_defaults_only(ds["spec"]["template"]["spec"])
    module_sim.settle()
    pods = pods_of(module_api, "t-ds")
    assert pods
    for pod in pods:
        no_execute = [t for t in pod["spec"]["tolerations"] if t.get("effect") == "NoExecute"]
        assert {t["key"] for t in no_execute} == {
            "node.kubernetes.io/not-ready",
            "node.kubernetes.io/unreachable",
        }
        assert all("tolerationSeconds" not in t for t in no_execute), no_execute
        assert pod["spec"]["enableServiceLinks"] is True
        assert pod["spec"]["serviceAccountName"] == "default"


def test_kubectl_create_deployment_stores_only_template_defaults(
    module_kubectl: Kubectl, module_sim: Simulator
) -> None:
    module_kubectl("create", "deployment", "t-kubectl", "-n", NS, "--image=nginx:1.27")
    out = module_kubectl.out("get", "deployment", "t-kubectl", "-n", NS, "-o", "json")
    spec = json.loads(out)["spec"]["template"]["spec"]
    assert_template_defaults_only(spec)
    assert spec["containers"][0]["resources"] == {}
    module_sim.settle()
    pod = json.loads(
        module_kubectl.out("get", "pods", "-n", NS, "-l", "app=t-kubectl", "-o", "json")
    )
    assert [p["spec"]["enableServiceLinks"] for p in pod["items"]] == [True]


NOT_READY, UNREACHABLE = "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"


@pytest.mark.parametrize(
    ("own", "added"),
    [
        ([], [NOT_READY, UNREACHABLE]),
        ([{"operator": "Exists"}], []),  # tolerates every taint
        ([{"key": NOT_READY, "operator": "Exists"}], [UNREACHABLE]),  # every effect
        ([{"operator": "Exists", "effect": "NoSchedule"}], [NOT_READY, UNREACHABLE]),
        ([{"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute"}], [NOT_READY]),
    ],
)
def test_default_toleration_seconds_adds_only_what_the_pod_does_not_tolerate(
    own: list[dict[str, Any]], added: list[str]
) -> None:
    pod: dict[str, Any] = {
        "spec": {"containers": [{"name": "a", "image": "x:1"}], "tolerations": list(own)}
    }
    kinds.default_pod(pod)
    new = pod["spec"]["tolerations"][len(own) :]
    assert [t["key"] for t in new] == added
    assert all(t["tolerationSeconds"] == 300 and t["effect"] == "NoExecute" for t in new)
