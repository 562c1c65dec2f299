"""Policies over REST: CRUD, validation naming each field, ETags, conflicts, and the audit trail."""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

WEB = {
    "name": "web",
    "namespace": "shop",
    "target": {"kind": "Deployment", "name": "web"},
    "updateMode": "Auto",
    "containerPolicies": [
        {"containerName": "app", "minAllowed": {"cpu": "100m"}, "maxAllowed": {"memory": "2Gi"}}
    ],
}


def create(client: FlaskClient, doc: dict[str, Any] = WEB) -> Any:
    resp = client.post("/api/v1/policies", json=doc)
    assert resp.status_code == 201, resp.get_json()
    return resp


def events(client: FlaskClient) -> list[dict[str, Any]]:
    return client.get("/api/v1/events").get_json()["items"]


def test_create_get_list(client: FlaskClient) -> None:
    resp = create(client)
    assert resp.headers["Location"] == "/api/v1/policies/shop/web"
    body = resp.get_json()
    assert body["updateMode"] == "Auto"  # kept as written; the parser reads it as Recreate
    assert body["containerPolicies"][0]["minAllowed"] == {"cpu": "100m"}
    assert body["version"] == 1
    got = client.get("/api/v1/policies/shop/web")
    assert got.status_code == 200
    assert got.headers["ETag"] == resp.headers["ETag"]
    create(client, {"name": "default", "namespace": "*", "updateMode": "Off"})
    create(client, {"name": "ns", "namespace": "ops"})
    names = [
        (p["namespace"], p["name"]) for p in client.get("/api/v1/policies").get_json()["items"]
    ]
    assert names == [("*", "default"), ("ops", "ns"), ("shop", "web")]
    only = client.get("/api/v1/policies?namespace=ops").get_json()["items"]
    assert [p["name"] for p in only] == ["ns"]
    assert client.get("/api/v1/policies/*/default").status_code == 200


def test_invalid_policy_is_422_naming_every_field_and_stores_nothing(client: FlaskClient) -> None:
    bad = {
        "name": "Web!",
        "namespace": "shop",
        "updateMode": "Sometimes",
        "minReplicas": 0,
        "colour": "blue",
        "containerPolicies": [
            {"containerName": "app", "minAllowed": {"cpu": "2"}, "maxAllowed": {"cpu": "1"}},
            {"containerName": "db", "minAllowed": {"memory": "lots"}},
        ],
    }
    resp = client.post("/api/v1/policies", json=bad)
    assert resp.status_code == 422
    body = resp.get_json()
    assert body["error"] == "Invalid"
    fields = {d["field"] for d in body["details"]}
    assert fields == {
        "colour",
        "name",
        "updateMode",
        "minReplicas",
        "containerPolicies[0].minAllowed.cpu",
        "containerPolicies[1].minAllowed.memory",
    }
    assert "name" in body["message"]
    assert client.get("/api/v1/policies").get_json()["items"] == []
    assert events(client) == []


def test_huge_min_replicas_is_422_not_a_database_error(client: FlaskClient) -> None:
    resp = client.post("/api/v1/policies", json={**WEB, "minReplicas": 2**40})
    assert resp.status_code == 422
    assert resp.get_json()["details"][0]["field"] == "minReplicas"


def test_bad_bodies_are_400(client: FlaskClient) -> None:
    assert client.post("/api/v1/policies", data="{nope").status_code == 400
    assert client.post("/api/v1/policies", data="").status_code == 400
    resp = client.post("/api/v1/policies", json=[1, 2])
    assert resp.status_code == 400
    assert resp.get_json() == {"error": "BadRequest", "message": "the body must be a JSON object"}


def test_duplicate_is_409(client: FlaskClient) -> None:
    create(client)
    resp = client.post("/api/v1/policies", json=WEB)
    assert resp.status_code == 409
    assert resp.get_json()["error"] == "AlreadyExists"


