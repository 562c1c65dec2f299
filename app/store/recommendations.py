"""Recommendations and checkpoints in the database, written one transaction per batch.

The recommender writes thousands of workload containers a minute: rows of a batch are read with
one query and then updated or inserted, instead of one round trip per row, and a failed batch rolls
back alone, leaving every other batch (and the previous values of its own rows) intact. Each batch
also appends to the recommendation history (app.store.history) in the same transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from prometheus_client import Gauge
from sqlalchemy import delete, func, select, tuple_

from app.core.recommend.model import WorkloadKey
from app.models import Checkpoint, NodeGroupRecommendation, RecommendationPoint, WorkloadCondition
from app.models import Recommendation as RecommendationRow
from app.store.checkpoints import fill_checkpoint
from app.store.history import append_history
from app.store.results import ContainerResult
from app.store.session import DbSession, to_datetime

log = logging.getLogger(__name__)

RECOMMENDATIONS = Gauge(
    "rightsizer_recommendations",
    "Workload containers with a stored recommendation, after the recommender's last save.",
    multiprocess_mode="mostrecent",  # set by whichever process led last
)
RECOMMENDED_WORKLOADS = Gauge(
    "rightsizer_recommended_workloads",
    "Workloads with a stored recommendation, after the recommender's last save.",
    multiprocess_mode="mostrecent",
)


def count_recommendations(session: DbSession) -> tuple[int, int]:
    """(containers, workloads) with a stored recommendation; also sets the gauges."""
    containers = session.scalar(select(func.count()).select_from(RecommendationRow)) or 0
    workloads = (
        session.scalar(
            select(func.count()).select_from(
                select(RecommendationRow.namespace, RecommendationRow.kind, RecommendationRow.name)
                .distinct()
                .subquery()
            )
        )
        or 0
    )
    RECOMMENDATIONS.set(containers)
    RECOMMENDED_WORKLOADS.set(workloads)
    return containers, workloads


def _row_key(row: RecommendationRow | Checkpoint) -> tuple[str, str, str, str]:
    return (row.namespace, row.kind, row.name, row.container)


def _existing(
    session: DbSession, model: Any, keys: set[tuple[str, str, str, str]]
) -> dict[Any, Any]:
    if not keys:
        return {}
    cols = (model.namespace, model.kind, model.name, model.container)
    rows = session.scalars(select(model).where(tuple_(*cols).in_(list(keys))))
    return {_row_key(r): r for r in rows}


def _fill_recommendation(row: RecommendationRow, r: ContainerResult, now: datetime) -> None:
    rec, cp = r.recommendation, r.checkpoint
    assert rec is not None
    row.target_cpu, row.target_memory = rec.target.cpu, rec.target.memory
    row.lower_bound_cpu, row.lower_bound_memory = rec.lower_bound.cpu, rec.lower_bound.memory
    row.upper_bound_cpu, row.upper_bound_memory = rec.upper_bound.cpu, rec.upper_bound.memory
    row.uncapped_target_cpu = rec.uncapped_target.cpu
    row.uncapped_target_memory = rec.uncapped_target.memory
    row.sample_count = cp.total_samples
    row.first_sample_at = to_datetime(cp.first_sample)
    row.last_sample_at = to_datetime(cp.last_sample)
    row.updated_at = now
    if r.current is not None:
        row.current_cpu_request, row.current_memory_request = r.current.cpu, r.current.memory
        if r.current.replicas is not None:
            row.replicas = r.current.replicas
            row.requested_cpu_total = r.current.cpu_total
            row.requested_memory_total = r.current.memory_total
    row.conflicts = dict(r.conflicts)
    row.reason = rec.reason or None


def save_batch(
    session: DbSession,
    results: Sequence[ContainerResult],
    now: datetime,
    points: set[tuple[WorkloadKey, str]] | None = None,
) -> None:
    """Upserts the recommendations and checkpoints of `results` in one transaction; adds the
    (workload, container) of each history point written to `points`."""
    keys = {(r.workload.namespace, r.workload.kind, r.workload.name, r.container) for r in results}
    try:
        recs = _existing(session, RecommendationRow, keys)
        cps = _existing(session, Checkpoint, keys)
        for r in results:
            key = (r.workload.namespace, r.workload.kind, r.workload.name, r.container)
            ident = dict(zip(("namespace", "kind", "name", "container"), key, strict=True))
            cp_row = cps.get(key) or Checkpoint(**ident)
            fill_checkpoint(cp_row, r.checkpoint, now)
            session.add(cp_row)
            if r.recommendation is None:
                if key in recs:
                    session.delete(recs[key])
                continue
            rec_row = recs.get(key) or RecommendationRow(**ident)
            _fill_recommendation(rec_row, r, now)
            session.add(rec_row)
        written = append_history(
            session, [r for r in results if r.recommendation is not None], keys, now
        )
        session.commit()
        if points is not None:
            points.update(written)
    except Exception:
        session.rollback()
        raise


def save_all(
    session: DbSession,
    results: Iterable[ContainerResult],
    now: datetime,
    batch_size: int,
    points: set[tuple[WorkloadKey, str]] | None = None,
) -> tuple[int, int]:
    """Writes results in batches; a failing batch is logged and skipped. Returns (saved, failed);
    `points` collects the (workload, container) of the history points written."""
    saved = failed = 0
    batch: list[ContainerResult] = []

    def flush() -> None:
        nonlocal saved, failed
        try:
            save_batch(session, batch, now, points)
            saved += len(batch)
        except Exception:
            log.exception(
                "could not save a batch of %d recommendations; keeping the previous values",
                len(batch),
            )
            failed += len(batch)
        batch.clear()

    for r in results:
        batch.append(r)
        if len(batch) >= batch_size:
            flush()
    if batch:
        flush()
    return saved, failed


def stored_workloads(session: DbSession) -> set[WorkloadKey]:
    """Every workload with a checkpoint or a recommendation row."""
    out: set[WorkloadKey] = set()
    for table in (RecommendationRow, Checkpoint):
        for ns, kind, name in session.execute(
            select(table.namespace, table.kind, table.name).distinct()
        ):
            out.add(WorkloadKey(ns, kind, name))
    return out


def delete_workload(session: DbSession, w: WorkloadKey) -> None:
    """Forgets a workload that no longer exists: its recommendations, checkpoints, history,
    conditions and node groups."""
    for table in (
        RecommendationRow,
        Checkpoint,
        RecommendationPoint,
        WorkloadCondition,
        NodeGroupRecommendation,
    ):
        session.execute(
            delete(table).where(
                table.namespace == w.namespace, table.kind == w.kind, table.name == w.name
            )
        )
    session.commit()


def find_recommendations(
    session: DbSession,
    namespace: str | None = None,
    kind: str | None = None,
    name: str | None = None,
) -> list[RecommendationRow]:
    q = select(RecommendationRow)
    for col, value in (
        (RecommendationRow.namespace, namespace),
        (RecommendationRow.kind, kind),
        (RecommendationRow.name, name),
    ):
        if value is not None:
            q = q.where(col == value)
    q = q.order_by(
        RecommendationRow.namespace,
        RecommendationRow.kind,
        RecommendationRow.name,
        RecommendationRow.container,
    )
    return list(session.scalars(q))


def recommended_namespaces(session: DbSession) -> list[str]:
    """The namespaces with a stored recommendation, sorted."""
    q = select(RecommendationRow.namespace).distinct().order_by(RecommendationRow.namespace)
    return list(session.scalars(q))
