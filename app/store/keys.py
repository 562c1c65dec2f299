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

Each key row carries its cluster too (app.store.clusters), so the cluster is compared with a
column of the keys like the four parts, not with a constant. Compared with a constant, SQLite
planned the join the other way round: every row of the cluster read through the index's
leading column, the keys scanned for each (one batch of 500 at 45,000 containers: 45,000 x 500
comparisons, 8-12 s a save; the history's trim the same over its 192 points a container).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from sqlalchemy import JSON, Integer, String, and_, bindparam, cast, column, func
from sqlalchemy.sql.elements import ColumnElement

KEY = ("namespace", "kind", "name", "container")
Key = tuple[str, str, str, str]
CLUSTER = "cluster_id"  # each key row's cluster, ahead of KEY's parts (as in the indexes)
KEYS = "keys"  # the bound parameter's name


def key_params(keys: Collection[Key], cluster: int) -> dict[str, str]:
    """The statement's parameter: the keys as a JSON array of {cluster_id, namespace, kind,
    name, container}, each of `cluster` (text as it is, no \\u escapes for the database's JSON
    reader to decode)."""
    rows = [{CLUSTER: cluster, **dict(zip(KEY, k, strict=True))} for k in keys]
    return {KEYS: json.dumps(rows, ensure_ascii=False)}


def key_rows(dialect: str) -> tuple[Any, tuple[ColumnElement[Any], ...]]:
    """The keys of `key_params` as a table to join (`keys`) and its five columns, the cluster
    then KEY's order, for the dialect named: PostgreSQL's, else SQLite's (the two databases
    rightsizer runs on)."""
    param = bindparam(KEYS, type_=String)
    if dialect == "postgresql":
        rows = (
            func.json_to_recordset(cast(param, JSON))
            .table_valued(column(CLUSTER, Integer), *(column(n, String) for n in KEY), name=KEYS)
            .render_derived(with_types=True)
        )
        return rows, tuple(rows.c[n] for n in (CLUSTER, *KEY))
    each = func.json_each(param).table_valued("value", name=KEYS)
    return each, tuple(func.json_extract(each.c.value, f"$.{n}") for n in (CLUSTER, *KEY))


def on_key(table: Any, parts: tuple[ColumnElement[Any], ...]) -> ColumnElement[bool]:
    """The join condition of `table`'s cluster and key columns with the keys' (`key_rows`): the
    cluster leads every key's index (app.store.clusters)."""
    names = (CLUSTER, *KEY)
    return and_(*(table.c[n] == part for n, part in zip(names, parts, strict=True)))
