"""Divergences the differential test (tests/realkube/test_differential.py) found between the
simulated cluster and kube-apiserver v1.37, each pinned here by kube-apiserver's answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.simulator.simulator import Simulator
from app.simulator.testing import running_simulator
from tests.support.json_bodies import plain
from tests.support.simulators import send

NODES = [{"namePrefix": "node", "count": 2, "cpu": "8", "memory": "32Gi"}]
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulator]:
    with running_simulator({"nodes": NODES}, version="1.36") as s:
        yield s


@pytest.fixture
def api(sim: Simulator) -> Iterator[client.ApiClient]:
    a = sim.api_client()
    yield a
    a.close()


def _refused(call: Any, *args: Any, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    with pytest.raises(ApiException) as e:
        call(*args, **kwargs)
    return e.value.status, json.loads(e.value.body)


def _pod(name: str, **resources: Any) -> dict[str, Any]:
    container = {"name": "app", "image": "x:1", "resources": resources}
    return {
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"containers": [container]},
    }


def _deployment(name: str) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "metadata": {"name": name},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "x:1"}]},
            },
        },
    }


def test_a_stale_put_is_a_conflict_before_validation(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    old = core.create_namespaced_pod("default", plain(_pod("stale"))).metadata.resource_version
    core.patch_namespaced_pod("stale", "default", {"metadata": {"labels": {"x": "y"}}})
    body = _pod("stale", requests={"cpu": "3"})  # a spec change, which validation refuses
    body["metadata"]["resourceVersion"] = old
    status, answer = _refused(core.replace_namespaced_pod, "stale", "default", body)
    assert (status, answer["reason"]) == (409, "Conflict")


def test_generations(api: client.ApiClient, sim: Simulator) -> None:
    """A pod's generation (KEP-5067) follows its spec; a Deployment's also its annotations; a
    DaemonSet's template generation is carried in its deprecated annotation."""
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    res = {"requests": {"cpu": "100m"}, "limits": {"cpu": "1"}}
    assert core.create_namespaced_pod("default", plain(_pod("gen", **res))).metadata.generation == 1
    sim.settle()
    labelled = core.patch_namespaced_pod("gen", "default", {"metadata": {"labels": {"a": "b"}}})
    assert labelled.metadata.generation == 1
    image = [{"op": "replace", "path": "/spec/containers/0/image", "value": "x:2"}]
    assert core.patch_namespaced_pod("gen", "default", image).metadata.generation == 2
    resize = {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "200m"}}}]}}
    assert core.patch_namespaced_pod_resize("gen", "default", resize).metadata.generation == 3
    apps.create_namespaced_deployment("default", plain(_deployment("gen")))
    note = {"metadata": {"annotations": {"team": "a"}}}
    assert apps.patch_namespaced_deployment("gen", "default", note).metadata.generation == 2
    ds = _deployment("gen-ds")
    del ds["spec"]["replicas"]
    created = apps.create_namespaced_daemon_set("default", plain(ds))
    key = "deprecated.daemonset.template.generation"
    assert created.metadata.annotations[key] == "1"
    template = {"spec": {"template": {"metadata": {"labels": {"v": "2"}}}}}
    patched = apps.patch_namespaced_daemon_set("gen-ds", "default", template)
    assert patched.metadata.annotations[key] == "2"


def test_validation_messages_in_kubes_words(api: client.ApiClient) -> None:
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    _, answer = _refused(core.create_namespace, {"metadata": {"name": "Bad_NS"}})
    assert answer["details"]["causes"][0]["message"].endswith(
        "(e.g. 'my-name',  or '123-abc', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    )
    _, answer = _refused(core.create_namespaced_pod, "default", _pod("gpu", requests={"gpu": "1"}))
    assert [c["message"] for c in answer["details"]["causes"]] == [
        'Invalid value: "gpu": must be a standard resource type or fully qualified',
        'Invalid value: "gpu": must be a standard resource for containers',
    ]
    sts = _deployment("Bad_STS")
    _, answer = _refused(apps.create_namespaced_stateful_set, "default", sts)
    assert "a lowercase RFC 1123 label must consist" in answer["message"]
    failed_test = [{"op": "test", "path": "/metadata/name", "value": "other"}]
    core.create_namespaced_pod("default", plain(_pod("tested")))
    status, answer = _refused(core.patch_namespaced_pod, "tested", "default", failed_test)
    assert (status, answer["reason"], answer["message"]) == (
        422,
        "Invalid",
        "the server rejected our request due to an error in our request",
    )
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "tested"}}
    status, answer = _refused(
        send, api, "POST", "/api/v1/namespaces/default/pods/tested/eviction", body
    )
    assert answer["message"] == (
        'Pod in version "v1" cannot be handled as a Eviction: converting (v1.Pod) to '
        "(policy.Eviction): unknown conversion"
    )
    status, answer = _refused(
        send, api, "GET", LEASES, None, query=[("watch", "true"), ("timeoutSeconds", "x")]
    )
    assert (status, answer["message"]) == (400, 'strconv.ParseInt: parsing "x": invalid syntax')


def _lease(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name},
        "spec": spec,
    }


