"""Workload conditions through app.store.conditions, on SQLite and PostgreSQL: each writer
replaces only its own types, unchanged rows are not written, and the lastTransitionTime moves
only when the status does."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import event

from app.core.conditions import (
    HELD_BACK_BY_BUDGET,
    LOW_CONFIDENCE,
    RECOMMENDATION_PROVIDED,
    RECOMMENDER_TYPES,
    UPDATER_TYPES,
    Condition,
)
from app.core.workload_key import WorkloadKey
from app.store.conditions import KnownConditions, save_conditions, workload_conditions
from app.store.extensions import db
from app.store.recommendations import delete_workload

T0 = datetime(2024, 7, 4, tzinfo=UTC)
WEB = WorkloadKey("shop", "Deployment", "web")
API = WorkloadKey("shop", "Deployment", "api")
PROVIDED = Condition(RECOMMENDATION_PROVIDED, "True")
LOW = Condition(LOW_CONFIDENCE, "True", "ShortHistory", "app (10m)")
HELD = Condition(HELD_BACK_BY_BUDGET, "True", "MinReplicas", "1 running pod")


def stored(w: WorkloadKey) -> list[tuple[str, str, str, datetime]]:
    rows = workload_conditions(db.session, w.namespace, w.kind, w.name).get(w, [])
    return [(r.type, r.status, r.message, r.last_transition_time) for r in rows]


def same_time(a: datetime, b: datetime) -> bool:
    return a.replace(tzinfo=a.tzinfo or UTC) == b


def test_each_writer_replaces_its_own_types_only(app: Flask) -> None:
    assert save_conditions(db.session, RECOMMENDER_TYPES, {WEB: [PROVIDED, LOW]}, T0) == 2
    assert save_conditions(db.session, UPDATER_TYPES, {WEB: [HELD], API: [HELD]}, T0) == 2
    assert [t for t, *_ in stored(WEB)] == [
        RECOMMENDATION_PROVIDED,
        LOW_CONFIDENCE,
        HELD_BACK_BY_BUDGET,
    ]
    # the recommender's next run: LowConfidence no longer holds; the updater's rows stay
    assert save_conditions(db.session, RECOMMENDER_TYPES, {WEB: [PROVIDED]}, T0) == 1
    assert [t for t, *_ in stored(WEB)] == [RECOMMENDATION_PROVIDED, HELD_BACK_BY_BUDGET]
    assert save_conditions(db.session, UPDATER_TYPES, {}, T0) == 2
    assert stored(API) == []


def test_the_transition_time_moves_only_with_the_status(app: Flask) -> None:
    later, latest = T0 + timedelta(minutes=5), T0 + timedelta(minutes=10)
    save_conditions(db.session, RECOMMENDER_TYPES, {WEB: [PROVIDED]}, T0)
    assert save_conditions(db.session, RECOMMENDER_TYPES, {WEB: [PROVIDED]}, later) == 0
    changed_message = Condition(RECOMMENDATION_PROVIDED, "True", "", "still there")
    assert save_conditions(db.session, RECOMMENDER_TYPES, {WEB: [changed_message]}, later) == 1
    [(_, status, message, since)] = stored(WEB)
    assert (status, message) == ("True", "still there") and same_time(since, T0)
    gone = Condition(RECOMMENDATION_PROVIDED, "False", "NoPodsMatched", "No pods match it")
    save_conditions(db.session, RECOMMENDER_TYPES, {WEB: [gone]}, latest)
    [(_, status, _, since)] = stored(WEB)
    assert status == "False" and same_time(since, latest)


def test_a_deleted_workload_loses_its_conditions(app: Flask) -> None:
    save_conditions(db.session, RECOMMENDER_TYPES, {WEB: [PROVIDED], API: [PROVIDED]}, T0)
    delete_workload(db.session, WEB)
    assert stored(WEB) == [] and len(stored(API)) == 1
    assert set(workload_conditions(db.session)) == {API}


def test_a_long_reason_and_message_are_stored_cut_and_not_rewritten(app: Flask) -> None:
    long = Condition(LOW_CONFIDENCE, "True", "R" * 200, "m" * 5000)
    assert save_conditions(db.session, RECOMMENDER_TYPES, {WEB: [long]}, T0) == 1
    later = T0 + timedelta(minutes=1)
    assert save_conditions(db.session, RECOMMENDER_TYPES, {WEB: [long]}, later) == 0
    [row] = workload_conditions(db.session, "shop", "Deployment", "web")[WEB]
    assert (len(row.reason), len(row.message)) == (128, 4000)
    assert same_time(row.updated_at, T0)


def _condition_reads(statements: list[str]) -> list[str]:
    """The SELECTs of the condition rows themselves (not their count) among `statements`."""
    return [
        s
        for s in statements
        if s.lstrip().upper().startswith("SELECT")
        and "workload_conditions" in s
        and "count(" not in s.lower()
    ]


def test_rows_known_from_earlier_saves_are_not_read_again(app: Flask) -> None:
    """With KnownConditions (the recommender's, kept over a leadership term), a save reads the
    rows once; the next saves count them and take the rest from what the earlier ones left,
    and write the same as a save that reads them."""
    statements: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        statements.append(statement)

    known = KnownConditions(RECOMMENDER_TYPES)
    event.listen(db.engine, "before_cursor_execute", seen)
    try:
        assert save_conditions(db.session, RECOMMENDER_TYPES, {WEB: [PROVIDED, LOW]}, T0, known)
        assert len(_condition_reads(statements)) == 1
        later = T0 + timedelta(minutes=1)
        gone = Condition(RECOMMENDATION_PROVIDED, "False", "NoPodsMatched", "No pods match it")
        assert save_conditions(db.session, RECOMMENDER_TYPES, {WEB: [gone]}, later, known) == 2
        assert save_conditions(db.session, RECOMMENDER_TYPES, {WEB: [gone]}, later, known) == 0
        assert save_conditions(db.session, RECOMMENDER_TYPES, {API: [LOW]}, later, known) == 2
    finally:
        event.remove(db.engine, "before_cursor_execute", seen)
    assert len(_condition_reads(statements)) == 1
    assert stored(WEB) == [] and [(t, s, m) for t, s, m, _ in stored(API)] == [
        (LOW_CONFIDENCE, "True", "app (10m)")
    ]
    assert known.rows is not None and set(known.rows) == {("shop", "Deployment", "api", LOW.type)}


def test_rows_deleted_behind_the_known_ones_are_written_again(app: Flask) -> None:
    """The garbage collection deletes a workload's rows (delete_workload) while a policy still
    names it: the count differs from the rows known, so the next save reads them and writes
    the conditions again, rather than take them as stored."""
    known = KnownConditions(RECOMMENDER_TYPES)
    save_conditions(db.session, RECOMMENDER_TYPES, {WEB: [PROVIDED], API: [PROVIDED]}, T0, known)
    delete_workload(db.session, WEB)
    assert (
        save_conditions(
            db.session, RECOMMENDER_TYPES, {WEB: [PROVIDED], API: [PROVIDED]}, T0, known
        )
        == 1
    )
    assert [t for t, *_ in stored(WEB)] == [RECOMMENDATION_PROVIDED]


def test_a_failed_save_forgets_the_known_rows(app: Flask, monkeypatch: Any) -> None:
    """A save that fails rolls back and forgets the rows known: they may stand otherwise than
    it thought (the next save reads them)."""
    known = KnownConditions(RECOMMENDER_TYPES)
    save_conditions(db.session, RECOMMENDER_TYPES, {WEB: [PROVIDED]}, T0, known)
    assert known.rows is not None

    def failing(*_: Any) -> Any:
        raise RuntimeError("the database went away")

    monkeypatch.setattr("app.store.conditions.insert", failing)
    with pytest.raises(RuntimeError):
        save_conditions(db.session, RECOMMENDER_TYPES, {WEB: [PROVIDED], API: [LOW]}, T0, known)
    assert known.rows is None
    monkeypatch.undo()
    assert save_conditions(db.session, RECOMMENDER_TYPES, {WEB: [LOW]}, T0, known) == 2
    assert [t for t, *_ in stored(WEB)] == [LOW_CONFIDENCE]


def test_known_rows_are_one_writers_and_forgotten_at_a_new_term(app: Flask) -> None:
    """Known rows are of the writer's types alone; another leader may change a row's message
    without changing the count, which only `forget` (at the start of a term) catches."""
    known = KnownConditions(RECOMMENDER_TYPES)
    with pytest.raises(ValueError, match="HeldBackByBudget"):
        save_conditions(db.session, UPDATER_TYPES, {WEB: [HELD]}, T0, known)
    save_conditions(db.session, RECOMMENDER_TYPES, {WEB: [LOW]}, T0, known)
    other = Condition(LOW_CONFIDENCE, "True", "ShortHistory", "app (2h)")  # the other leader's
    save_conditions(db.session, RECOMMENDER_TYPES, {WEB: [other]}, T0)
    assert save_conditions(db.session, RECOMMENDER_TYPES, {WEB: [LOW]}, T0, known) == 0  # stale
    known.forget()
    assert save_conditions(db.session, RECOMMENDER_TYPES, {WEB: [LOW]}, T0, known) == 1
    assert [m for _, _, m, _ in stored(WEB)] == ["app (10m)"]
