"""Node levels (app.core.placement.windows.NodeLevel) in the database, one row per node.

The leader's node-levels job loads them, folds the newest NodeMetrics in and saves them all in
one transaction (`save_node_levels`), deleting the rows of nodes whose metrics are older than a
day: the table is the size of the cluster. Every process serving the scheduler extender, and the
dashboard, reads them all (`load_node_levels`): one query of a few thousand short rows.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from datetime import UTC, datetime

from sqlalchemy import delete, select

from app.core.placement.windows import NodeLevel
from app.store.clusters import cluster_key
from app.store.models import NodeLevelRow as Row
from app.store.session import DbSession, to_unix

log = logging.getLogger(__name__)

COLUMNS = (
    Row.name,
    Row.cpu_allocatable,
    Row.memory_allocatable,
    Row.cpu_15m,
    Row.cpu_1h,
    Row.cpu_1d,
    Row.memory_15m,
    Row.memory_1h,
    Row.memory_1d,
    Row.metrics_at,
    Row.cpu_now,
    Row.memory_now,
    Row.cpu_ahead,
    Row.memory_ahead,
)


def load_node_levels(session: DbSession) -> list[NodeLevel]:
    return [
        NodeLevel(
            name,
            int(cpu_a),
            int(mem_a),
            (c1, c2, c3),
            (m1, m2, m3),
            to_unix(at) or 0.0,
            cn,
            mn,
            _levels(name, "cpu_ahead", ca),
            _levels(name, "memory_ahead", ma),
        )
        for name, cpu_a, mem_a, c1, c2, c3, m1, m2, m3, at, cn, mn, ca, ma in session.execute(
            select(*COLUMNS).where(Row.cluster_id == cluster_key(session))
        )
    ]


def _levels(node: str, column: str, text: str | None) -> tuple[float, ...]:
    """A JSON list of levels; anything else (a row edited by hand) is logged and read as none,
    so that the node is scored by its windows alone."""
    if not text:
        return ()
    try:
        values = json.loads(text)
        if isinstance(values, list) and all(
            isinstance(v, int | float) and not isinstance(v, bool) and v == v for v in values
        ):
            return tuple(float(v) for v in values)
    except ValueError:
        pass
    log.warning("node_levels %s: %s is not a JSON list of numbers; ignored", node, column)
    return ()


def _text(levels: tuple[float, ...]) -> str | None:
    return json.dumps([round(x, 5) for x in levels]) if levels else None


def save_node_levels(session: DbSession, levels: Iterable[NodeLevel], forget_before: float) -> int:
    """Writes `levels` (inserts new nodes, updates known ones) and deletes the rows of nodes
    whose metrics are older than `forget_before` (Unix seconds) and are not in `levels`.
    Returns the rows deleted. Committed."""
    cluster = cluster_key(session)
    rows = {r.name: r for r in session.scalars(select(Row).where(Row.cluster_id == cluster))}
    given = set()
    for n in levels:
        given.add(n.name)
        row = rows.get(n.name)
        if row is None:
            row = Row(cluster_id=cluster, name=n.name)
            session.add(row)
        row.cpu_allocatable, row.memory_allocatable = n.cpu_allocatable, n.memory_allocatable
        row.cpu_15m, row.cpu_1h, row.cpu_1d = n.cpu
        row.memory_15m, row.memory_1h, row.memory_1d = n.memory
        row.metrics_at = datetime.fromtimestamp(n.metrics_at, UTC)
        row.cpu_now, row.memory_now = n.cpu_now, n.memory_now
        row.cpu_ahead, row.memory_ahead = _text(n.cpu_ahead), _text(n.memory_ahead)
    stale = [
        name
        for name, r in rows.items()
        if name not in given and (to_unix(r.metrics_at) or 0.0) < forget_before
    ]
    if stale:
        session.execute(delete(Row).where(Row.cluster_id == cluster, Row.name.in_(stale)))
    session.commit()
    return len(stale)
