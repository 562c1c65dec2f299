"""Policy rows read back as policies (the one loader every reader uses) and written with their
audit event, on SQLite and PostgreSQL."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.store.extensions import db
from app.store.models import AuditEvent
from app.store.models import Policy as PolicyRow
from app.store.policies import (
    InvalidPolicyLog,
    create_policy,
    delete_policy,
    find_policy,
    policy_exists,
    policy_rows,
    replace_policy,
    valid_policies,
)
from app.store.policy_codec import policy_document
from app.store.versioned import AlreadyExists, StaleVersion

EMPTY: dict[str, Any] = {"containerPolicies": []}  # what a row always reads back with


def add(namespace: str, name: str, update_mode: str = "Recreate") -> PolicyRow:
    row = PolicyRow(namespace=namespace, name=name, update_mode=update_mode, version=1)
    db.session.add(row)
    db.session.commit()
    return row


def test_valid_policies_skips_a_bad_row_logs_it_once_and_returns_the_good_ones(
    app: Flask, caplog: pytest.LogCaptureFixture
) -> None:
    add("shop", "web")
    bad = add("shop", "broken", update_mode="Never")  # edited by hand: no such mode
    add("*", "default", update_mode="Off")
    invalid = InvalidPolicyLog("recommender")
    with caplog.at_level(logging.WARNING, logger="app.store.policies"):
        first = valid_policies(db.session, invalid)
        second = valid_policies(db.session, invalid)
    assert sorted((p.namespace, p.name) for p in first) == [("*", "default"), ("shop", "web")]
    assert [(p.namespace, p.name) for p in second] == [(p.namespace, p.name) for p in first]
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1, warnings  # once, not on every load
    assert warnings[0].startswith("recommender ignores invalid policy shop/broken: ")
    assert "updateMode" in warnings[0]

    # A new version of the row is a new problem: logged again.
    bad.version = 2
    db.session.commit()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="app.store.policies"):
        valid_policies(db.session, invalid)
    assert len(caplog.records) == 1


def test_each_reader_keeps_its_own_log(app: Flask, caplog: pytest.LogCaptureFixture) -> None:
    add("shop", "broken", update_mode="Never")
    with caplog.at_level(logging.WARNING, logger="app.store.policies"):
        assert valid_policies(db.session, InvalidPolicyLog("webhook")) == []
        assert valid_policies(db.session, InvalidPolicyLog("dashboard")) == []
    assert [r.getMessage().split(" ")[0] for r in caplog.records] == ["webhook", "dashboard"]


def test_find_list_and_exists(app: Flask) -> None:
    add("shop", "web")
    add("bank", "api")
    add("shop", "api")
    found = find_policy(db.session, "shop", "web")
    assert found is not None and (found.namespace, found.name) == ("shop", "web")
    assert find_policy(db.session, "bank", "web") is None
    assert policy_exists(db.session, "bank", "api") and not policy_exists(db.session, "x", "api")
    assert [(r.namespace, r.name) for r in policy_rows(db.session)] == [
        ("bank", "api"),
        ("shop", "api"),
        ("shop", "web"),
    ]
    assert [r.name for r in policy_rows(db.session, "shop")] == ["api", "web"]


def test_the_store_writes_a_policy_with_its_audit_event_and_commits_both(app: Flask) -> None:
    doc = {"name": "web", "namespace": "shop", "updateMode": "Recreate"}
    row = create_policy(db.session, doc, "alice")
    db.session.rollback()  # nothing left uncommitted: the rollback loses nothing
    assert policy_document(find_policy(db.session, "shop", "web")) == {**doc, **EMPTY}
    with pytest.raises(AlreadyExists):
        create_policy(db.session, {**doc, "updateMode": "Off"}, "bob")
    replace_policy(db.session, row, {**doc, "updateMode": "Initial"}, "alice")
    db.session.rollback()
    assert find_policy(db.session, "shop", "web").update_mode == "Initial"
    delete_policy(db.session, row, "alice")
    db.session.rollback()
    assert find_policy(db.session, "shop", "web") is None
    events = db.session.scalars(select(AuditEvent).order_by(AuditEvent.id)).all()
    assert [(e.actor, e.action, e.object_ref) for e in events] == [
        ("alice", "create", "shop/web"),
        ("alice", "update", "shop/web"),
        ("alice", "delete", "shop/web"),
    ]
    assert events[1].details["before"]["updateMode"] == "Recreate"
    assert events[1].details["after"]["updateMode"] == "Initial"


def test_a_stale_replace_or_delete_writes_nothing_not_even_its_audit_event(app: Flask) -> None:
    doc = {"name": "web", "namespace": "shop", "updateMode": "Recreate"}
    row = create_policy(db.session, doc, "alice")
    stale = PolicyRow(id=row.id, version=row.version + 1)  # a version that is not the stored one
    with pytest.raises(StaleVersion):
        replace_policy(db.session, stale, doc, "bob")
    with pytest.raises(StaleVersion):
        delete_policy(db.session, stale, "bob")
    actions = db.session.scalars(select(AuditEvent.action)).all()
    assert actions == ["create"]