def test_replace_with_etag_then_stale_etag_is_412(client: FlaskClient) -> None:
    etag = create(client).headers["ETag"]
    changed = {**WEB, "updateMode": "Initial"}
    resp = client.put("/api/v1/policies/shop/web", json=changed, headers={"If-Match": etag})
    assert resp.status_code == 200, resp.get_json()
    assert resp.get_json()["updateMode"] == "Initial"
    assert resp.get_json()["version"] == 2
    assert resp.headers["ETag"] != etag
    stale = client.put("/api/v1/policies/shop/web", json=WEB, headers={"If-Match": etag})
    assert stale.status_code == 412
    assert stale.get_json()["error"] == "PreconditionFailed"
    assert client.get("/api/v1/policies/shop/web").get_json()["updateMode"] == "Initial"
    assert (
        client.put("/api/v1/policies/shop/web", json=WEB, headers={"If-Match": "*"}).status_code
        == 200
    )


def test_body_version_is_a_precondition_too(client: FlaskClient) -> None:
    create(client)
    doc = client.get("/api/v1/policies/shop/web").get_json()  # what a user edits and sends back
    doc["updateMode"] = "Off"
    assert client.put("/api/v1/policies/shop/web", json=doc).status_code == 200
    doc["updateMode"] = "Initial"  # still version 1: someone (we) changed it meanwhile
    assert client.put("/api/v1/policies/shop/web", json=doc).status_code == 412


def test_put_cannot_rename_or_create(client: FlaskClient) -> None:
    create(client)
    resp = client.put("/api/v1/policies/shop/web", json={**WEB, "name": "other"})
    assert resp.status_code == 422
    assert resp.get_json()["details"][0]["field"] == "name"
    assert client.put("/api/v1/policies/shop/nope", json={**WEB, "name": "nope"}).status_code == 404
    # name and namespace may be left out: the URL says them
    body = {k: v for k, v in WEB.items() if k not in ("name", "namespace")}
    assert client.put("/api/v1/policies/shop/web", json=body).status_code == 200


def test_merge_patch(client: FlaskClient) -> None:
    etag = create(client).headers["ETag"]
    resp = client.patch(
        "/api/v1/policies/shop/web",
        json={"minReplicas": 3, "target": None},
        headers={"If-Match": etag, "Content-Type": "application/merge-patch+json"},
    )
    assert resp.status_code == 200, resp.get_json()
    body = resp.get_json()
    assert body["minReplicas"] == 3
    assert "target" not in body
    assert body["containerPolicies"] == WEB["containerPolicies"]
    bad = client.patch("/api/v1/policies/shop/web", json={"updateMode": "Never"})
    assert bad.status_code == 422
    assert bad.get_json()["details"] == [
        {
            "field": "updateMode",
            "message": (
                "'Never' is not one of Off, Initial, Recreate, InPlaceOrRecreate, InPlace (or Auto)"
            ),
        }
    ]
    assert (
        client.patch("/api/v1/policies/shop/web", json={}, headers={"If-Match": etag}).status_code
        == 412
    )


def test_delete(client: FlaskClient) -> None:
    etag = create(client).headers["ETag"]
    assert (
        client.delete("/api/v1/policies/shop/web", headers={"If-Match": '"0-0"'}).status_code == 412
    )
    assert client.delete("/api/v1/policies/shop/web", headers={"If-Match": etag}).status_code == 204
    assert client.get("/api/v1/policies/shop/web").status_code == 404
    assert client.delete("/api/v1/policies/shop/web").status_code == 404
    # re-created: the old ETag does not match the new object
    new = create(client).headers["ETag"]
    assert new != etag


def test_every_change_is_audited_with_who(client: FlaskClient) -> None:
    etag = create(client).headers["ETag"]
    client.patch(
        "/api/v1/policies/shop/web", json={"updateMode": "Off"}, headers={"If-Match": etag}
    )
    client.delete("/api/v1/policies/shop/web")
    got = events(client)
    assert [(e["action"], e["objectKind"], e["objectRef"], e["actor"]) for e in got] == [
        ("delete", "Policy", "shop/web", "alice"),
        ("update", "Policy", "shop/web", "alice"),
        ("create", "Policy", "shop/web", "alice"),
    ]
    assert got[1]["details"]["before"]["updateMode"] == "Auto"
    assert got[1]["details"]["after"]["updateMode"] == "Off"


def test_unknown_query_parameter_is_400(client: FlaskClient) -> None:
    resp = client.get("/api/v1/policies?namespce=shop")
    assert resp.status_code == 400
    assert "namespce" in resp.get_json()["message"]


