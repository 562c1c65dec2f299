"""The recommendation history: at most one point per workload container an hour, kept 8 days.

Points are appended by the recommender's batches (app.store.recommendations), in the batch's own
transaction, and read back for the history views (REST and dashboard).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Select, delete, func, insert, select

from app.core.recommend.timeline import HistoryPoint, UsagePercentiles
from app.core.resources import Resources
from app.core.workload_key import WorkloadKey
from app.store.clusters import cluster_key
from app.store.keys import Key, key_params, key_rows, on_key
from app.store.models import Recommendation, RecommendationPoint
from app.store.results import ContainerResult
from app.store.session import DbSession, to_unix

HISTORY_STEP = timedelta(hours=1)  # at most one history point per container in this time
HISTORY_KEEP = timedelta(days=8)  # the memory window: older points are deleted


def newest_points(table: Any, rows: Any, parts: tuple[ColumnElement[Any], ...]) -> Select[Any]:
    """Each key's newest point time (NULL without points), for the keys of `key_rows`: a
    max() per key, which both databases answer from the end of the key's range in the history's
    index (cluster, namespace, kind, name, container, time). Grouping the join of the keys with the
    points, as before, read all 192 points of each key (eight days): 57 ms for a batch of 500
    keys on SQLite against 3 ms (PostgreSQL 80 ms against 7 ms; benchmarks/history_save.py)."""
    latest = select(func.max(table.c.time)).where(on_key(table, parts)).scalar_subquery()
    return select(*parts[1:], latest).select_from(rows)


@dataclass
class Appended:
    """What append_history did: the (workload, container) of each point written, and the newest
    point time of each key it looked up or wrote (unix seconds)."""

    written: list[tuple[WorkloadKey, str]] = field(default_factory=list)
    newest: dict[Key, float] = field(default_factory=dict)


def append_history(
    session: DbSession,
    results: Sequence[ContainerResult],
    keys: set[Key],
    now: datetime,
    recent: Mapping[Key, float] | None = None,
) -> Appended:
    """A point per container whose newest point is an hour old or more, with the usage
    percentiles of its result; trims the batch's points older than 8 days. Part of the batch's
    transaction.

    `recent`, when given, is the newest point time of keys as the caller last learned it
    (`Appended.newest` of earlier batches, once committed): a key whose point there is less
    than an hour old has no point due, so it is left out of the lookup and of the trim, and its
    points older than 8 days go with its next point's batch, within the hour. Only a caller
    that alone writes points may keep it (the recommender, while it leads); without it, every
    key of the batch is looked up and trimmed."""
    out = Appended()
    due = now.timestamp() - HISTORY_STEP.total_seconds()
    if recent:
        keys = {k for k in keys if not recent.get(k, due) > due}
    if not keys:
        return out
    H = RecommendationPoint
    table = H.__table__
    rows, parts = key_rows(session.get_bind().dialect.name)  # app.store.keys
    cluster = cluster_key(session)
    params = key_params(keys, cluster)
    newest = out.newest
    found = session.execute(newest_points(table, rows, parts), params)
    for ns, kind, name, container, t in found:
        seconds = to_unix(t)
        if seconds is not None:
            newest[(ns, kind, name, container)] = seconds
    new: list[dict[str, Any]] = []
    for r in results:
        key = (r.workload.namespace, r.workload.kind, r.workload.name, r.container)
        if key not in keys:
            continue  # a point less than an hour old (`recent`)
        last = newest.get(key)
        if last is not None and last > due:
            continue
        rec, cur = r.recommendation, r.current
        assert rec is not None
        new.append(
            _point_values(
                cluster,
                key,
                now,
                rec.target,
                cur.cpu if cur else None,
                cur.memory if cur else None,
                r.usage,
            )
        )
        newest[key] = now.timestamp()
        out.written.append((r.workload, r.container))
    if new:  # one executemany (Core): the recommender appends thousands of points an hour
        session.execute(insert(RecommendationPoint.__table__), new)
    old = select(H.id).select_from(rows).join(table, on_key(table, parts))
    session.execute(
        delete(H)
        .where(H.id.in_(old.where(H.time < now - HISTORY_KEEP).scalar_subquery()))
        .execution_options(synchronize_session=False),
        params,
    )
    return out


def _point_values(
    cluster: int,
    key: tuple[str, str, str, str],
    time: datetime,
    target: Resources,
    cpu_request: int | None,
    memory_request: int | None,
    usage: UsagePercentiles | None,
) -> dict[str, Any]:
    u = usage or UsagePercentiles()
    return {
        "cluster_id": cluster,
        **dict(zip(("namespace", "kind", "name", "container"), key, strict=True)),
        "time": time,
        "target_cpu": target.cpu,
        "target_memory": target.memory,
        "current_cpu_request": cpu_request,
        "current_memory_request": memory_request,
        "usage_cpu_p50": u.cpu_p50,
        "usage_cpu_p90": u.cpu_p90,
        "usage_memory_p50": u.memory_p50,
        "usage_memory_p90": u.memory_p90,
    }


def _point(
    cluster: int,
    key: tuple[str, str, str, str],
    time: datetime,
    target: Resources,
    cpu_request: int | None,
    memory_request: int | None,
    usage: UsagePercentiles | None,
) -> RecommendationPoint:
    return RecommendationPoint(
        **_point_values(cluster, key, time, target, cpu_request, memory_request, usage)
    )


def add_replayed_points(
    session: DbSession,
    points: Sequence[HistoryPoint],
    requests: Mapping[tuple[WorkloadKey, str], tuple[int | None, int | None]],
) -> int:
    """History points of a replay of the past (app.core.recommend.timeline.replay), for the
    containers without a point yet, each with the requests its pods have now (`requests`), in one
    transaction. Returns the points added."""
    if not points:
        return 0
    keys = {(p.workload.namespace, p.workload.kind, p.workload.name, p.container) for p in points}
    rows, parts = key_rows(session.get_bind().dialect.name)  # app.store.keys
    cluster = cluster_key(session)
    have = {
        (ns, kind, name, container)
        for ns, kind, name, container, t in session.execute(
            newest_points(RecommendationPoint.__table__, rows, parts), key_params(keys, cluster)
        )
        if t is not None
    }
    added = 0
    try:
        for p in points:
            key = (p.workload.namespace, p.workload.kind, p.workload.name, p.container)
            if key in have:
                continue
            cpu, memory = requests.get((p.workload, p.container), (None, None))
            at = datetime.fromtimestamp(p.time, UTC)
            session.add(_point(cluster, key, at, p.target, cpu, memory, p.usage))
            added += 1
        session.commit()
    except Exception:
        session.rollback()
        raise
    return added


def recommendation_history(
    session: DbSession, namespace: str, kind: str, name: str
) -> list[RecommendationPoint]:
    """The history points of one workload's containers, oldest first."""
    H = RecommendationPoint
    q = select(H).where(
        H.cluster_id == cluster_key(session),
        H.namespace == namespace,
        H.kind == kind,
        H.name == name,
    )
    return list(session.scalars(q.order_by(H.container, H.time)))


def latest_recommendations(
    session: DbSession, namespace: str, kind: str, name: str
) -> list[Recommendation]:
    """One workload's recommendation rows as the recommender's last run saved them (the end of
    its history, which keeps a point an hour)."""
    R = Recommendation
    q = select(R).where(
        R.cluster_id == cluster_key(session),
        R.namespace == namespace,
        R.kind == kind,
        R.name == name,
    )
    return list(session.scalars(q))
