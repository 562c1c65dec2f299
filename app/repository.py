"""Recommendations and checkpoints in the database, written one transaction per batch.

The recommender writes thousands of workload containers a minute: rows of a batch are read with
one query and then updated or inserted, instead of one round trip per row, and a failed batch rolls
back alone, leaving every other batch (and the previous values of its own rows) intact. Each batch
also appends to the recommendation history (at most one point per container an hour, kept 8 days).

Every eviction, resize and scale change rightsizer makes is recorded as an audit event; this
module counts them in Prometheus at that one place, when the event's transaction commits.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from prometheus_client import Counter, Gauge
from sqlalchemy import delete, event, func, select, tuple_
from sqlalchemy.orm import Session, scoped_session

from app.core.capping import ContainerPolicy, Recommendation
from app.core.checkpoint import AggregateCheckpoint, load_aggregate, save_aggregate
from app.core.histogram import HistogramCheckpoint
from app.core.model import UsageModel, WorkloadKey
from app.core.settings import RecommenderSettings
from app.models import AuditEvent, Checkpoint, RecommendationPoint
from app.models import Recommendation as RecommendationRow

log = logging.getLogger(__name__)

HISTORY_STEP = timedelta(hours=1)  # at most one history point per container in this time
HISTORY_KEEP = timedelta(days=8)  # the memory window: older points are deleted

# Audit-event action -> the counter of what rightsizer did to the cluster.
ACTION_COUNTERS = {
    "evict": Counter(
        "rightsizer_evictions",
        "Pods rightsizer evicted (to apply a recommendation, or a resize "
        "that could not be done in place), counted when the audit event commits.",
    ),
    "resize": Counter(
        "rightsizer_resizes",
        "Pods rightsizer resized in place, counted when the audit event commits.",
    ),
    "scale": Counter(
        "rightsizer_scale_changes",
        "Replica changes the proportional scalers made, counted when the audit event commits.",
    ),
}
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
_PENDING_ACTIONS = "rightsizer.pending_actions"


@event.listens_for(Session, "after_flush")
def _note_actions(session: Session, _flush_context: Any) -> None:
    """Audit events of actions written by this flush: counted only if their transaction commits."""
    for obj in session.new:
        if isinstance(obj, AuditEvent) and obj.action in ACTION_COUNTERS:
            session.info.setdefault(_PENDING_ACTIONS, []).append(obj.action)


@event.listens_for(Session, "after_commit")
def _count_actions(session: Session) -> None:
    for action in session.info.pop(_PENDING_ACTIONS, ()):
        ACTION_COUNTERS[action].inc()


@event.listens_for(Session, "after_rollback")
def _forget_actions(session: Session) -> None:
    session.info.pop(_PENDING_ACTIONS, None)


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


# Flask-SQLAlchemy's db.session is a scoped_session; jobs may pass a plain Session.
DbSession = Session | scoped_session[Any]


def to_datetime(t: float | None) -> datetime | None:
    return None if t is None else datetime.fromtimestamp(t, UTC)


def to_unix(d: datetime | None) -> float | None:
    """SQLite hands back naive datetimes: they were written as UTC."""
    if d is None:
        return None
    return (d if d.tzinfo else d.replace(tzinfo=UTC)).timestamp()


@dataclass(frozen=True)
class CurrentRequests:
    cpu: int | None = None  # millicores
    memory: int | None = None  # bytes
    replicas: int | None = None  # live pods of the workload seen in the run


@dataclass(frozen=True)
class ContainerResult:
    workload: WorkloadKey
    container: str
    recommendation: Recommendation | None  # None: no recommendation (e.g. turned off by policy)
    checkpoint: AggregateCheckpoint
    current: CurrentRequests | None = None  # None: no pod seen in this run; keep what is stored
    conflicts: dict[str, str] = field(default_factory=dict)


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
    row.conflicts = dict(r.conflicts)


def _fill_checkpoint(row: Checkpoint, cp: AggregateCheckpoint, now: datetime) -> None:
    row.cpu_buckets = {str(k): v for k, v in sorted(cp.cpu.bucket_weights.items())}
    row.cpu_total_weight = cp.cpu.total_weight
    row.cpu_reference_time = to_datetime(cp.cpu.reference_time)
    row.memory_buckets = {str(k): v for k, v in sorted(cp.memory.bucket_weights.items())}
    row.memory_total_weight = cp.memory.total_weight
    row.memory_reference_time = to_datetime(cp.memory.reference_time)
    row.sample_count = cp.total_samples
    row.first_sample_at = to_datetime(cp.first_sample)
    row.last_sample_at = to_datetime(cp.last_sample)
    row.version = cp.version
    row.updated_at = now


def save_batch(session: DbSession, results: Sequence[ContainerResult], now: datetime) -> None:
    """Upserts the recommendations and checkpoints of `results` in one transaction."""
    keys = {(r.workload.namespace, r.workload.kind, r.workload.name, r.container) for r in results}
    try:
        recs = _existing(session, RecommendationRow, keys)
        cps = _existing(session, Checkpoint, keys)
        for r in results:
            key = (r.workload.namespace, r.workload.kind, r.workload.name, r.container)
            ident = dict(zip(("namespace", "kind", "name", "container"), key, strict=True))
            cp_row = cps.get(key) or Checkpoint(**ident)
            _fill_checkpoint(cp_row, r.checkpoint, now)
            session.add(cp_row)
            if r.recommendation is None:
                if key in recs:
                    session.delete(recs[key])
                continue
            rec_row = recs.get(key) or RecommendationRow(**ident)
            _fill_recommendation(rec_row, r, now)
            session.add(rec_row)
        _append_history(session, [r for r in results if r.recommendation is not None], keys, now)
        session.commit()
    except Exception:
        session.rollback()
        raise


def _append_history(
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


def save_all(
    session: DbSession, results: Iterable[ContainerResult], now: datetime, batch_size: int
) -> tuple[int, int]:
    """Writes results in batches; a failing batch is logged and skipped. Returns (saved, failed)."""
    saved = failed = 0
    batch: list[ContainerResult] = []

    def flush() -> None:
        nonlocal saved, failed
        try:
            save_batch(session, batch, now)
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


def checkpoint_from_row(row: Checkpoint) -> AggregateCheckpoint:
    return AggregateCheckpoint(
        cpu=HistogramCheckpoint(
            {int(k): int(v) for k, v in row.cpu_buckets.items()},
            row.cpu_total_weight,
            to_unix(row.cpu_reference_time),
        ),
        memory=HistogramCheckpoint(
            {int(k): int(v) for k, v in row.memory_buckets.items()},
            row.memory_total_weight,
            to_unix(row.memory_reference_time),
        ),
        first_sample=to_unix(row.first_sample_at),
        last_sample=to_unix(row.last_sample_at),
        total_samples=row.sample_count,
        version=row.version,
    )


def load_checkpoints(
    session: DbSession, model: UsageModel, settings: RecommenderSettings
) -> tuple[int, int]:
    """Restores every checkpoint into `model`; a bad one is logged and kept, not deleted."""
    loaded = skipped = 0
    for row in session.scalars(select(Checkpoint)):
        w = WorkloadKey(row.namespace, row.kind, row.name)
        try:
            agg = load_aggregate(checkpoint_from_row(row), settings)
        except (ValueError, TypeError, AttributeError) as e:
            log.warning("skipping checkpoint of %s container %s: %s", w, row.container, e)
            skipped += 1
            continue
        model.restore(w, row.container, agg)
        loaded += 1
    return loaded, skipped


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
    """Forgets a workload that no longer exists: its recommendations, checkpoints and history."""
    for table in (RecommendationRow, Checkpoint, RecommendationPoint):
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


def results_from_model(
    model: UsageModel, policies_for: Callable[[WorkloadKey], list[ContainerPolicy]] | None = None
) -> Iterator[ContainerResult]:
    """A result per aggregate of the model: its recommendation (if any) and its checkpoint."""
    for w in model.workloads():
        recs = model.recommend(w, policies_for(w) if policies_for else None)
        for container, agg in sorted(model.aggregates[w].items()):
            yield ContainerResult(w, container, recs.get(container), save_aggregate(agg))
