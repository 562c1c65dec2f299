"""The recommendation history: at most one point per workload container an hour, kept 8 days.

Points are appended by the recommender's batches (app.store.recommendations), in the batch's own
transaction, and read back for the history views (REST and dashboard).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import delete, func, select, tuple_

from app.models import RecommendationPoint
from app.store.results import ContainerResult
from app.store.session import DbSession, to_unix

HISTORY_STEP = timedelta(hours=1)  # at most one history point per container in this time
HISTORY_KEEP = timedelta(days=8)  # the memory window: older points are deleted


def append_history(
    session: DbSession,
    results: Sequence[ContainerResult],
    keys: set[tuple[str, str, str, str]],
    now: datetime,
) -> None:
    """A point per container whose newest point is an hour old or more; trims the batch's points
    older than 8 days. Part of the batch's transaction."""
    if not keys:
        return
    H = RecommendationPoint
    cols = (H.namespace, H.kind, H.name, H.container)
    newest = {
        (ns, kind, name, container): to_unix(t)
        for ns, kind, name, container, t in session.execute(
            select(*cols, func.max(H.time)).where(tuple_(*cols).in_(list(keys))).group_by(*cols)
        )
    }
    due = now.timestamp() - HISTORY_STEP.total_seconds()
    for r in results:
        key = (r.workload.namespace, r.workload.kind, r.workload.name, r.container)
        last = newest.get(key)
        if last is not None and last > due:
            continue
        rec, cur = r.recommendation, r.current
        assert rec is not None
        session.add(
            H(
                **dict(zip(("namespace", "kind", "name", "container"), key, strict=True)),
                time=now,
                target_cpu=rec.target.cpu,
                target_memory=rec.target.memory,
                current_cpu_request=cur.cpu if cur else None,
                current_memory_request=cur.memory if cur else None,
            )
        )
    session.execute(
        delete(H)
        .where(tuple_(*cols).in_(list(keys)), H.time < now - HISTORY_KEEP)
        .execution_options(synchronize_session=False)
    )


def recommendation_history(
    session: DbSession, namespace: str, kind: str, name: str
) -> list[RecommendationPoint]:
    """The history points of one workload's containers, oldest first."""
    H = RecommendationPoint
    q = select(H).where(H.namespace == namespace, H.kind == kind, H.name == name)
    return list(session.scalars(q.order_by(H.container, H.time)))
