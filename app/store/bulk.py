"""Many rows of one table written or read in one statement each, through the session's own
connection (its transaction), without SQLAlchemy's per-row parameter processing.

The recommender writes 15,000 recommendations, checkpoints and history points a run at 150,000
pods: SQLAlchemy's executemany processes every parameter of every row through its column type
(half of the save went there) and PostgreSQL ran one statement per row. Here each column's value
is turned into what the database stores once, by the column type's own bind processing
(`Columns.encode`; JSON with orjson, a datetime's processing remembered per value), and then:

- SQLite: the DBAPI's executemany (one prepared statement, rows bound in C);
- PostgreSQL: one statement per batch, its rows one JSON parameter (an array of arrays, made by
  orjson; psycopg's own array parameters are dumped in Python, 10 times slower) read back into
  typed columns by the statement (`CAST(e->>i AS <type>)`): the statement's text never changes
  with the row count.

The rows are the same as SQLAlchemy would write (the models read them back: tests/store).
Reads by key (`by_keys`) return the database's own values (`Columns.encode`'s domain: compare a
stored value with an encoded one, decode JSON with `Columns.decode_json`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import orjson
from sqlalchemy import JSON, DateTime, Float, Table
from sqlalchemy.engine import Dialect

from app.store.session import DbSession

Encode = Callable[[Any], Any]


def _json(value: Any) -> str:
    """JSON text as the column stores it (None too: SQLAlchemy's JSON writes `null`, not NULL).
    orjson writes an infinite or NaN float as null: text with a null is made again by
    json.dumps, SQLAlchemy's own serializer, which writes them as it does."""
    try:
        out = orjson.dumps(value)
    except (orjson.JSONEncodeError, TypeError):  # e.g. an integer beyond 64 bits
        return json.dumps(value)
    return json.dumps(value) if b"null" in out else out.decode()


def _remembered(process: Encode) -> Encode:
    """`process` once per distinct value (a run's datetimes repeat: its stamp, sample times)."""
    seen: dict[Any, Any] = {}

    def encode(value: Any) -> Any:
        try:
            return seen[value]
        except KeyError:
            out = seen[value] = process(value)
            return out

    return encode


def _identity(value: Any) -> Any:
    return value


def _float_text(value: Any) -> Any:
    """PostgreSQL: a float JSON cannot hold (infinite or NaN) as the text the CAST reads back
    (orjson would write null, which is not the value)."""
    if value is None or math.isfinite(value):
        return value
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


class Columns:
    """Some columns of a table, as a dialect writes them."""

    def __init__(self, table: Table, names: Sequence[str], dialect: Dialect) -> None:
        self.table, self.names, self.dialect = table, tuple(names), dialect
        self.postgres = dialect.name == "postgresql"
        quote = dialect.identifier_preparer.quote
        self.quoted = [quote(n) for n in self.names]
        self.table_name = dialect.identifier_preparer.format_table(table)
        self.json = [isinstance(table.c[n].type, JSON) for n in self.names]
        self.encoders = [self._encoder(n) for n in self.names]
        # the columns whose values are processed (the others are stored as they are)
        self._processed = [(i, e) for i, e in enumerate(self.encoders) if e is not _identity]
        # the SQL type of each column, for PostgreSQL's array casts
        self.sql_types = [table.c[n].type.compile(dialect=dialect) for n in self.names]

    def _encoder(self, name: str) -> Encode:
        column_type = self.table.c[name].type
        if isinstance(column_type, JSON):
            return _json
        if self.postgres and isinstance(column_type, Float):
            return _float_text
        process = column_type.dialect_impl(self.dialect).bind_processor(self.dialect)
        if process is None:
            return _identity
        if isinstance(column_type, DateTime):
            return _remembered(process)
        return process

    def encode(self, values: Sequence[Any]) -> tuple[Any, ...]:
        """A row's values (in `names`' order) as the database stores them."""
        if len(values) != len(self.encoders):
            raise ValueError(f"{len(values)} values for {len(self.encoders)} columns")
        row = list(values)
        for i, encode in self._processed:
            row[i] = encode(row[i])
        return tuple(row)

    def decode_json(self, stored: Any) -> Any:
        """A JSON column's value as read by `by_keys` (SQLite: text; psycopg: already parsed)."""
        return json.loads(stored) if isinstance(stored, str | bytes) else stored

    def _rows(self, sql_types: Sequence[str]) -> str:
        """PostgreSQL: the rows of one JSON parameter (an array of arrays), typed."""
        cast = ", ".join(f"CAST(e->>{i} AS {t}) AS v{i}" for i, t in enumerate(sql_types))
        return f"(SELECT {cast} FROM json_array_elements(CAST(%s AS JSON)) AS e)"

    def insert(self, session: DbSession, rows: Sequence[tuple[Any, ...]]) -> None:
        """Inserts encoded rows (values in `names`' order)."""
        if not rows:
            return
        cols = ", ".join(self.quoted)
        conn = session.connection()
        if self.postgres:
            source = self._rows(self.sql_types)
            sql = f"INSERT INTO {self.table_name} ({cols}) SELECT * FROM {source} AS v"
            conn.exec_driver_sql(sql, (_rows_json(rows),))
        else:
            marks = ", ".join(placeholder(self.dialect) for _ in self.names)
            sql = f"INSERT INTO {self.table_name} ({cols}) VALUES ({marks})"
            conn.exec_driver_sql(sql, list(rows))

    def update(
        self, session: DbSession, ids: Sequence[int], rows: Sequence[tuple[Any, ...]]
    ) -> None:
        """Sets the columns of the rows with these ids to encoded values (`names`' order)."""
        if not rows:
            return
        conn = session.connection()
        if self.postgres:
            # v0 is the id, v1... the columns
            sets = ", ".join(f"{q} = v.v{i + 1}" for i, q in enumerate(self.quoted))
            source = self._rows(["INTEGER", *self.sql_types])
            sql = (
                f"UPDATE {self.table_name} SET {sets} FROM {source} AS v "
                f"WHERE {self.table_name}.id = v.v0"
            )
            both = [(id_, *row) for id_, row in zip(ids, rows, strict=True)]
            conn.exec_driver_sql(sql, (_rows_json(both),))
        else:
            mark = placeholder(self.dialect)
            sets = ", ".join(f"{q} = {mark}" for q in self.quoted)
            sql = f"UPDATE {self.table_name} SET {sets} WHERE id = {mark}"
            conn.exec_driver_sql(sql, [(*row, id_) for id_, row in zip(ids, rows, strict=True)])


def _rows_json(rows: Sequence[Sequence[Any]]) -> str:
    """Rows as one JSON array of arrays (PostgreSQL's parameter of `Columns._rows`): numbers as
    their shortest exact text, datetimes in RFC 3339 (with their offset), JSON columns as the
    text `Columns.encode` made of them."""
    return orjson.dumps(rows).decode()


def _keys(
    dialect: Dialect, key: Sequence[str], keys: Sequence[tuple[Any, ...]]
) -> tuple[str, str, list[Any]]:
    """`WITH k(k0, k1...) AS (these keys)`, the condition joining a table's `key` columns to
    them, and the parameters. A join from the keys, not `(key) IN (keys)`: SQLite scans the
    whole table for the latter, and looks each key up in the key's index for the former."""
    names = ", ".join(f"k{i}" for i in range(len(key)))
    quote = dialect.identifier_preparer.quote
    on = " AND ".join(f"{quote(c)} = k.k{i}" for i, c in enumerate(key))
    if dialect.name == "postgresql":
        texts = ", ".join(f"e->>{i}" for i in range(len(key)))
        source = f"SELECT {texts} FROM json_array_elements(CAST(%s AS JSON)) AS e"
        return f"WITH k({names}) AS ({source}) ", on, [_rows_json(keys)]
    row = "(" + ", ".join("?" for _ in key) + ")"
    values = ", ".join(row for _ in keys)
    return f"WITH k({names}) AS (VALUES {values}) ", on, [v for k in keys for v in k]


# SQLite binds at most 32,766 parameters a statement: keys are looked up this many at a time
KEYS_A_STATEMENT = 4000


def by_keys(
    session: DbSession,
    table: Table,
    key: Sequence[str],
    keys: Iterable[tuple[Any, ...]],
    columns: Sequence[str],
    tail: str = "",
) -> list[Any]:
    """The stored values (the database's own: see the module's doc) of `columns` (SQL
    expressions of the table's columns) of the rows whose `key` columns are one of `keys`
    (plain strings); `tail` is appended (e.g. a GROUP BY of the key)."""
    keys = list(keys)
    dialect = session.get_bind().dialect
    name = dialect.identifier_preparer.format_table(table)
    conn = session.connection()
    out: list[Any] = []
    for start in range(0, len(keys), KEYS_A_STATEMENT):
        with_, on, params = _keys(dialect, key, keys[start : start + KEYS_A_STATEMENT])
        sql = f"{with_}SELECT {', '.join(columns)} FROM k JOIN {name} ON {on}{tail}"
        out.extend(conn.exec_driver_sql(sql, tuple(params)))
    return out


def delete_by_keys(
    session: DbSession,
    table: Table,
    key: Sequence[str],
    keys: Iterable[tuple[Any, ...]],
    condition: str = "",
    condition_params: Sequence[Any] = (),
) -> None:
    """Deletes the rows whose `key` columns are one of `keys` (and, if given, meet `condition`,
    SQL with the dialect's placeholders for `condition_params`, stored values)."""
    keys = list(keys)
    dialect = session.get_bind().dialect
    name = dialect.identifier_preparer.format_table(table)
    conn = session.connection()
    where = f" WHERE {condition}" if condition else ""
    for start in range(0, len(keys), KEYS_A_STATEMENT):
        with_, on, params = _keys(dialect, key, keys[start : start + KEYS_A_STATEMENT])
        rows = f"SELECT {name}.id FROM k JOIN {name} ON {on}{where}"
        conn.exec_driver_sql(
            f"{with_}DELETE FROM {name} WHERE id IN ({rows})", (*params, *condition_params)
        )


def placeholder(dialect: Dialect) -> str:
    """The dialect's DBAPI placeholder for one positional parameter."""
    return "?" if dialect.paramstyle == "qmark" else "%s"
