"""The fleet through the REST API: `?cluster=` on the per-cluster reads (the serving process's own
cluster without it), and GET /api/v1/fleet with each cluster's figures and their true totals.
Two clusters need PostgreSQL; SQLite holds one (its fleet is that one cluster)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from flask.testing import FlaskClient

from app.settings import settings
from app.store.cluster_totals import write_totals
from app.store.extensions import db
from app.store.policies import InvalidPolicyLog
from app.store.savings import Scoper
from tests.support.fleet import fleet, seen  # noqa: F401  (fixture)


def targets(client: FlaskClient, query: str = "") -> list[str]:
    resp = client.get(f"/api/v1/recommendations{query}")
    assert resp.status_code == 200, resp.get_json()
    return [c["target"]["cpu"] for w in resp.get_json()["items"] for c in w["containers"]]


@pytest.mark.usefixtures("fleet")
def test_lists_are_of_the_own_cluster_unless_another_is_named(client: FlaskClient) -> None:
    assert targets(client) == ["100m"]
    assert targets(client, "?cluster=west") == ["500m"]
    assert targets(client, "?cluster=uid-west") == ["500m"]  # by its id
    assert targets(client, "?cluster=east&namespace=shop") == ["100m"]
    one = client.get("/api/v1/recommendations/shop/Deployment/web?cluster=west").get_json()
    assert one["containers"][0]["target"]["cpu"] == "500m"
    refs = [e["objectRef"] for e in client.get("/api/v1/events?cluster=west").get_json()["items"]]
    assert refs == ["shop/web-west"]
    names = {p["name"] for p in client.get("/api/v1/policies?cluster=west").get_json()["items"]}
    assert names == {"west-only", "everywhere"}
    names = {p["name"] for p in client.get("/api/v1/policies").get_json()["items"]}
    assert names == {"east-only", "everywhere"}
    assert client.get("/api/v1/policies/shop/west-only").status_code == 404
    assert client.get("/api/v1/policies/shop/west-only?cluster=west").status_code == 200


@pytest.mark.parametrize("ref", ["north", "*", "all", ""])
def test_a_cluster_not_in_the_database_is_refused_naming_the_parameter(
    client: FlaskClient, ref: str
) -> None:
    resp = client.get(f"/api/v1/recommendations?cluster={ref}")
    assert resp.status_code == 400
    assert resp.get_json()["message"].startswith("cluster: ")


@pytest.mark.usefixtures("fleet")
def test_the_fleet_gives_each_cluster_and_totals_of_what_adds_up(client: FlaskClient) -> None:
    resp = client.get("/api/v1/fleet")
    assert resp.status_code == 200, resp.get_json()
    body = resp.get_json()
    by_name = {c["name"]: c for c in body["items"]}
    east, west = by_name["east"], by_name["west"]
    assert (east["id"], east["self"], west["self"]) == ("uid-east", True, False)
    assert east["estimatedSavings"] == {"cpuCores": 0.3, "memoryGiB": 0.75}
    assert east["shortfall"] == {"cpuCores": 0.0, "memoryGiB": 0.0, "containers": 0}
    assert west["estimatedSavings"] == {"cpuCores": -0.9, "memoryGiB": 0.75}
    assert west["shortfall"] == {"cpuCores": 0.9, "memoryGiB": 0.0, "containers": 1}
    assert west["requested"] == {"cpuCores": 0.6, "memoryGiB": 1.5}
    assert west["recommended"] == {"cpuCores": 1.5, "memoryGiB": 0.75}
    assert east["lastRecommendationUpdate"] == "2026-12-01T00:00:00Z"
    assert east["computedBy"] == west["computedBy"] == "request"  # no totals stored
    totals = body["totals"]
    assert totals["clusters"] == 2
    assert (totals["workloads"], totals["containers"], totals["pods"]) == (2, 2, 6)
    assert totals["estimatedSavings"] == {"cpuCores": -0.6, "memoryGiB": 1.5}
    assert totals["shortfall"] == {"cpuCores": 0.9, "memoryGiB": 0.0, "containers": 1}
    # each cluster's own list says the same as its row of the fleet
    own = client.get("/api/v1/recommendations?cluster=west").get_json()["items"][0]
    assert own["estimatedSavings"] == west["estimatedSavings"]


def test_a_single_cluster_database_is_a_fleet_of_one(client: FlaskClient) -> None:
    """On SQLite too: the one cluster, marked as the process's own, and totals equal to it."""
    body = client.get("/api/v1/fleet").get_json()
    assert len(body["items"]) == 1 and body["items"][0]["self"] is True
    assert body["totals"]["clusters"] == 1
    assert body["totals"]["workloads"] == body["items"][0]["workloads"] == 0


