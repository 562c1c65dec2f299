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
from sqlalchemy import delete, func, select

from app.core.recommend.model import WorkloadKey
from app.models import Checkpoint, NodeGroupRecommendation, RecommendationPoint, WorkloadCondition
from app.models import Recommendation as RecommendationRow
from app.store.bulk import Columns, by_keys
from app.store.checkpoints import CHECKPOINT_COLUMNS, checkpoint_values
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


KEY = ("namespace", "kind", "name", "container")
# The columns a recommendation row holds beside its key; a row whose values are all the same as
# this run's is not written (as VPA updates a VPA's status only when it changed), so its
# updated_at says when the recommendation last changed.
RECOMMENDATION_COLUMNS = (
    "target_cpu",
    "target_memory",
    "lower_bound_cpu",
    "lower_bound_memory",
    "upper_bound_cpu",
    "upper_bound_memory",
    "uncapped_target_cpu",
    "uncapped_target_memory",
    "sample_count",
    "first_sample_at",
    "last_sample_at",
    "current_cpu_request",
    "current_memory_request",
    "replicas",
    "requested_cpu_total",
    "requested_memory_total",
    "conflicts",
    "reason",
)
Key = tuple[str, str, str, str]
_FIRST = len(KEY) + 1  # a stored row read by _existing: id, KEY, then its columns
_CONFLICTS = RECOMMENDATION_COLUMNS.index("conflicts")


def _existing(
    session: DbSession, table: Any, keys: set[Key], columns: Sequence[str]
) -> dict[Key, Any]:
    """The rows of `keys` (id, key and `columns`, as stored: app.store.bulk), one statement."""
    rows = by_keys(session, table, KEY, keys, ("id", *KEY, *columns))
    # the key by position (id first, then KEY's columns): four names a row would cost more
    return {r[1:5]: r for r in rows}


def _recommendation_values(r: ContainerResult, old: Any) -> list[Any]:
    """The values of RECOMMENDATION_COLUMNS for `r`; what this run did not see (current
    requests, replicas when no pod of the container reported) keeps its stored value."""
    rec, cp = r.recommendation, r.checkpoint
    assert rec is not None
    cur = r.current
    kept = old[_FIRST + 11 : _FIRST + 16] if old is not None else (None,) * 5
    requests = kept[:2] if cur is None else (cur.cpu, cur.memory)
    replicas = (
        kept[2:]
        if cur is None or cur.replicas is None
        else (cur.replicas, cur.cpu_total, cur.memory_total)
    )
    return [
        rec.target.cpu,
        rec.target.memory,
        rec.lower_bound.cpu,
        rec.lower_bound.memory,
        rec.upper_bound.cpu,
        rec.upper_bound.memory,
        rec.uncapped_target.cpu,
        rec.uncapped_target.memory,
        cp.total_samples,
        to_datetime(cp.first_sample),
        to_datetime(cp.last_sample),
        *requests,
        *replicas,
        dict(r.conflicts),
        rec.reason or None,
    ]


def _unchanged(columns: Columns, old: Any, new: tuple[Any, ...], conflicts: Any) -> bool:
    """A stored row holds the encoded values `new` already (JSON compared parsed: its text
    may have been written by another serializer)."""
    stored = old[_FIRST:]
    for i, (a, b) in enumerate(zip(stored, new, strict=True)):
        if a != b and not (i == _CONFLICTS and columns.decode_json(a) == conflicts):
            return False
    return True


def save_batch(
    session: DbSession,
    results: Sequence[ContainerResult],
    now: datetime,
    points: set[tuple[WorkloadKey, str]] | None = None,
) -> None:
    """Upserts the recommendations and checkpoints of `results` in one transaction; adds the
    (workload, container) of each history point written to `points`. Rows are read with one
    query per table and written with one statement per kind of change (app.store.bulk: no ORM
    object, no per-row parameter processing); a recommendation row whose values did not change
    is left alone, so its updated_at says when the recommendation last changed."""
    recs_t, cps_t = RecommendationRow.__table__, Checkpoint.__table__
    keys = {(r.workload.namespace, r.workload.kind, r.workload.name, r.container) for r in results}
    try:
        dialect = session.get_bind().dialect
        rec_cols = Columns(recs_t, (*KEY, *RECOMMENDATION_COLUMNS, "updated_at"), dialect)
        rec_set = Columns(recs_t, (*RECOMMENDATION_COLUMNS, "updated_at"), dialect)
        cp_cols = Columns(cps_t, (*KEY, *CHECKPOINT_COLUMNS), dialect)
        cp_set = Columns(cps_t, CHECKPOINT_COLUMNS, dialect)
        recs = _existing(session, recs_t, keys, RECOMMENDATION_COLUMNS)
        cps = _existing(session, cps_t, keys, ())
        rec_new: list[tuple[Any, ...]] = []
        rec_changed: list[tuple[Any, ...]] = []
        rec_changed_ids: list[int] = []
        rec_gone: list[int] = []
        cp_new: list[tuple[Any, ...]] = []
        cp_changed: list[tuple[Any, ...]] = []
        cp_changed_ids: list[int] = []
        for r in results:
            key = (r.workload.namespace, r.workload.kind, r.workload.name, r.container)
            values = checkpoint_values(r.checkpoint, now)
            stored = cps.get(key)
            if stored is not None:
                cp_changed.append(cp_set.encode(values))
                cp_changed_ids.append(stored[0])
            else:
                cp_new.append(cp_cols.encode((*key, *values)))
            old = recs.get(key)
            if r.recommendation is None:
                if old is not None:
                    rec_gone.append(old[0])
                continue
            row = _recommendation_values(r, old)
            if old is None:
                rec_new.append(rec_cols.encode((*key, *row, now)))
                continue
            encoded = rec_set.encode((*row, now))
            if not _unchanged(rec_set, old, encoded[:-1], row[_CONFLICTS]):
                rec_changed.append(encoded)
                rec_changed_ids.append(old[0])
        cp_cols.insert(session, cp_new)
        cp_set.update(session, cp_changed_ids, cp_changed)
        rec_cols.insert(session, rec_new)
        rec_set.update(session, rec_changed_ids, rec_changed)
        if rec_gone:
            session.execute(delete(recs_t).where(recs_t.c.id.in_(rec_gone)))
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
