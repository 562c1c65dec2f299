"""Names are whole matches: a trailing newline (which `$` lets through) is refused with 422 naming
the field, for every name a policy or a scaler carries (issue #15)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from flask.testing import FlaskClient

POLICY = {
    "name": "web",
    "namespace": "shop",
    "target": {"kind": "Deployment", "name": "web"},
    "containerPolicies": [{"containerName": "app"}],
}
SCALER = {
    "name": "coredns",
    "target": {"namespace": "kube-system", "kind": "Deployment", "name": "coredns"},
    "params": {"linear": {"nodesPerReplica": 16}},
}


def with_value(doc: dict[str, Any], path: tuple[str | int, ...], value: str) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    cur: Any = out
    for key in path[:-1]:
        cur = cur[key]
    cur[path[-1]] = value
    return out


@pytest.mark.parametrize("suffix", ["\n", "\r\n", " "])
@pytest.mark.parametrize(
    ("path", "field"),
    [
        (("name",), "name"),
        (("namespace",), "namespace"),
        (("target", "name"), "target.name"),
        (("containerPolicies", 0, "containerName"), "containerPolicies[0].containerName"),
    ],
)
def test_a_policy_name_with_a_trailing_newline_is_422(
    client: FlaskClient, path: tuple[str | int, ...], field: str, suffix: str
) -> None:
    doc = with_value(POLICY, path, "web" + suffix)
    resp = client.post("/api/v1/policies", json=doc)
    assert resp.status_code == 422, resp.get_json()
    assert [d["field"] for d in resp.get_json()["details"]] == [field]
    assert client.get("/api/v1/policies").get_json()["items"] == []


@pytest.mark.parametrize(
    ("path", "field"),
    [
        (("name",), "name"),
        (("target", "namespace"), "target.namespace"),
        (("target", "name"), "target.name"),
    ],
)
def test_a_scaler_name_with_a_trailing_newline_is_422(
    client: FlaskClient, path: tuple[str, ...], field: str
) -> None:
    doc = with_value(SCALER, path, "web\n")
    resp = client.post("/api/v1/scalers", json=doc)
    assert resp.status_code == 422, resp.get_json()
    assert [d["field"] for d in resp.get_json()["details"]] == [field]
    assert client.get("/api/v1/scalers").get_json()["items"] == []


def test_the_same_names_without_the_newline_are_accepted(client: FlaskClient) -> None:
    assert client.post("/api/v1/policies", json=POLICY).status_code == 201
    assert client.post("/api/v1/scalers", json=SCALER).status_code == 201
