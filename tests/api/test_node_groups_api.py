"""DaemonSets per node group over REST: a policy's nodeGroupLabel stored as written (and removed by
a merge patch), a bad one refused naming the field with nothing written, and the groups of a
DaemonSet in its recommendation (SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from app.store.extensions import db
from app.store.models import Policy as PolicyRow
from app.store.policies import InvalidPolicyLog, valid_policies
from tests.support.node_groups import TYPE, add_group
from tests.support.reviews import MI, add_recommendation

AGENT: dict[str, Any] = {
    "name": "agent",
    "namespace": "ops",
    "target": {"kind": "DaemonSet", "name": "agent"},
    "nodeGroupLabel": TYPE,
}


def test_a_policys_node_group_label_round_trips(app: Flask, client: FlaskClient) -> None:
    resp = client.post("/api/v1/policies", json=AGENT)
    assert resp.status_code == 201, resp.get_json()
    assert client.get("/api/v1/policies/ops/agent").get_json()["nodeGroupLabel"] == TYPE
    assert db.session.scalars(select(PolicyRow)).one().node_group_label == TYPE
    [policy] = valid_policies(db.session, InvalidPolicyLog("test"))
    assert policy.node_group_label == TYPE
    patched = client.patch(
        "/api/v1/policies/ops/agent",
        json={"nodeGroupLabel": None},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.get_json()
    assert "nodeGroupLabel" not in patched.get_json()
    [policy] = valid_policies(db.session, InvalidPolicyLog("test"))
    assert policy.node_group_label is None


def test_a_bad_node_group_label_is_422_naming_it(app: Flask, client: FlaskClient) -> None:
    resp = client.post("/api/v1/policies", json={**AGENT, "nodeGroupLabel": "-bad"})
    assert resp.status_code == 422
    [detail] = resp.get_json()["details"]
    assert detail["field"] == "nodeGroupLabel"
    deployment = {**AGENT, "target": {"kind": "Deployment", "name": "web"}}
    resp = client.post("/api/v1/policies", json=deployment)
    assert resp.status_code == 422
    assert [d["field"] for d in resp.get_json()["details"]] == ["nodeGroupLabel"]
    assert db.session.scalars(select(PolicyRow)).all() == []  # nothing written


def test_a_daemonsets_recommendation_shows_its_groups(app: Flask, client: FlaskClient) -> None:
    add_recommendation("agent", 300, 500 * MI, workload=("ops", "DaemonSet", "agent"))
    add_recommendation("web", 200, 300 * MI, workload=("ops", "Deployment", "web"))
    add_group("m5.4xlarge", 240, 900 * MI, 2)
    add_group("m5.large", 60, 300 * MI, 2)
    add_group("<none>", None, 0, None)  # too few samples for a recommendation yet
    doc = client.get("/api/v1/recommendations/ops/DaemonSet/agent").get_json()
    assert doc["nodeGroupLabel"] == TYPE
    [c] = doc["containers"]
    assert c["target"] == {"cpu": "300m", "memory": "500Mi"}  # the DaemonSet-wide one
    groups = {g["nodeGroup"]: g for g in c["nodeGroups"]}
    assert list(groups) == ["<none>", "m5.4xlarge", "m5.large"]
    large = groups["m5.4xlarge"]
    assert large["target"] == {"cpu": "240m", "memory": "900Mi"}
    assert large["pods"] == 2 and large["currentRequests"] == {"cpu": "100m", "memory": "256Mi"}
    assert large["sampleCount"] == 12 and large["reason"] == "vpa: ..."
    assert set(groups["<none>"]) == {
        "nodeGroup",
        "sampleCount",
        "firstSampleTime",
        "lastSampleTime",
        "updateTime",
    }
    items = client.get("/api/v1/recommendations?namespace=ops").get_json()["items"]
    web = next(w for w in items if w["name"] == "web")
    assert "nodeGroupLabel" not in web and "nodeGroups" not in web["containers"][0]
    listed = next(w for w in items if w["name"] == "agent")
    assert listed["containers"][0]["nodeGroups"] == c["nodeGroups"]
