"""Rows looked up by their four-part key (namespace, kind, name, container), by joining the keys.

A batch of the recommender reads and trims the rows of its 500 workload containers. Asked as a
tuple IN list, `(namespace, kind, name, container) IN ((...), ...)`, SQLite does not search the
key's index once per key: it scans the whole index (EXPLAIN QUERY PLAN: `SCAN ... USING INDEX`),
for every batch. With eight days of hourly history points (192 per container, 2.9 million rows
at 15,000 containers) one run's save took 42 s, most of it those scans. Joined with the keys as
rows of their own, each key is one index search (`SEARCH ... USING INDEX`): 4.7 s, and 4.1 s
once the history's index held the container too (migration 0010; benchmarks/history_save.py).

The keys go as ONE bound parameter, a JSON array of objects, read back as rows by the database's
own JSON function: `json_each` on SQLite, `json_to_recordset` on PostgreSQL (which plans either
form well). A VALUES list of bound keys was as fast to search, but SQLAlchemy compiled each
statement of 2,000 parameters anew, about 20 ms each, which made a run 2 s slower; a statement
of one parameter is compiled once and cached. Built from SQLAlchemy constructs only, every key
inside the bound parameter.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from sqlalchemy import JSON, String, and_, bindparam, cast, column, func
from sqlalchemy.sql.elements import ColumnElement

KEY = ("namespace", "kind", "name", "container")
Key = tuple[str, str, str, str]
KEYS = "keys"  # the bound parameter's name


def key_params(keys: Collection[Key]) -> dict[str, str]:
    """The statement's parameter: the keys as a JSON array of {namespace, kind, name, container}
    (text as it is, no \\u escapes for the database's JSON reader to decode)."""
    return {KEYS: json.dumps([dict(zip(KEY, k, strict=True)) for k in keys], ensure_ascii=False)}


def key_rows(dialect: str) -> tuple[Any, tuple[ColumnElement[Any], ...]]:
    """The keys of `key_params` as a table to join (`keys`) and its four key columns, in KEY's
    order, for the dialect named: PostgreSQL's, else SQLite's (the two databases rightsizer
    runs on)."""
    param = bindparam(KEYS, type_=String)
    if dialect == "postgresql":
        rows = (
            func.json_to_recordset(cast(param, JSON))
            .table_valued(*(column(n, String) for n in KEY), name=KEYS)
            .render_derived(with_types=True)
        )
        return rows, tuple(rows.c[n] for n in KEY)
    each = func.json_each(param).table_valued("value", name=KEYS)
    return each, tuple(func.json_extract(each.c.value, f"$.{n}") for n in KEY)


def on_key(table: Any, parts: tuple[ColumnElement[Any], ...], cluster: int) -> ColumnElement[bool]:
    """The join condition of `table`'s key columns with the keys' (`key_rows`), in the rows of
    `cluster` (app.store.clusters: the cluster leads every key's index)."""
    same = (table.c[n] == part for n, part in zip(KEY, parts, strict=True))
    return and_(table.c.cluster_id == cluster, *same)
