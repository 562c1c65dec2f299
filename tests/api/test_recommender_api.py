"""The policy's recommender over REST (stored as written, checked field by field) and each
recommendation's reason."""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from app.store.extensions import db
from app.store.models import Policy as PolicyRow
from app.store.policies import InvalidPolicyLog, valid_policies
from tests.support.usage import seed

KRR: dict[str, Any] = {
    "name": "web",
    "namespace": "shop",
    "target": {"kind": "Deployment", "name": "web"},
    "recommender": "krr-simple",
    "recommenderParams": {"cpuPercentile": 90, "historyDuration": 24},
}


def test_a_policys_recommender_round_trips_and_reaches_the_recommender(
    app: Flask, client: FlaskClient
) -> None:
    resp = client.post("/api/v1/policies", json=KRR)
    assert resp.status_code == 201, resp.get_json()
    got = client.get("/api/v1/policies/shop/web").get_json()
    assert (got["recommender"], got["recommenderParams"]) == (
        "krr-simple",
        {"cpuPercentile": 90, "historyDuration": 24},
    )
    row = db.session.scalars(select(PolicyRow)).one()
    assert (row.recommender, row.recommender_params) == ("krr-simple", KRR["recommenderParams"])
    [policy] = valid_policies(db.session, InvalidPolicyLog("test"))
    assert policy.recommender.name == "krr-simple"
    assert policy.recommender.params["cpuPercentile"] == 90.0
    assert policy.recommender.params["memoryBufferPercentage"] == 15.0  # the default
    # a merge patch removing the parameters leaves the strategy with its defaults
    patched = client.patch(
        "/api/v1/policies/shop/web",
        json={"recommenderParams": None},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.get_json()
    assert "recommenderParams" not in patched.get_json()
    [policy] = valid_policies(db.session, InvalidPolicyLog("test"))
    assert policy.recommender.params["cpuPercentile"] == 95.0


def test_a_policy_without_recommender_is_vpa_and_says_nothing(
    app: Flask, client: FlaskClient
) -> None:
    doc = {k: v for k, v in KRR.items() if not k.startswith("recommender")}
    assert client.post("/api/v1/policies", json=doc).status_code == 201
    got = client.get("/api/v1/policies/shop/web").get_json()
    assert "recommender" not in got and "recommenderParams" not in got
    [policy] = valid_policies(db.session, InvalidPolicyLog("test"))
    assert policy.recommender.name == "vpa"


def test_a_bad_recommender_or_parameter_is_422_naming_it(app: Flask, client: FlaskClient) -> None:
    bad = {**KRR, "recommenderParams": {"cpuPercentile": 101, "memory_buffer": 5}}
    resp = client.post("/api/v1/policies", json=bad)
    assert resp.status_code == 422
    details = {d["field"]: d["message"] for d in resp.get_json()["details"]}
    assert details["recommenderParams.cpuPercentile"] == "must be at most 100, got 101"
    assert details["recommenderParams.memory_buffer"].startswith("unknown parameter; expected")
    resp = client.post("/api/v1/policies", json={**KRR, "recommender": "goldilocks"})
    assert resp.status_code == 422
    [detail] = resp.get_json()["details"]
    assert detail["field"] == "recommender"
    assert (
        "unknown recommender 'goldilocks'; expected one of vpa, krr-simple, balanced"
        in (detail["message"])
    )
    resp = client.post("/api/v1/policies", json={**KRR, "recommenderParams": [90]})
    assert [d["field"] for d in resp.get_json()["details"]] == ["recommenderParams"]
    assert db.session.scalars(select(PolicyRow)).all() == []  # nothing written


def test_every_recommendation_says_how_it_was_reached(app: Flask, client: FlaskClient) -> None:
    seed()
    [c] = client.get("/api/v1/recommendations/shop/Deployment/web").get_json()["containers"]
    assert c["reason"].startswith(
        "vpa: CPU p90 of usage (half-life 24h), memory p90 of daily peaks"
    )
