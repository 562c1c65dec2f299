"""Optimistic concurrency of the editable resources, on SQLite and PostgreSQL: a write made
against a version that moved on writes nothing and says so."""

from __future__ import annotations

import pytest
from flask import Flask
from sqlalchemy import update

from app.store import audit
from app.store.extensions import db
from app.store.models import AuditEvent, Scaler
from app.store.models import Policy as PolicyRow
from app.store.session import own_session
from app.store.versioned import (
    AlreadyExists,
    StaleVersion,
    commit_created,
    delete_versioned,
    update_versioned,
)


def policy(name: str = "web") -> PolicyRow:
    row = PolicyRow(namespace="shop", name=name, update_mode="Off", version=1)
    commit_created(db.session, row)
    return row


def bump_elsewhere(row_id: int) -> None:
    """Another writer (its own session and transaction) updates the row meanwhile."""
    with own_session() as other:
        other.execute(
            update(PolicyRow)
            .where(PolicyRow.id == row_id)
            .values(update_mode="Recreate", version=PolicyRow.version + 1)
        )
        other.commit()


def stored(row_id: int) -> tuple[str, int]:
    db.session.expire_all()
    row = db.session.get(PolicyRow, row_id)
    assert row is not None
    return row.update_mode, row.version


def test_update_bumps_the_version_and_reads_back_as_stored(app: Flask) -> None:
    row = policy()
    before = row.updated_at
    update_versioned(db.session, row, {"update_mode": "Initial"})
    db.session.commit()
    assert (row.update_mode, row.version) == ("Initial", 2)  # expired: read again
    assert row.updated_at >= before
    assert stored(row.id) == ("Initial", 2)


def test_update_of_a_stale_version_writes_nothing_with_its_audit_event(app: Flask) -> None:
    row = policy()
    assert row.version == 1
    bump_elsewhere(row.id)  # now at version 2; `row` still says 1
    with pytest.raises(StaleVersion):
        update_versioned(db.session, row, {"update_mode": "Initial"})
    audit.record(db.session, "alice", "update", "Policy", "shop/web", "lost", {})
    db.session.rollback()  # what a caller does on StaleVersion: nothing else is written
    assert stored(row.id) == ("Recreate", 2)
    assert db.session.query(AuditEvent).count() == 0


def test_delete_of_a_stale_version_keeps_the_row(app: Flask) -> None:
    row = policy()
    row_id = row.id
    bump_elsewhere(row_id)
    with pytest.raises(StaleVersion):
        delete_versioned(db.session, row)
    assert stored(row_id) == ("Recreate", 2)
    fresh = db.session.get(PolicyRow, row_id)
    delete_versioned(db.session, fresh)
    db.session.commit()
    db.session.expire_all()
    assert db.session.get(PolicyRow, row_id) is None


def test_a_second_create_of_the_same_key_is_already_exists(app: Flask) -> None:
    policy()
    audit.record(db.session, "bob", "create", "Policy", "shop/web", "created policy", {})
    with pytest.raises(AlreadyExists):
        policy()  # the unique (namespace, name): rolled back with its audit event
    assert db.session.query(PolicyRow).count() == 1
    assert db.session.query(AuditEvent).count() == 0


def test_scalers_share_it(app: Flask) -> None:
    row = Scaler(
        name="dns",
        target_namespace="kube-system",
        target_kind="Deployment",
        target_name="coredns",
        params={"linear": {"coresPerReplica": 256}},
        enabled=True,
        version=1,
    )
    commit_created(db.session, row)
    with own_session() as other:
        read_before = other.get(Scaler, row.id)  # another editor read version 1
        assert read_before is not None and read_before.version == 1
        update_versioned(db.session, row, {"enabled": False})
        db.session.commit()
        assert (row.enabled, row.version) == (False, 2)
        with pytest.raises(StaleVersion):
            update_versioned(other, read_before, {"enabled": True})
    db.session.expire_all()
    assert (row.enabled, row.version) == (False, 2)