def test_nul_in_filter_is_a_client_error(client: FlaskClient) -> None:
    resp = client.get("/api/v1/policies?namespace=a%00b")
    assert resp.status_code in (200, 400)  # SQLite finds nothing; PostgreSQL cannot search it
    assert client.get("/api/v1/policies/a%00b/x").status_code in (400, 404)


def test_wrongly_typed_update_mode_is_422_not_500(client: FlaskClient) -> None:
    """Found by schemathesis: an object as updateMode crashed the parser."""
    resp = client.post("/api/v1/policies", json={**WEB, "updateMode": {}})
    assert resp.status_code == 422
    assert resp.get_json()["details"][0]["field"] == "updateMode"


UPDATE_OPTIONS = {
    "evictionRequirements": [
        {"resources": ["cpu"], "changeRequirement": "TargetHigherThanRequests"}
    ],
    "evictAfterOOMSeconds": 120,
    "inPlaceSkipDisruptionBudget": True,
    "startupBoost": {"cpu": {"type": "Factor", "factor": 2, "durationSeconds": 30}},
    "observationWindow": {"minIntervalSeconds": 600, "maxReplacementsPerReplica": 2},
}


def test_update_fields_are_stored_as_written_and_merge_patched(client: FlaskClient) -> None:
    doc = {
        **WEB,
        "updateMode": "InPlace",
        **UPDATE_OPTIONS,
        "containerPolicies": [
            {"containerName": "app", "startupBoost": {"cpu": {"type": "Quantity", "quantity": "1"}}}
        ],
    }
    body = create(client, doc).get_json()
    for key, value in UPDATE_OPTIONS.items():
        assert body[key] == value
    assert body["containerPolicies"][0]["startupBoost"]["cpu"]["quantity"] == "1"
    patched = client.patch(
        "/api/v1/policies/shop/web",
        json={"startupBoost": None, "evictAfterOOMSeconds": 30},
        content_type="application/merge-patch+json",
    )
    assert patched.status_code == 200, patched.get_json()
    got = client.get("/api/v1/policies/shop/web").get_json()
    assert "startupBoost" not in got and got["evictAfterOOMSeconds"] == 30
    assert got["evictionRequirements"] == UPDATE_OPTIONS["evictionRequirements"]


def test_bad_update_fields_are_422_naming_each(client: FlaskClient) -> None:
    resp = client.post(
        "/api/v1/policies",
        json={
            **WEB,
            "evictAfterOOMSeconds": 0,
            "startupBoost": {"cpu": {"type": "Factor"}},
            "evictionRequirements": [{"resources": ["cpu"], "changeRequirement": "Up"}],
            "observationWindow": {"windowSeconds": 0, "minIntervalSeconds": "10m"},
        },
    )
    assert resp.status_code == 422
    fields = {d["field"] for d in resp.get_json()["details"]}
    assert fields == {
        "evictAfterOOMSeconds",
        "startupBoost.cpu.factor",
        "evictionRequirements[0].changeRequirement",
        "observationWindow.windowSeconds",
        "observationWindow.minIntervalSeconds",
    }
    assert client.get("/api/v1/policies/shop/web").status_code == 404


def test_placement_is_stored_shown_and_merge_patched_back_to_default(client: FlaskClient) -> None:
    body = create(client, {**WEB, "placement": "waterLevel"}).get_json()
    assert body["placement"] == "waterLevel"
    assert client.get("/api/v1/policies/shop/web").get_json()["placement"] == "waterLevel"
    bad = client.patch(
        "/api/v1/policies/shop/web",
        json={"placement": "lowest"},
        content_type="application/merge-patch+json",
    )
    assert bad.status_code == 422
    assert bad.get_json()["details"] == [
        {"field": "placement", "message": "'lowest' is not one of default, waterLevel"}
    ]
    assert client.get("/api/v1/policies/shop/web").get_json()["placement"] == "waterLevel"
    patched = client.patch(
        "/api/v1/policies/shop/web",
        json={"placement": None},
        content_type="application/merge-patch+json",
    )
    assert patched.status_code == 200, patched.get_json()
    assert "placement" not in client.get("/api/v1/policies/shop/web").get_json()
