"""The cluster's spread of node levels over time (app.core.placement.spread), in the database.

The leader's node-levels job records a point after saving the levels (`record_spread`), at most
every `EVERY` seconds, and deletes the points older than `KEEP`: at most 2,016 rows per cluster
(a week at 5 minutes). The API and the Nodes page read them (`load_spread`), oldest first.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import delete, func, select

from app.core.placement.spread import SpreadPoint
from app.store.clusters import cluster_key
from app.store.models import NodeSpreadRow as Row
from app.store.session import DbSession, to_unix

EVERY = 300.0  # seconds between two points
KEEP = 7 * 86400.0  # seconds a point is kept


def record_spread(
    session: DbSession, point: SpreadPoint, at: float, every: float = EVERY, keep: float = KEEP
) -> bool:
    """Adds `point`, taken at `at` (Unix seconds), unless the newest point is less than `every`
    seconds older; deletes the points older than `keep`, and commits. True when added."""
    cluster = cluster_key(session)
    newest = to_unix(session.scalar(select(func.max(Row.at)).where(Row.cluster_id == cluster)))
    if newest is not None and at - newest < every:
        return False
    session.add(
        Row(
            cluster_id=cluster,
            at=datetime.fromtimestamp(at, UTC),
            nodes=point.nodes,
            cpu_spread=point.cpu_spread,
            cpu_deviation=point.cpu_deviation,
            memory_spread=point.memory_spread,
            memory_deviation=point.memory_deviation,
            cpu_hottest=point.cpu_hottest,
        )
    )
    session.execute(
        delete(Row).where(
            Row.cluster_id == cluster, Row.at < datetime.fromtimestamp(at - keep, UTC)
        )
    )
    session.commit()
    return True


def load_spread(session: DbSession, since: float | None = None) -> list[tuple[float, SpreadPoint]]:
    """(Unix time, point) of this cluster, oldest first; from `since` when given."""
    where = [Row.cluster_id == cluster_key(session)]
    if since is not None:
        where.append(Row.at >= datetime.fromtimestamp(since, UTC))
    rows = session.scalars(select(Row).where(*where).order_by(Row.at))
    return [
        (
            to_unix(r.at) or 0.0,
            SpreadPoint(
                r.nodes,
                r.cpu_spread,
                r.cpu_deviation,
                r.memory_spread,
                r.memory_deviation,
                r.cpu_hottest,
            ),
        )
        for r in rows
    ]
