"""Scalers over REST: CPA params validated with the field named, CRUD, ETags, audit."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from app.documents.scaler import validate_scaler_params

DNS = {
    "name": "coredns",
    "target": {"namespace": "kube-system", "kind": "Deployment", "name": "coredns"},
    "params": {"linear": {"coresPerReplica": 256, "nodesPerReplica": 16, "min": 1, "max": 10}},
    "nodeSelector": "pool=system",
}


def create(client: FlaskClient, doc: dict[str, Any] = DNS) -> Any:
    resp = client.post("/api/v1/scalers", json=doc)
    assert resp.status_code == 201, resp.get_json()
    return resp


def test_crud(client: FlaskClient) -> None:
    resp = create(client)
    body = resp.get_json()
    assert body["enabled"] is True
    assert body["status"] == {
        "lastProposed": None,
        "lastApplied": None,
        "lastRunTime": None,
        "message": None,
    }
    assert client.post("/api/v1/scalers", json=DNS).status_code == 409
    assert [s["name"] for s in client.get("/api/v1/scalers").get_json()["items"]] == ["coredns"]
    etag = resp.headers["ETag"]
    patched = client.patch(
        "/api/v1/scalers/coredns", json={"enabled": False}, headers={"If-Match": etag}
    )
    assert patched.status_code == 200
    assert patched.get_json()["enabled"] is False
    assert (
        client.put("/api/v1/scalers/coredns", json=DNS, headers={"If-Match": etag}).status_code
        == 412
    )
    ladder = {**DNS, "params": {"ladder": {"nodesToReplicas": [[1, 1], [10, 3]]}}}
    assert client.put("/api/v1/scalers/coredns", json=ladder).status_code == 200
    assert client.get("/api/v1/scalers/coredns").get_json()["params"] == ladder["params"]
    assert client.delete("/api/v1/scalers/coredns").status_code == 204
    assert client.get("/api/v1/scalers/coredns").status_code == 404
    actions = [
        e["action"] for e in client.get("/api/v1/events?objectKind=Scaler").get_json()["items"]
    ]
    assert actions == ["delete", "update", "update", "create"]


def test_configmap_text_params_are_accepted_and_stored_as_json(client: FlaskClient) -> None:
    doc = {**DNS, "params": {"linear": '{"coresPerReplica": 2, "min": 2, "max": 100}'}}
    body = create(client, doc).get_json()
    assert body["params"] == {"linear": {"coresPerReplica": 2, "min": 2, "max": 100}}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "params"),
        ({"linear": {"min": 1}, "ladder": {}}, "params"),
        ({"exponential": {}}, "params.exponential"),
        ({"linear": {"min": 1}}, "params.linear"),
        ({"linear": {"coresPerReplica": -1}}, "params.linear.coresPerReplica"),
        ({"linear": {"coresPerReplica": "2"}}, "params.linear.coresPerReplica"),
        ({"linear": {"nodesPerReplica": 1, "min": 1.5}}, "params.linear.min"),
        ({"linear": {"nodesPerReplica": 1, "min": 5, "max": 2}}, "params.linear.max"),
        (
            {"linear": {"nodesPerReplica": 1, "preventSinglePointFailure": 1}},
            "params.linear.preventSinglePointFailure",
        ),
        ({"linear": {"nodesPerReplica": 1, "colour": 1}}, "params.linear.colour"),
        ({"ladder": {}}, "params.ladder"),
        ({"ladder": {"coresToReplicas": []}}, "params.ladder.coresToReplicas"),
        ({"ladder": {"coresToReplicas": [[1, 2, 3]]}}, "params.ladder.coresToReplicas[0]"),
        ({"ladder": {"nodesToReplicas": [[1, -2]]}}, "params.ladder.nodesToReplicas[0][1]"),
    ],
)
def test_bad_params_name_the_field(client: FlaskClient, params: Any, field: str) -> None:
    assert field in {e.field for e in validate_scaler_params(params)}
    resp = client.post("/api/v1/scalers", json={**DNS, "params": params})
    assert resp.status_code == 422
    assert field in {d["field"] for d in resp.get_json()["details"]}
    assert client.get("/api/v1/scalers").get_json()["items"] == []


def test_bad_target_selector_and_behavior(client: FlaskClient) -> None:
    doc = {
        "name": "x",
        "target": {"namespace": "kube-system", "kind": "DaemonSet", "name": "dns"},
        "params": {"linear": {"nodesPerReplica": 1}},
        "nodeSelector": "not a selector",
        "enabled": "yes",
        "behavior": {"scaleUp": "fast"},
    }
    resp = client.post("/api/v1/scalers", json=doc)
    assert resp.status_code == 422
    fields = {d["field"] for d in resp.get_json()["details"]}
    assert {"target.kind", "nodeSelector", "enabled"} <= fields
    assert any(f.startswith("behavior") for f in fields)
    missing = client.post("/api/v1/scalers", json={"name": "y"})
    assert {d["field"] for d in missing.get_json()["details"]} == {"target", "params"}


def policy(**overrides: Any) -> dict[str, Any]:
    return {"type": "Pods", "value": 1, "periodSeconds": 60, **overrides}


@pytest.mark.parametrize(
    ("behavior", "field"),
    [
        ({"scaleUp": {"policies": [policy(type="Nodes")]}}, "behavior.scaleUp.policies[0].type"),
        ({"scaleDown": {"policies": [policy(value=-1)]}}, "behavior.scaleDown.policies[0].value"),
        (
            {"scaleDown": {"policies": [policy(), policy(type="Percent", value=-5)]}},
            "behavior.scaleDown.policies[1].value",
        ),
        (
            {"scaleUp": {"policies": [policy(periodSeconds=0)]}},
            "behavior.scaleUp.policies[0].periodSeconds",
        ),
        (
            {"scaleDown": {"policies": [policy(periodSeconds=1801)]}},
            "behavior.scaleDown.policies[0].periodSeconds",
        ),
        (
            {"scaleDown": {"stabilizationWindowSeconds": -1}},
            "behavior.scaleDown.stabilizationWindowSeconds",
        ),
        (
            {"scaleUp": {"stabilizationWindowSeconds": 3601}},
            "behavior.scaleUp.stabilizationWindowSeconds",
        ),
        ({"scaleUp": {"selectPolicy": "Average"}}, "behavior.scaleUp.selectPolicy"),
        ({"scaleDown": {"selectPolicy": "max"}}, "behavior.scaleDown.selectPolicy"),
    ],
)
def test_bad_behavior_names_exactly_the_field(
    client: FlaskClient, behavior: dict[str, Any], field: str
) -> None:
    resp = client.post("/api/v1/scalers", json={**DNS, "behavior": behavior})
    assert resp.status_code == 422
    assert [d["field"] for d in resp.get_json()["details"]] == [field]
    assert client.get("/api/v1/scalers").get_json()["items"] == []
    # The same on update: the stored scaler is left as it was.
    create(client)
    patched = client.patch("/api/v1/scalers/coredns", json={"behavior": behavior})
    assert patched.status_code == 422
    assert [d["field"] for d in patched.get_json()["details"]] == [field]
    assert "behavior" not in client.get("/api/v1/scalers/coredns").get_json()


@pytest.mark.parametrize(
    "behavior",
    [
        {},
        {"scaleDown": {"stabilizationWindowSeconds": 0}},
        {
            "scaleUp": {"selectPolicy": "Disabled"},
            "scaleDown": {
                "stabilizationWindowSeconds": 3600,
                "selectPolicy": "Min",
                "policies": [policy(periodSeconds=1), policy(type="Percent", periodSeconds=1800)],
            },
        },
    ],
)
def test_valid_behavior_at_the_bounds_is_stored_as_given(
    client: FlaskClient, behavior: dict[str, Any]
) -> None:
    body = create(client, {**DNS, "behavior": behavior}).get_json()
    assert body["behavior"] == behavior
