"""app.store.bulk writes the rows SQLAlchemy writes: whatever the values (floats to their last
bit, infinities, microseconds, JSON with any text, NULLs), a row inserted or updated in bulk reads
back through the ORM as the same row inserted through SQLAlchemy does, on SQLite and PostgreSQL.
Reads by key find exactly the rows of the keys, across the statements a long key list needs."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, insert, select

from app.extensions import db
from app.models import Checkpoint
from app.store import bulk
from app.store.bulk import Columns, by_keys, delete_by_keys
from app.store.checkpoints import CHECKPOINT_COLUMNS

KEY = ("namespace", "kind", "name", "container")
T = Checkpoint.__table__

floats = st.floats(allow_nan=False) | st.sampled_from([0.0, -0.0, 5e-324, 1.7976931348623157e308])
instants = st.datetimes(
    min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
)
times = st.none() | instants
text = st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), max_size=12)
# JSON values: finite floats (PostgreSQL's JSON has no infinity; test_json_text_is_sqlalchemys)
finite = st.floats(allow_nan=False, allow_infinity=False)
buckets = st.dictionaries(st.integers(0, 999).map(str), st.integers(0, 2**53) | finite, max_size=5)
daily = st.none() | st.lists(st.fixed_dictionaries({"day": st.integers(0, 30000), "note": text}))
row = st.tuples(
    buckets,
    floats,
    times,
    buckets,
    floats,
    times,
    st.integers(0, 2**31 - 1),
    times,
    times,
    text.map(lambda s: s[:16]),
    daily,
    instants,
)


def stored(key: tuple[str, ...]) -> tuple[Any, ...]:
    """The row of `key` as the ORM reads it (datetimes as UTC: SQLite's come back naive)."""
    found = db.session.execute(
        select(*(T.c[c] for c in CHECKPOINT_COLUMNS)).where(
            *(T.c[c] == v for c, v in zip(KEY, key, strict=True))
        )
    ).one()
    return tuple(
        v.replace(tzinfo=UTC) if isinstance(v, datetime) and v.tzinfo is None else v for v in found
    )


def same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Equal, floats bit for bit (-0.0 is not 0.0) and datetimes as instants."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if isinstance(x, float) and isinstance(y, float):
            if math.copysign(1, x) != math.copysign(1, y) or x != y:
                return False
        elif x != y:
            return False
    return True


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(first=row, second=row)
def test_bulk_rows_read_back_as_sqlalchemy_writes_them(
    app: Flask, first: tuple[Any, ...], second: tuple[Any, ...]
) -> None:
    with app.app_context():
        db.session.execute(delete(T))
        dialect = db.session.get_bind().dialect
        everything = Columns(T, (*KEY, *CHECKPOINT_COLUMNS), dialect)
        values = Columns(T, CHECKPOINT_COLUMNS, dialect)
        orm, fast = ("ns", "Deployment", "a", "c"), ("ns", "Deployment", "b", "c")
        db.session.execute(
            insert(T), [dict(zip((*KEY, *CHECKPOINT_COLUMNS), (*orm, *first), strict=True))]
        )
        everything.insert(db.session, [everything.encode((*fast, *first))])
        db.session.commit()
        assert same(stored(fast), stored(orm))

        # an update in bulk, by id, and through SQLAlchemy
        db.session.execute(
            T.update()
            .where(*(T.c[c] == v for c, v in zip(KEY, orm, strict=True)))
            .values(dict(zip(CHECKPOINT_COLUMNS, second, strict=True)))
        )
        ids = [r[0] for r in by_keys(db.session, T, KEY, [fast], ("id",))]
        values.update(db.session, ids, [values.encode(second)])
        db.session.commit()
        assert same(stored(fast), stored(orm))


def test_non_finite_floats_are_kept(app: Flask) -> None:
    """JSON has no infinity: PostgreSQL's rows carry it as the text the CAST reads. (NaN: SQLite
    stores it as NULL, whoever writes it.)"""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    with app.app_context():
        cols = Columns(T, (*KEY, *CHECKPOINT_COLUMNS), db.session.get_bind().dialect)
        for name, weight in (("inf", math.inf), ("minus", -math.inf)):
            values = ({}, weight, None, {}, 1.5, None, 0, None, None, "v", None, now)
            cols.insert(db.session, [cols.encode(("ns", "Deployment", name, "c", *values))])
        db.session.commit()
        weights = dict(db.session.execute(select(T.c.name, T.c.cpu_total_weight)).all())
    assert weights["inf"] == math.inf and weights["minus"] == -math.inf


@given(
    st.recursive(
        st.none() | st.booleans() | st.floats() | st.integers() | text,
        lambda inner: st.lists(inner) | st.dictionaries(text, inner),
    )
)
def test_json_text_is_sqlalchemys(value: Any) -> None:
    """The text of a JSON column parses as the text SQLAlchemy's serializer writes (json.dumps),
    infinities, NaN and integers beyond 64 bits included."""
    assert repr(json.loads(bulk._json(value))) == repr(json.loads(json.dumps(value)))


def test_reads_and_deletes_by_key_span_statements(app: Flask, monkeypatch: Any) -> None:
    """More keys than one statement takes: every row of a key is found (and deleted), no other."""
    monkeypatch.setattr(bulk, "KEYS_A_STATEMENT", 7)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    with app.app_context():
        cols = Columns(T, (*KEY, *CHECKPOINT_COLUMNS), db.session.get_bind().dialect)
        keys = [("ns", "Deployment", f"w{i}", "c") for i in range(30)]
        rows = [
            cols.encode((*k, {}, 0.5, None, {}, 1.5, None, i, None, None, "v", None, now))
            for i, k in enumerate(keys)
        ]
        cols.insert(db.session, rows)
        wanted = [*keys[3:25], ("ns", "Deployment", "absent", "c")]
        found = by_keys(db.session, T, KEY, wanted, ("name", "sample_count"))
        assert sorted(found) == sorted((k[2], int(k[2][1:])) for k in keys[3:25])

        delete_by_keys(db.session, T, KEY, keys[:20], "sample_count < 10")
        db.session.commit()
        left = {r[0] for r in db.session.execute(select(T.c.name))}
        assert left == {f"w{i}" for i in range(10, 30)}
