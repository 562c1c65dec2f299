"""Recommendation rows kept by the saves of one leadership term (save_all's `written`): a row the
term read or wrote is not read again; a row removed behind its back is written again."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import delete, event

from app.store.extensions import db
from app.store.models import Recommendation
from app.store.recommendations import find_recommendations, save_all
from app.store.results import results_from_model
from app.store.session import to_unix
from tests.store.test_recommendations import DB_, NOW, fed_model

T = 1_719_792_000.0 + 4 * 86400  # after fed_model's samples


def rows_read(statements: list[str]) -> int:
    """The statements among `statements` that read recommendation rows by key (_existing)."""
    return sum(
        1
        for s in statements
        if s.lstrip().upper().startswith(("SELECT", "WITH")) and "target_cpu" in s
    )


def test_rows_known_from_earlier_saves_are_not_read_again(app: Flask) -> None:
    """The first save looks its rows up (finding none) and inserts them, their ids given back;
    no later save reads them; every save leaves the rows as a save that reads them all does."""
    m = fed_model()
    written: dict[tuple[str, str, str, str], tuple[Any, ...]] = {}
    statements: list[str] = []

    def grab(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        statements.append(statement)

    event.listen(db.engine, "before_cursor_execute", grab)
    reads = []
    try:
        for minute in range(4):
            m.add_cpu(DB_, "db-0", "postgres", T + 60 * minute, 3.0 + minute, 2.0)
            statements.clear()
            at = NOW + timedelta(minutes=minute)
            save_all(db.session, results_from_model(m), at, batch_size=10, written=written)
            reads.append(rows_read(statements))
    finally:
        event.remove(db.engine, "before_cursor_execute", grab)
    assert reads == [1, 0, 0, 0]
    assert len(written) == 3
    rows = {r.container: r for r in find_recommendations(db.session)}
    assert rows["postgres"].sample_count == 3 * 288 + 4
    assert rows["postgres"].target_cpu == m.recommend(DB_)["postgres"].target.cpu
    # a row that never changed keeps the time of its insert, one that changed the last save's
    assert to_unix(rows["app"].updated_at) == NOW.timestamp()
    assert to_unix(rows["postgres"].updated_at) == (NOW + timedelta(minutes=3)).timestamp()


def test_a_row_removed_behind_the_saves_is_written_again(
    app: Flask, caplog: pytest.LogCaptureFixture
) -> None:
    """An update by id that finds no row says so, empties what the term knew, and the next save
    reads the rows again and inserts the missing one."""
    m = fed_model()
    written: dict[tuple[str, str, str, str], tuple[Any, ...]] = {}
    for minute in range(2):  # inserted, then read: known
        at = NOW + timedelta(minutes=minute)
        save_all(db.session, results_from_model(m), at, batch_size=10, written=written)
    db.session.execute(delete(Recommendation).where(Recommendation.container == "postgres"))
    db.session.commit()
    m.add_cpu(DB_, "db-0", "postgres", T, 3.0, 2.0)  # the row changes: an update by id
    with caplog.at_level(logging.WARNING, logger="app.store.recommendations"):
        save_all(db.session, results_from_model(m), NOW + timedelta(minutes=2), 10, written=written)
    assert "1 recommendation rows were no longer in the database" in caplog.text
    assert written == {}
    assert "postgres" not in {r.container for r in find_recommendations(db.session)}
    save_all(db.session, results_from_model(m), NOW + timedelta(minutes=3), 10, written=written)
    [row] = find_recommendations(db.session, name="db")
    assert row.sample_count == 3 * 288 + 1
    assert len(written) == 3  # the two rows read, the one inserted
