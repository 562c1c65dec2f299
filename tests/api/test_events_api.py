"""The audit trail: newest first, filters, and key-based pages that survive concurrent writes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from flask import Flask
from flask.testing import FlaskClient

from app.store.extensions import db
from app.store.models import AuditEvent

T0 = datetime(2024, 7, 1, tzinfo=UTC)


def seed(n: int, first: int = 0) -> None:
    for i in range(first, first + n):
        db.session.add(
            AuditEvent(
                time=T0 + timedelta(minutes=i),
                actor="updater" if i % 2 else "alice",
                action="evict" if i % 2 else "update",
                object_kind="Pod" if i % 2 else "Policy",
                object_ref=f"shop/web-{i}",
                message=f"event {i}",
                details={"i": i},
            )
        )
    db.session.commit()


def test_pages_cover_everything_once_even_with_new_events(app: Flask, client: FlaskClient) -> None:
    seed(25)
    seen: list[int] = []
    url = "/api/v1/events?limit=10"
    pages = 0
    while True:
        body = client.get(url).get_json()
        seen += [e["details"]["i"] for e in body["items"]]
        pages += 1
        if pages == 1:
            seed(3, first=25)  # newer events written between pages: must not shift the next
        if body["continue"] is None:
            break
        url = f"/api/v1/events?limit=10&continue={body['continue']}"
    assert seen == list(range(24, -1, -1))
    assert pages == 3


def test_an_event_written_late_is_paged_at_its_own_time(app: Flask, client: FlaskClient) -> None:
    """A webhook count written after newer events sits at the time of its admissions, also in a
    page that follows a token."""
    seed(6)
    first = client.get("/api/v1/events?limit=3").get_json()
    db.session.add(
        AuditEvent(
            time=T0 + timedelta(minutes=1, seconds=30),
            actor="rightsizer/webhook",
            action="mutate",
            object_kind="Deployment",
            object_ref="shop/web",
            message="late",
            details={"i": 1.5},
        )
    )
    db.session.commit()
    rest = client.get(f"/api/v1/events?continue={first['continue']}").get_json()
    assert [e["details"]["i"] for e in first["items"] + rest["items"]] == [5, 4, 3, 2, 1.5, 1, 0]


def test_filters(app: Flask, client: FlaskClient) -> None:
    seed(10)
    evictions = client.get("/api/v1/events?action=evict").get_json()["items"]
    assert len(evictions) == 5
    assert {e["objectKind"] for e in evictions} == {"Pod"}
    one = client.get("/api/v1/events?objectRef=shop/web-3").get_json()["items"]
    assert [e["message"] for e in one] == ["event 3"]
    since = client.get("/api/v1/events?since=2024-07-01T00:07:00Z").get_json()["items"]
    assert [e["details"]["i"] for e in since] == [9, 8, 7]
    unix = int((T0 + timedelta(minutes=8)).timestamp())
    assert len(client.get(f"/api/v1/events?since={unix}").get_json()["items"]) == 2
    until = client.get("/api/v1/events?until=2024-07-01T00:02:00%2B00:00").get_json()["items"]
    assert [e["details"]["i"] for e in until] == [1, 0]
    assert [
        e["actor"] for e in client.get("/api/v1/events?actor=alice&limit=1").get_json()["items"]
    ] == ["alice"]
    first = client.get("/api/v1/events?limit=1").get_json()["items"][0]
    assert first["time"] == "2024-07-01T00:09:00Z"


def test_bad_parameters_are_400_naming_them(client: FlaskClient) -> None:
    for query, name in (
        ("limit=0", "limit"),
        ("limit=x", "limit"),
        ("since=yesterday", "since"),
        ("since=2024-07-01T00:00:00", "since"),
        ("continue=garbage", "continue"),
        ("verb=get", "verb"),
    ):
        resp = client.get(f"/api/v1/events?{query}")
        assert resp.status_code == 400, query
        assert name in resp.get_json()["message"], query