def test_the_fleet_needs_a_reader(anon: FlaskClient) -> None:
    assert anon.get("/api/v1/fleet").status_code == 401


def test_a_policy_targets_clusters_through_the_api(client: FlaskClient) -> None:
    """On SQLite too (one cluster): every cluster, then a cluster that is not this one: no
    longer listed nor read here, still edited and deleted here."""
    body = {"name": "web", "namespace": "shop", "clusters": {"selector": {}}}
    created = client.post("/api/v1/policies", json=body)
    assert created.status_code == 201, created.get_json()
    assert created.get_json()["clusters"] == {"selector": {}}
    assert [p["name"] for p in client.get("/api/v1/policies").get_json()["items"]] == ["web"]
    patched = client.patch(
        "/api/v1/policies/shop/web",
        json={"clusters": {"selector": None, "names": ["elsewhere"]}},  # merge patch merges
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.get_json()
    assert patched.get_json()["clusters"] == {"names": ["elsewhere"]}
    assert client.get("/api/v1/policies").get_json()["items"] == []
    assert client.get("/api/v1/policies/shop/web").status_code == 404
    assert client.delete("/api/v1/policies/shop/web").status_code == 204


def test_a_bad_target_is_refused_naming_the_field(client: FlaskClient) -> None:
    body = {"name": "web", "namespace": "shop", "clusters": {"names": [""]}}
    resp = client.post("/api/v1/policies", json=body)
    assert resp.status_code == 422
    assert [d["field"] for d in resp.get_json()["details"]] == ["clusters.names[0]"]


@pytest.mark.usefixtures("fleet")
def test_a_policy_written_in_one_cluster_may_govern_another(client: FlaskClient) -> None:
    body = {"name": "web", "namespace": "shop", "clusters": {"names": ["west"]}}
    assert client.post("/api/v1/policies", json=body).status_code == 201
    west = client.get("/api/v1/policies?cluster=west").get_json()["items"]
    assert {p["name"] for p in west} == {"web", "west-only", "everywhere"}
    east = client.get("/api/v1/policies").get_json()["items"]
    assert {p["name"] for p in east} == {"east-only", "everywhere"}
    # without a target, the policy is this cluster's alone, as with one cluster
    own = {"name": "mine", "namespace": "shop"}
    assert client.post("/api/v1/policies", json=own).status_code == 201
    assert client.get("/api/v1/policies/shop/mine?cluster=west").status_code == 404
    # a fleet-wide policy edited in one cluster stays fleet-wide
    patched = client.patch(
        "/api/v1/policies/*/everywhere",
        json={"updateMode": "Initial"},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.get_json()
    assert client.get("/api/v1/policies/*/everywhere?cluster=west").status_code == 200


def test_each_cluster_says_when_its_figures_were_summed_and_by_whom(client: FlaskClient) -> None:
    """On SQLite too: summed at the request until the leader stores its totals, then the
    stored totals with their time, the same figures."""
    db.session.add(seen(None, 100, 3, 200))
    db.session.commit()
    before = client.get("/api/v1/fleet").get_json()
    one = before["items"][0]
    assert one["computedBy"] == "request" and one["asOf"] == before["totals"]["asOf"]
    scoper = Scoper.as_configured(db.session, InvalidPolicyLog("test"), settings())
    assert write_totals(db.session, scoper, datetime(2026, 12, 7, 5, 0, tzinfo=UTC))
    after = client.get("/api/v1/fleet").get_json()
    stored = after["items"][0]
    assert (stored["computedBy"], stored["asOf"]) == ("leader", "2026-12-07T05:00:00Z")
    assert after["totals"]["asOf"] == "2026-12-07T05:00:00Z"
    moved = ("asOf", "computedBy")
    assert {k: v for k, v in stored.items() if k not in moved} == {
        k: v for k, v in one.items() if k not in moved
    }
    assert stored["estimatedSavings"] == {"cpuCores": 0.3, "memoryGiB": 0.75}
