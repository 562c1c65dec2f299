"""Audit events written with the change they record, and the trail read back page by page."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from flask import Flask

from app.store import audit, events
from app.store.events import EventFilter
from app.store.extensions import db
from app.store.models import AuditEvent

T0 = datetime(2024, 7, 4, 12, tzinfo=UTC)


def test_an_event_commits_with_its_change_and_counts_only_then(app: Flask) -> None:
    evictions = audit.ACTION_COUNTERS["evict"]
    start = evictions._value.get()
    audit.record(db.session, "rightsizer/updater", "evict", "Pod", "shop/web-1", "evicted", {})
    db.session.rollback()  # the change failed: no event, no count
    assert db.session.query(AuditEvent).count() == 0
    assert evictions._value.get() == start
    row = audit.record(
        db.session, "rightsizer/updater", "evict", "Pod", "shop/web-1", "evicted", {"why": "x"}
    )
    db.session.commit()
    assert evictions._value.get() == start + 1
    stored = db.session.get(AuditEvent, row.id)
    assert stored is not None
    assert (stored.actor, stored.action, stored.object_kind, stored.object_ref) == (
        "rightsizer/updater",
        "evict",
        "Pod",
        "shop/web-1",
    )
    assert stored.details == {"why": "x"}


def seed() -> None:
    for i in range(7):
        e = audit.record(
            db.session,
            "rightsizer/updater" if i % 2 else "alice",
            "evict" if i % 2 else "update",
            "Pod" if i % 2 else "Policy",
            f"shop/p{i}",
            f"event {i}",
            {},
        )
        e.time = T0 + timedelta(minutes=i)
    db.session.commit()


def test_pages_are_newest_first_and_follow_on_by_id(app: Flask) -> None:
    seed()
    first, more = events.page(db.session, EventFilter(), 3)
    assert [e.object_ref for e in first] == ["shop/p6", "shop/p5", "shop/p4"] and more
    second, more = events.page(db.session, EventFilter(before_id=first[-1].id), 3)
    assert [e.object_ref for e in second] == ["shop/p3", "shop/p2", "shop/p1"] and more
    last, more = events.page(db.session, EventFilter(before_id=second[-1].id), 3)
    assert [e.object_ref for e in last] == ["shop/p0"] and not more


def test_filters_narrow_the_list(app: Flask) -> None:
    seed()
    by_action, _ = events.page(db.session, EventFilter(action="evict"), 100)
    assert [e.object_ref for e in by_action] == ["shop/p5", "shop/p3", "shop/p1"]
    by_kind_actor, _ = events.page(
        db.session, EventFilter(object_kind="Policy", actor="alice"), 100
    )
    assert [e.object_ref for e in by_kind_actor] == ["shop/p6", "shop/p4", "shop/p2", "shop/p0"]
    one, _ = events.page(db.session, EventFilter(object_ref="shop/p3"), 100)
    assert [e.message for e in one] == ["event 3"]
    window = EventFilter(since=T0 + timedelta(minutes=2), until=T0 + timedelta(minutes=4))
    in_window, more = events.page(db.session, window, 100)
    assert [e.object_ref for e in in_window] == ["shop/p3", "shop/p2"] and not more


def test_continue_tokens_round_trip_and_refuse_other_text() -> None:
    for last_id in (1, 42, 10**17):
        assert events.decode_continue(events.encode_continue(last_id)) == last_id
    for token in ("garbage", "", "YWZ0ZXI6MQ", events.encode_continue(1) + "!", "YmVmb3JlOi0x"):
        # "after:1" and "before:-1" are base64 but not a page's token
        with pytest.raises(ValueError, match="not a token from a previous page"):
            events.decode_continue(token)


def test_events_written_late_are_listed_at_their_own_time_and_paged_through(app: Flask) -> None:
    """The webhook writes its counts after the admissions they count: the trail is in the order
    of the events' times (ties by id), and a page's token resumes after its last event there."""
    for i, minute in enumerate((0, 2, 4, 1, 3, 3)):  # the 4th and 5th written late
        e = audit.record(db.session, "a", "evict", "Pod", f"shop/p{i}", "x", {})
        e.time = T0 + timedelta(minutes=minute)
    late = audit.record(
        db.session, "w", "mutate", "Pod", "shop/late", "x", {}, T0 + timedelta(seconds=30)
    )
    db.session.commit()
    assert late.time.replace(tzinfo=UTC) == T0 + timedelta(seconds=30)
    seen, token = [], None
    while True:
        rows, more = events.page(db.session, EventFilter(before_id=token), 2)
        seen += [e.object_ref for e in rows]
        if not more:
            break
        token = rows[-1].id
    assert seen == ["shop/p2", "shop/p5", "shop/p4", "shop/p1", "shop/p3", "shop/late", "shop/p0"]
