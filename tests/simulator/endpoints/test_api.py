"""The REST surface through the official client: lists, pagination, selectors, errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from tests.support.simulators import pod_body


def _status(e: ApiException) -> dict[str, Any]:
    body = json.loads(e.body)
    assert body["kind"] == "Status" and body["status"] == "Failure"
    assert body["code"] == e.status
    return body


def test_lists_carry_resource_versions_and_objects_are_real_shaped(core, apps):
    pods = core.list_namespaced_pod("shop")
    assert len(pods.items) == 3
    assert int(pods.metadata.resource_version) >= max(
        int(p.metadata.resource_version) for p in pods.items
    )
    pod = pods.items[0]
    assert pod.status.phase == "Running" and pod.spec.node_name.startswith("node-")
    assert pod.metadata.owner_references[0].kind == "ReplicaSet"
    rs = apps.read_namespaced_replica_set(pod.metadata.owner_references[0].name, "shop")
    h = rs.metadata.labels["pod-template-hash"]
    assert pod.metadata.labels["pod-template-hash"] == h
    assert rs.metadata.owner_references[0].kind == "Deployment"
    assert rs.metadata.owner_references[0].name == "web"
    nodes = core.list_node()
    assert [n.metadata.name for n in nodes.items] == ["node-0", "node-1", "node-2"]
    assert nodes.items[0].status.allocatable["cpu"]


def test_pagination_with_limit_and_continue(core):
    for i in range(7):
        core.create_namespaced_pod("other", pod_body(f"p{i}"))
    seen, token, pages = [], None, 0
    while True:
        page = core.list_namespaced_pod("other", limit=3, _continue=token)
        pages += 1
        seen += [p.metadata.name for p in page.items]
        token = page.metadata._continue
        if not token:
            break
        assert page.metadata.remaining_item_count == 7 - len(seen)
    assert pages == 3 and seen == [f"p{i}" for i in range(7)]


def test_resource_version_zero_is_served_whole_from_cache(core):
    for i in range(4):
        core.create_namespaced_pod("other", pod_body(f"p{i}"))
    page = core.list_namespaced_pod("other", limit=2, resource_version="0")
    assert len(page.items) == 4 and not page.metadata._continue


def test_label_and_field_selectors(core):
    core.create_namespaced_pod("other", pod_body("a", labels={"app": "x", "tier": "db"}))
    core.create_namespaced_pod("other", pod_body("b", labels={"app": "y"}))
    names = lambda r: sorted(p.metadata.name for p in r.items)  # noqa: E731
    assert names(core.list_namespaced_pod("other", label_selector="app=x")) == ["a"]
    assert names(core.list_namespaced_pod("other", label_selector="app in (x,y),!tier")) == ["b"]
    assert names(core.list_namespaced_pod("other", label_selector="app!=x")) == ["b"]
    on_node0 = core.list_pod_for_all_namespaces(field_selector="spec.nodeName=node-0")
    assert on_node0.items and all(p.spec.node_name == "node-0" for p in on_node0.items)
    shop = core.list_pod_for_all_namespaces(
        field_selector="metadata.namespace=shop,status.phase=Running"
    )
    assert len(shop.items) == 3
    with pytest.raises(ApiException) as e:
        core.list_pod_for_all_namespaces(field_selector="spec.bogus=1")
    assert e.value.status == 400 and "field label not supported" in _status(e.value)["message"]
    with pytest.raises(ApiException) as e:
        core.list_pod_for_all_namespaces(label_selector="a in (b")
    assert e.value.status == 400


def test_generate_name_creates_unique_names(core):
    a = core.create_namespaced_pod("other", pod_body(generate_name="gen-"))
    b = core.create_namespaced_pod("other", pod_body(generate_name="gen-"))
    assert a.metadata.name.startswith("gen-") and len(a.metadata.name) == len("gen-") + 5
    assert a.metadata.name != b.metadata.name
    assert a.metadata.uid and a.metadata.creation_timestamp


def test_create_existing_is_409_already_exists(core):
    core.create_namespaced_pod("other", pod_body("dup"))
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod("other", pod_body("dup"))
    assert e.value.status == 409 and _status(e.value)["reason"] == "AlreadyExists"


def test_not_found_objects_and_unknown_resources(core, api_client):
    with pytest.raises(ApiException) as e:
        core.read_namespaced_pod("nope", "shop")
    body = _status(e.value)
    assert e.value.status == 404 and body["reason"] == "NotFound"
    assert body["message"] == 'pods "nope" not found'
    with pytest.raises(ApiException) as e:
        _call(api_client, *_raw(api_client, "GET", "/apis/example.com/v1/widgets"))
    assert e.value.status == 404
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod("missing-ns", pod_body("x"))
    assert e.value.status == 404
    assert _status(e.value)["message"] == 'namespaces "missing-ns" not found'


def _raw(
    api_client: client.ApiClient,
    method: str,
    path: str,
    body: str | None = None,
    content_type: str = "application/json",
) -> tuple[Any, ...]:
    """A raw request through the client's own transport, for bodies its models can't express."""
    url = api_client.configuration.host + path
    headers = {"Content-Type": content_type, "Accept": "application/json"}
    return method, url, headers, body


def _call(api_client: client.ApiClient, *args) -> tuple[int, dict[str, Any]]:
    resp = api_client.call_api(*args)
    data = resp.read()
    if resp.status >= 400:
        raise ApiException(http_resp=resp)
    return resp.status, json.loads(data)


def test_malformed_body_is_400(api_client):
    with pytest.raises(ApiException) as e:
        _call(api_client, *_raw(api_client, "POST", "/api/v1/namespaces/other/pods", "{nope"))
    assert e.value.status == 400 and _status(e.value)["reason"] == "BadRequest"
    with pytest.raises(ApiException) as e:
        _call(
            api_client,
            *_raw(
                api_client,
                "POST",
                "/api/v1/namespaces/other/pods",
                json.dumps({"kind": "Service", "apiVersion": "v1"}),
            ),
        )
    assert e.value.status == 400


def test_invalid_objects_are_422(core):
    bad = pod_body("bad", cpu="2")
    bad["spec"]["containers"][0]["resources"]["limits"] = {"cpu": "1"}
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod("other", bad)
    body = _status(e.value)
    assert e.value.status == 422 and body["reason"] == "Invalid"
    assert body["details"]["causes"][0]["field"] == "spec.containers[0].resources.requests"
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod(
            "other", {"metadata": {"name": "Bad_Name"}, "spec": {"containers": []}}
        )
    assert e.value.status == 422


def test_patches_json_merge_strategic_and_invalid(core):
    core.create_namespaced_pod("other", pod_body("p"))
    out = core.patch_namespaced_pod(
        "p", "other", [{"op": "add", "path": "/metadata/labels/extra", "value": "1"}]
    )
    assert out.metadata.labels["extra"] == "1"
    out = core.patch_namespaced_pod(
        "p", "other", {"metadata": {"labels": {"extra": None, "more": "2"}}}
    )
    assert "extra" not in out.metadata.labels and out.metadata.labels["more"] == "2"
    with pytest.raises(ApiException) as e:  # cannot apply: 422
        core.patch_namespaced_pod("p", "other", [{"op": "remove", "path": "/metadata/nope"}])
    assert e.value.status == 422
    with pytest.raises(ApiException) as e:  # not a patch at all: 400
        core.patch_namespaced_pod("p", "other", [{"op": "jump", "path": "/x"}])
    assert e.value.status == 400
    with pytest.raises(ApiException) as e:  # resources are immutable outside /resize
        core.patch_namespaced_pod(
            "p",
            "other",
            {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "200m"}}}]}},
        )
    assert e.value.status == 422


def test_node_taints_are_an_atomic_list_in_a_strategic_merge_patch(sim, core):
    """As in Kubernetes (listType=atomic): the patch's list replaces the node's, [] clears it."""
    name = core.list_node().items[0].metadata.name
    core.patch_node(name, {"spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]}})
    core.patch_node(name, {"spec": {"taints": [{"key": "b", "effect": "NoExecute"}]}})
    assert [t.key for t in core.read_node(name).spec.taints] == ["b"]
    core.patch_node(name, {"spec": {"taints": []}})
    assert not core.read_node(name).spec.taints


def test_delete_returns_the_pod_and_replacements_come(sim, core):
    pods = core.list_namespaced_pod("shop").items
    victim = pods[0].metadata.name
    deleted = core.delete_namespaced_pod(victim, "shop")
    assert deleted.metadata.name == victim
    sim.settle()
    now = core.list_namespaced_pod("shop").items
    assert len(now) == 3 and victim not in {p.metadata.name for p in now}


def test_discovery(api_client):
    _, groups = _call(api_client, *_raw(api_client, "GET", "/apis"))
    names = {g["name"] for g in groups["groups"]}
    assert {"apps", "policy", "coordination.k8s.io", "metrics.k8s.io"} <= names
    _, res = _call(api_client, *_raw(api_client, "GET", "/api/v1"))
    assert {"pods", "pods/eviction", "pods/resize", "nodes"} <= {
        r["name"] for r in res["resources"]
    }


def test_stats_count_requests_by_class(sim, core):
    sim.reset_stats()
    core.list_namespaced_pod("shop")
    core.read_namespaced_pod(core.list_namespaced_pod("shop").items[0].metadata.name, "shop")
    stats = sim.stats()
    assert stats["byClass"]["LIST"] == 2 and stats["byClass"]["other"] == 1
    assert stats["byResource"]["pods"] == {"list": 2, "get": 1}