def test_leases_and_limit_ranges_are_validated(api: client.ApiClient) -> None:
    status, answer = _refused(send, api, "POST", LEASES, _lease("neg", leaseDurationSeconds=-1))
    assert (status, answer["message"]) == (
        422,
        'Lease.coordination.k8s.io "neg" is invalid: spec.leaseDurationSeconds: '
        "Invalid value: -1: must be greater than 0",
    )
    status, answer = _refused(
        send, api, "POST", LEASES, _lease("short", renewTime="2026-12-06T10:00:01.5+00:00")
    )
    assert (status, answer["message"]) == (
        400,
        'Lease in version "v1" cannot be handled as a Lease: parsing time '
        '"2026-12-06T10:00:01.5+00:00" as "2006-01-02T15:04:05.000000Z07:00": '
        'cannot parse ".5+00:00" as ".000000"',
    )
    limit_range = {
        "metadata": {"name": "bad"},
        "spec": {"limits": [{"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}]},
    }
    core = client.CoreV1Api(api)
    status, answer = _refused(core.create_namespaced_limit_range, "default", limit_range)
    assert status == 422
    assert [(c["field"], c["message"]) for c in answer["details"]["causes"]] == [
        ("spec.limits[0].min[cpu]", 'Invalid value: "2": min value 2 is greater than max value 1'),
        (
            "spec.limits[0].defaultRequest[cpu]",
            'Invalid value: "1": min value 2 is greater than default request value 1',
        ),
        (
            "spec.limits[0].default[cpu]",
            'Invalid value: "2": min value 2 is greater than default value 1',
        ),
    ]


def test_a_resource_version_ahead_of_the_server(api: client.ApiClient, sim: Simulator) -> None:
    """The watch cache waits 3 s for it, then: a list answers 504, a watch-list ends with an
    ERROR event holding that Status (a plain watch waits for it, as kube-apiserver's does)."""
    rv = int(
        client.CoordinationV1Api(api).list_namespaced_lease("default").metadata.resource_version
    )
    ahead = str(rv + 1_000_000)
    status, answer = _refused(send, api, "GET", LEASES, None, query=[("resourceVersion", ahead)])
    assert (status, answer["reason"]) == (504, "Timeout")
    assert answer["message"].startswith(f"Timeout: Too large resource version: {ahead}, current: ")
    assert answer["details"]["causes"] == [
        {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
    ]
    query = {
        "watch": "true",
        "sendInitialEvents": "true",
        "resourceVersionMatch": "NotOlderThan",
        "resourceVersion": ahead,
        "timeoutSeconds": "10",
    }
    verb, url, headers, _, _ = api.param_serialize(
        "GET", LEASES, query_params=list(query.items()), auth_settings=["BearerToken"]
    )
    resp = api.rest_client.request(verb, url, headers=headers, _request_timeout=30)
    events = [json.loads(line) for line in resp.read().decode().splitlines() if line]
    assert resp.status == 200
    assert [(e["type"], e["object"]["code"]) for e in events] == [("ERROR", 504)]


def test_a_budget_over_pods_without_a_controller_expects_none(
    api: client.ApiClient, sim: Simulator
) -> None:
    """getExpectedScale counts controllers' scales: with maxUnavailable, bare pods make a
    budget that expects 0 pods and allows no disruption."""
    core, policy = client.CoreV1Api(api), client.PolicyV1Api(api)
    for i in range(2):
        pod = _pod(f"bare-{i}")
        pod["metadata"]["labels"] = {"app": "bare"}
        core.create_namespaced_pod("default", plain(pod))
    budget = {
        "metadata": {"name": "bare"},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "bare"}}},
    }
    policy.create_namespaced_pod_disruption_budget("default", plain(budget))
    sim.settle()
    sim.advance(30)
    sim.settle()
    status = policy.read_namespaced_pod_disruption_budget("bare", "default").status
    assert (status.expected_pods, status.disruptions_allowed, status.current_healthy) == (0, 0, 2)
    eviction = {"metadata": {"name": "bare-0", "namespace": "default"}}
    code, answer = _refused(core.create_namespaced_pod_eviction, "bare-0", "default", eviction)
    assert code == 429
    assert answer["details"]["causes"][0]["message"] == (
        "The disruption budget bare does not allow evicting pods currently"
    )


def test_defaults_and_event_namespaces(api: client.ApiClient) -> None:
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    node = {"metadata": {"name": "extra"}, "status": {"capacity": {"cpu": "2", "pods": "10"}}}
    assert core.create_node(plain(node)).status.allocatable == {"cpu": "2", "pods": "10"}
    core.delete_node("extra")
    sts = _deployment("pvc")
    retention = apps.create_namespaced_stateful_set("default", plain(sts)).spec
    assert retention.persistent_volume_claim_retention_policy.to_dict() == {
        "when_deleted": "Retain",
        "when_scaled": "Retain",
    }
    event = {
        "metadata": {"name": "orphan"},
        "involvedObject": {"kind": "Pod", "name": "x", "namespace": "other"},
        "reason": "Test",
    }
    status, answer = _refused(core.create_namespaced_event, "default", event)
    assert status == 422
    assert answer["details"]["causes"][0]["field"] == "involvedObject.namespace"


def test_not_found_answers(api: client.ApiClient) -> None:
    """An unknown resource of a served group/version is a NotFound Status with empty details;
    below a group/version the server does not serve, kube-apiserver answers plain text."""
    verb, url, headers, _, _ = api.param_serialize(
        "GET", "/api/v1/namespaces/default/bogus", auth_settings=["BearerToken"]
    )
    resp = api.rest_client.request(verb, url, headers=headers)
    body = json.loads(resp.read())
    assert (resp.status, body["reason"], body["details"]) == (404, "NotFound", {})
    verb, url, headers, _, _ = api.param_serialize(
        "GET", "/apis/bogus.example.com/v1/things", auth_settings=["BearerToken"]
    )
    resp = api.rest_client.request(verb, url, headers=headers)
    assert (resp.status, resp.read()) == (404, b"404 page not found\n")
