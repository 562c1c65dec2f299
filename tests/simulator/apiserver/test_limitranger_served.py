"""Pod CREATE enforces what kube-apiserver enforces: LimitRanger's defaults and limits (403),
API defaulting of requests, pod-level resources (422), through the official client and kubectl."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from tests.support.json_bodies import plain

NS = "other"


def _limit_range(core: client.CoreV1Api, *items: dict[str, Any], name: str = "limits") -> None:
    core.create_namespaced_limit_range(
        NS,
        plain(
            {
                "apiVersion": "v1",
                "kind": "LimitRange",
                "metadata": {"name": name},
                "spec": {"limits": list(items)},
            }
        ),
    )


def _pod(
    name: str,
    *containers: dict[str, Any],
    init: list[dict[str, Any]] | None = None,
    resources: dict[str, Any] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"image": "busybox:1.36", **c} for c in containers],
    }
    if init:
        spec["initContainers"] = [{"image": "busybox:1.36", **c} for c in init]
    if resources is not None:
        spec["resources"] = resources
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def _c(
    name: str, requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None, **extra
) -> dict[str, Any]:
    res: dict[str, Any] = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    return {"name": name, "resources": res, **extra}


def _refused(core: client.CoreV1Api, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod(NS, plain(body))
    return e.value.status, json.loads(e.value.body)


def test_container_defaults_fill_containers_and_init_containers(core):
    _limit_range(
        core,
        {
            "type": "Container",
            "default": {"cpu": "500m", "memory": "256Mi"},
            "defaultRequest": {"cpu": "100m"},
        },
    )
    pod = core.create_namespaced_pod(
        NS,
        _pod(
            "p",
            _c("app", requests={"memory": "128Mi"}),
            init=[_c("setup")],
        ),
    )
    app, setup = pod.spec.containers[0], pod.spec.init_containers[0]
    # defaultRequest memory falls back to default memory (SetDefaults_LimitRangeItem).
    assert app.resources.requests == {"cpu": "100m", "memory": "128Mi"}
    assert app.resources.limits == {"cpu": "500m", "memory": "256Mi"}
    assert setup.resources.requests == {"cpu": "100m", "memory": "256Mi"}
    assert setup.resources.limits == {"cpu": "500m", "memory": "256Mi"}
    assert pod.metadata.annotations["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu request for container app; "
        "cpu, memory limit for container app; "
        "cpu, memory request for init container setup; "
        "cpu, memory limit for init container setup"
    )


def test_request_defaults_to_own_limit_before_limitranger(core):
    # API defaulting (SetDefaults_Pod) copies the limit into the request at decode time, so
    # LimitRanger's defaultRequest does not apply to a resource that has a limit.
    _limit_range(core, {"type": "Container", "defaultRequest": {"cpu": "100m"}})
    pod = core.create_namespaced_pod(NS, _pod("p", _c("app", limits={"cpu": "1"})))
    assert pod.spec.containers[0].resources.requests == {"cpu": "1"}
    assert pod.spec.containers[0].resources.limits == {"cpu": "1"}
    assert "kubernetes.io/limit-ranger" not in (pod.metadata.annotations or {})


def test_max_defaults_the_limit_and_refuses_a_larger_one(core):
    _limit_range(core, {"type": "Container", "max": {"cpu": "2"}})
    # A container without a limit gets max as its limit (default falls back to max).
    pod = core.create_namespaced_pod(NS, _pod("ok", _c("app", requests={"cpu": "500m"})))
    assert pod.spec.containers[0].resources.limits == {"cpu": "2"}
    status, body = _refused(core, _pod("big", _c("app", limits={"cpu": "4"})))
    assert status == 403 and body["reason"] == "Forbidden"
    assert body["message"] == (
        'pods "big" is forbidden: maximum cpu usage per Container is 2, but limit is 4'
    )
    assert body["details"] == {"name": "big", "kind": "pods"}


def test_min_max_ratio_errors_are_aggregated(core):
    _limit_range(
        core,
        {
            "type": "Container",
            "min": {"memory": "64Mi"},
            "max": {"cpu": "2"},
            "maxLimitRequestRatio": {"cpu": "2"},
        },
    )
    status, body = _refused(
        core,
        _pod(
            "p",
            _c("a", requests={"cpu": "0.5", "memory": "32Mi"}, limits={"cpu": "1500m"}),
            init=[_c("i", requests={"cpu": "100m", "memory": "64Mi"}, limits={"cpu": "3"})],
        ),
    )
    assert status == 403
    assert body["message"] == (
        'pods "p" is forbidden: ['
        "minimum memory usage per Container is 64Mi, but request is 32Mi, "
        "cpu max limit to request ratio per Container is 2, but provided ratio is 3.000000, "
        "maximum cpu usage per Container is 2, but limit is 3, "
        "cpu max limit to request ratio per Container is 2, but provided ratio is 30.000000]"
    )


def test_missing_request_or_limit_is_refused_where_a_rule_needs_it(core):
    _limit_range(core, {"type": "Pod", "max": {"memory": "1Gi"}, "min": {"cpu": "100m"}})
    status, body = _refused(core, _pod("p", _c("a", requests={"memory": "64Mi"})))
    assert status == 403
    assert body["message"] == (
        'pods "p" is forbidden: [minimum cpu usage per Pod is 100m.  No request is specified, '
        "maximum memory usage per Pod is 1Gi.  No limit is specified]"
    )


def test_pod_type_counts_init_containers_and_sidecars_as_the_kubelet_does(core):
    _limit_range(core, {"type": "Pod", "max": {"cpu": "2"}})
    # Regular 1 + sidecar 500m = 1500m; plain init after the sidecar: 1200m + 500m = 1700m.
    ok = _pod(
        "ok",
        _c("app", limits={"cpu": "1"}),
        init=[
            _c("side", limits={"cpu": "500m"}, restartPolicy="Always"),
            _c("setup", limits={"cpu": "1200m"}),
        ],
    )
    core.create_namespaced_pod(NS, ok)
    # The same plain init container before the sidecar is 1200m alone; but at 1600m after it,
    # it makes 2100m.
    big = _pod(
        "big",
        _c("app", limits={"cpu": "1"}),
        init=[
            _c("side", limits={"cpu": "500m"}, restartPolicy="Always"),
            _c("setup", limits={"cpu": "1600m"}),
        ],
    )
    status, body = _refused(core, big)
    assert status == 403
    assert body["message"] == (
        'pods "big" is forbidden: maximum cpu usage per Pod is 2, but limit is 2100m'
    )


def test_pod_level_resources_replace_the_aggregate_for_a_pod_limit(core):
    _limit_range(core, {"type": "Pod", "max": {"cpu": "2"}})
    two_containers = [_c(n, requests={"cpu": "500m"}, limits={"cpu": "1500m"}) for n in ("a", "b")]
    status, body = _refused(core, _pod("sum", *two_containers))
    assert status == 403 and "maximum cpu usage per Pod is 2, but limit is 3" in body["message"]
    # Pod-level limits of 2 cap the pod as a whole: within the LimitRange.
    resp = core.create_namespaced_pod(
        NS,
        _pod("capped", *two_containers, resources={"limits": {"cpu": "2"}}),
        _preload_content=False,
    )
    created = json.loads(resp.data)
    # Pod-level requests default to the pod-level limits (defaultPodRequests).
    assert created["spec"]["resources"] == {"limits": {"cpu": "2"}, "requests": {"cpu": "2"}}


def test_pod_level_resources_are_validated(core):
    status, body = _refused(
        core,
        _pod(
            "p",
            _c("a", requests={"cpu": "1"}, limits={"cpu": "3"}),
            _c("b", requests={"cpu": "500m"}),
            resources={
                "requests": {"cpu": "1", "ephemeral-storage": "1Gi"},
                "limits": {"cpu": "2"},
            },
        ),
    )
    assert status == 422
    assert body["message"] == (
        'Pod "p" is invalid: ['
        'spec.resources.requests[ephemeral-storage]: Unsupported value: "ephemeral-storage": '
        'supported values: "cpu", "hugepages-", "memory", '
        'spec.resources.requests[cpu]: Invalid value: "1": '
        "must be greater than or equal to aggregate container requests of 1500m, "
        'spec.resources.containers[0][cpu].limits: Invalid value: "3": '
        "must be less than or equal to pod limits of 2]"
    )
    status, body = _refused(
        core,
        _pod("q", _c("a"), resources={"requests": {"memory": "2Gi"}, "limits": {"memory": "1Gi"}}),
    )
    assert status == 422
    assert body["message"] == (
        'Pod "q" is invalid: spec.resources.requests: Invalid value: "2Gi": '
        "must be less than or equal to memory limit of 1Gi"
    )


def test_validation_422_comes_before_limitranger_403(core):
    _limit_range(core, {"type": "Container", "max": {"cpu": "1"}})
    status, body = _refused(core, _pod("p", _c("a", requests={"cpu": "3"}, limits={"cpu": "2"})))
    assert status == 422
    assert body["message"] == (
        'Pod "p" is invalid: spec.containers[0].resources.requests: Invalid value: "3": '
        "must be less than or equal to cpu limit of 2"
    )


def test_first_violated_limit_range_by_name_answers(core):
    _limit_range(core, {"type": "Container", "max": {"memory": "1Gi"}}, name="b-memory")
    _limit_range(core, {"type": "Container", "max": {"cpu": "1"}}, name="a-cpu")
    status, body = _refused(core, _pod("p", _c("a", limits={"cpu": "2", "memory": "2Gi"})))
    assert status == 403
    assert body["message"] == (
        'pods "p" is forbidden: maximum cpu usage per Container is 1, but limit is 2'
    )


def test_refused_deployment_pods_get_failed_create_events(sim, core, apps):
    _limit_range(core, {"type": "Container", "max": {"cpu": "1"}})
    apps.create_namespaced_deployment(
        NS,
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "big"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "big"}},
                "template": {
                    "metadata": {"labels": {"app": "big"}},
                    "spec": {"containers": [_c("app", limits={"cpu": "2"}) | {"image": "x:1"}]},
                },
            },
        },
    )
    sim.settle()
    assert not core.list_namespaced_pod(NS, label_selector="app=big").items
    events = [
        e
        for e in core.list_namespaced_event(NS).items
        if e.reason == "FailedCreate" and e.involved_object.kind == "ReplicaSet"
    ]
    assert events and events[0].type == "Warning"
    assert re.fullmatch(
        r'Error creating: pods "big-[a-z0-9]+-[a-z0-9]{5}" is forbidden: '
        r"maximum cpu usage per Container is 1, but limit is 2",
        events[0].message,
    ), events[0].message


kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")


def _kubectl(sim, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", "--kubeconfig", str(sim.kubeconfig_path), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


@kubectl
def test_kubectl_sees_the_refusal_and_the_defaults(sim, core, tmp_path: Path):
    _limit_range(
        core, {"type": "Container", "max": {"cpu": "2"}, "defaultRequest": {"memory": "64Mi"}}
    )
    big = tmp_path / "big.yaml"
    big.write_text(json.dumps(_pod("big", _c("app", limits={"cpu": "4"}))))
    out = _kubectl(sim, "create", "-n", NS, "-f", str(big), "--validate=false")
    assert out.returncode == 1
    assert out.stderr.strip() == (
        f'Error from server (Forbidden): error when creating "{big}": pods "big" is forbidden: '
        "maximum cpu usage per Container is 2, but limit is 4"
    )
    small = tmp_path / "small.yaml"
    small.write_text(json.dumps(_pod("small", _c("app"))))
    out = _kubectl(sim, "create", "-n", NS, "-f", str(small), "--validate=false")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "pod/small created"
    out = _kubectl(
        sim,
        "get",
        "pod",
        "small",
        "-n",
        NS,
        "-o",
        "jsonpath={.spec.containers[0].resources}",
    )
    assert json.loads(out.stdout) == {
        "limits": {"cpu": "2"},
        "requests": {"cpu": "2", "memory": "64Mi"},
    }
