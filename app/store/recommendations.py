"""Recommendations and checkpoints in the database, written one transaction per batch.

The recommender writes thousands of workload containers a minute: rows of a batch are read with
one query and then updated or inserted, instead of one round trip per row, and a failed batch rolls
back alone, leaving every other batch (and the previous values of its own rows) intact. Each batch
also appends to the recommendation history (app.store.history) in the same transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from operator import itemgetter
from typing import Any, cast

from prometheus_client import Gauge
from sqlalchemy import CursorResult, bindparam, delete, func, insert, select, update

from app.core.workload_key import WorkloadKey
from app.store.checkpoints import checkpoint_values
from app.store.clusters import cluster_key
from app.store.history import Appended, append_history
from app.store.keys import KEY, Key, key_params, key_rows, on_key
from app.store.models import (
    Checkpoint,
    NodeGroupRecommendation,
    RecommendationPoint,
    WorkloadCondition,
)
from app.store.models import Recommendation as RecommendationRow
from app.store.results import ContainerResult
from app.store.session import DbSession, to_datetime, to_unix

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
    """(containers, workloads) of this cluster with a stored recommendation; also sets the
    gauges."""
    mine = RecommendationRow.cluster_id == cluster_key(session)
    containers = session.scalar(select(func.count()).select_from(RecommendationRow).where(mine))
    R = RecommendationRow
    workloads = session.scalar(
        select(func.count()).select_from(
            select(R.namespace, R.kind, R.name).where(mine).distinct().subquery()
        )
    )
    containers, workloads = containers or 0, workloads or 0
    RECOMMENDATIONS.set(containers)
    RECOMMENDED_WORKLOADS.set(workloads)
    return containers, workloads


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


def _existing(
    session: DbSession, table: Any, cluster: int, keys: set[Key], columns: Sequence[str]
) -> dict[Key, Any]:
    """The rows of `keys` in `cluster` (id, key and `columns`), as plain rows: one query joined
    with the keys (app.store.keys), no ORM objects."""
    if not keys:
        return {}
    rows, parts = key_rows(session.get_bind().dialect.name)
    selected = session.execute(
        select(table.c.id, *(table.c[k] for k in KEY), *(table.c[c] for c in columns))
        .select_from(rows)
        .join(table, on_key(table, parts)),
        key_params(keys, cluster),
    )
    # the key by position (id first, then KEY's columns): a Row reads an index at C speed, a
    # name through its key map (four names for each of a run's 15,000 rows, twice)
    return {r[1:5]: r for r in selected}


# What moves at nearly every run (each run's samples). A row is written with the columns that
# changed alone (and updated_at), not every column again: in a steady run its sample count and
# last sample time, and, as its history grows, its bounds.
SPAN_COLUMNS = ("sample_count", "first_sample_at", "last_sample_at")
_VALUE_COLUMNS = tuple(c for c in RECOMMENDATION_COLUMNS if c not in SPAN_COLUMNS)
_KEY_AND_COLUMNS = (*KEY, *RECOMMENDATION_COLUMNS)
# A column's place in a row _existing reads (the id, the key's four columns, then the columns),
# and in a row's new values (the key, then the columns: _row_values); the value columns (none a
# datetime: those need _same) compared as one tuple, in C, first
_AT = {c: 1 + len(KEY) + i for i, c in enumerate(RECOMMENDATION_COLUMNS)}
_STORED_VALUES = itemgetter(*(_AT[c] for c in _VALUE_COLUMNS))
_NEW_VALUES = itemgetter(*(_AT[c] - 1 for c in _VALUE_COLUMNS))
_VALUE_AT = tuple((c, _AT[c]) for c in _VALUE_COLUMNS)
_SPAN_AT = tuple((c, _AT[c]) for c in SPAN_COLUMNS)
# what this run may not see (no pod of the container reported): kept as stored
_CURRENT = slice(_AT["current_cpu_request"], _AT["requested_memory_total"] + 1)
_REPLICAS = slice(_AT["replicas"], _AT["requested_memory_total"] + 1)
_NONE_CURRENT = (None,) * (_CURRENT.stop - _CURRENT.start)
_NONE_REPLICAS = (None,) * (_REPLICAS.stop - _REPLICAS.start)


def _same(old: Any, new: Any) -> bool:
    """A stored value equals a new one (SQLite hands back naive datetimes, written as UTC)."""
    if isinstance(old, datetime) and isinstance(new, datetime):
        return to_unix(old) == to_unix(new)
    return bool(old == new)


def _row_values(key: Key, r: ContainerResult, old: Any) -> tuple[Any, ...]:
    """The row of `r`: its key, then RECOMMENDATION_COLUMNS' values in their order (one tuple,
    no dict: a run builds one for each of its 15,000 rows); what this run did not see (current
    requests, replicas when no pod of the container reported) keeps its stored value."""
    rec, span, current = r.recommendation, r.span, r.current
    assert rec is not None
    if current is None:
        seen = old[_CURRENT] if old is not None else _NONE_CURRENT
    elif current.replicas is None:
        kept = old[_REPLICAS] if old is not None else _NONE_REPLICAS
        seen = (current.cpu, current.memory, *kept)
    else:
        seen = (current.cpu, current.memory, current.replicas)
        seen += (current.cpu_total, current.memory_total)
    t, low, up, uncapped = rec.target, rec.lower_bound, rec.upper_bound, rec.uncapped_target
    return (
        *key,
        t.cpu,
        t.memory,
        low.cpu,
        low.memory,
        up.cpu,
        up.memory,
        uncapped.cpu,
        uncapped.memory,
        span.total,
        to_datetime(span.first),
        to_datetime(span.last),
        *seen,
        dict(r.conflicts),
        rec.reason or None,
    )


@dataclass
class _RowWrites:
    """A batch's recommendation rows by the write each needs, and each row as it will stand
    (`rows`: the id, the key, the columns; None once deleted) where that is known."""

    cluster: int
    now: datetime
    new: list[dict[str, Any]] = field(default_factory=list)
    # the updates by the columns they set: one statement for each such set
    changed: dict[tuple[str, ...], list[dict[str, Any]]] = field(default_factory=dict)
    gone: list[int] = field(default_factory=list)
    rows: dict[Key, tuple[Any, ...] | None] = field(default_factory=dict)
    new_rows: list[tuple[Any, ...]] = field(default_factory=list)  # of `new`: key and columns

    def add(self, key: Key, r: ContainerResult, old: Any, read: bool) -> None:
        """`r`'s row, `old` as stored (None: no row), `read` from the database by this batch."""
        if r.recommendation is None:
            if old is not None:
                self.gone.append(old[0])
                self.rows[key] = None
            return
        full = _row_values(key, r, old)
        if old is None:  # its id comes back from the insert (inserted)
            row = dict(zip(_KEY_AND_COLUMNS, full, strict=True))
            row["cluster_id"], row["updated_at"] = self.cluster, self.now
            self.new.append(row)
            self.new_rows.append(full)
            return
        # the old row has its id first: its column i is the new row's i - 1
        columns = [c for c, i in _SPAN_AT if not _same(old[i], full[i - 1])]
        if _STORED_VALUES(old) != _NEW_VALUES(full):
            columns += [c for c, i in _VALUE_AT if old[i] != full[i - 1]]
        if columns:
            update = {c: full[_AT[c] - 1] for c in columns}
            update["_id"], update["updated_at"] = old[0], self.now
            self.changed.setdefault(tuple(columns), []).append(update)
        elif not read:
            return  # known as it stands
        self.rows[key] = (old[0], *full)

    def inserted(self, ids: list[int]) -> None:
        """The ids the insert of `new` gave, in its order."""
        for i, full in zip(ids, self.new_rows, strict=True):
            self.rows[full[:4]] = (i, *full)


def _write(
    session: DbSession, table: Any, new: list[dict[str, Any]], *changes: list[dict[str, Any]]
) -> int:
    """The rows inserted, then each list of changes by id in one statement (its rows set the
    same columns); the rows an update did not find."""
    missed = 0
    if new:
        session.execute(insert(table), new)
    for changed in changes:
        if changed:
            done = session.execute(update(table).where(table.c.id == bindparam("_id")), changed)
            found = cast(CursorResult[Any], done).rowcount  # summed over the rows (executemany)
            if 0 <= found < len(changed):
                missed += len(changed) - found
    return missed


def save_batch(
    session: DbSession,
    results: Sequence[ContainerResult],
    now: datetime,
    points: set[tuple[WorkloadKey, str]] | None = None,
    checkpointed: set[tuple[WorkloadKey, str]] | None = None,
    recent: dict[Key, float] | None = None,
    written: dict[Key, tuple[Any, ...]] | None = None,
) -> None:
    """Upserts the recommendations and checkpoints of `results` in one transaction (a result without
    a checkpoint leaves its checkpoint row as it is); adds the (workload, container) of each history
    point written to `points`, and of each checkpoint written to `checkpointed`, once the
    transaction is committed, and the newest history point of each key looked up or written to
    `recent`, which the history append reads (app.store.history.append_history). Rows are read with
    one query per table and written with one executemany statement per kind of change (SQLAlchemy
    Core: no ORM object per row); a recommendation row whose values did not change is left alone,
    and one that changed gets the columns that changed alone (one statement for each set of them).
    `written`, when given, holds each recommendation row as the caller's earlier batches last read
    or wrote it (the id, the key, the columns; an inserted row's id as the insert gives it back); a
    key in it is not read again, and it is kept up to date once the transaction is committed. Only
    the leader writes these rows, so a leadership term may keep it; should an update find fewer rows
    than it was given (a row removed by something else), it is emptied and the next batches read
    their rows again."""
    recs_t, cps_t = RecommendationRow.__table__, Checkpoint.__table__
    keys_in_order = [
        (r.workload.namespace, r.workload.kind, r.workload.name, r.container) for r in results
    ]
    keys = set(keys_in_order)
    try:
        cluster = cluster_key(session)
        known = written if written is not None else {}
        unknown = {k for k in keys if k not in known} if known else keys
        recs = _existing(session, recs_t, cluster, unknown, RECOMMENDATION_COLUMNS)
        checkpointing = {
            k for k, r in zip(keys_in_order, results, strict=True) if r.checkpoint is not None
        }
        cps = _existing(session, cps_t, cluster, checkpointing, ())
        rows = _RowWrites(cluster, now)
        cp_new: list[dict[str, Any]] = []
        cp_changed: list[dict[str, Any]] = []
        for key, r in zip(keys_in_order, results, strict=True):
            if r.checkpoint is not None:
                values = checkpoint_values(r.checkpoint, now)
                if key in cps:
                    cp_changed.append({"_id": cps[key].id, **values})
                else:
                    cp_new.append(
                        {"cluster_id": cluster, **dict(zip(KEY, key, strict=True)), **values}
                    )
            read = recs.get(key)
            rows.add(key, r, read if read is not None else known.get(key), read is not None)
        _write(session, cps_t, cp_new, cp_changed)
        if rows.new:  # with the ids given, in order (SQLAlchemy's insertmanyvalues)
            ids = session.scalars(
                insert(recs_t).returning(recs_t.c.id, sort_by_parameter_order=True), rows.new
            )
            rows.inserted(list(ids))
        missed = _write(session, recs_t, [], *rows.changed.values())
        if rows.gone:
            session.execute(delete(recs_t).where(recs_t.c.id.in_(rows.gone)))
        appended = append_history(
            session, [r for r in results if r.recommendation is not None], keys, now, recent
        )
        session.commit()
    except Exception:
        session.rollback()
        raise
    _report(results, appended, points, checkpointed, recent)
    if written is not None:
        _remember(written, rows.rows, missed)


def _remember(
    written: dict[Key, tuple[Any, ...]], wrote: dict[Key, tuple[Any, ...] | None], missed: int
) -> None:
    """A committed batch's rows into `written` (save_batch's), or `written` emptied when an
    update missed rows: the rows read afresh by the next batches, the missing ones inserted."""
    if missed:
        log.warning(
            "%d recommendation rows were no longer in the database (removed by something other "
            "than the recommender); the rows are read again and rewritten at the next save",
            missed,
        )
        written.clear()
        return
    for key, row in wrote.items():
        if row is None:
            written.pop(key, None)
        else:
            written[key] = row


def _report(
    results: Sequence[ContainerResult],
    appended: Appended,
    points: set[tuple[WorkloadKey, str]] | None,
    checkpointed: set[tuple[WorkloadKey, str]] | None,
    recent: dict[Key, float] | None,
) -> None:
    """What a committed batch wrote, into the caller's collections (save_batch's)."""
    if points is not None:
        points.update(appended.written)
    if recent is not None:
        recent.update(appended.newest)
    if checkpointed is not None:
        checkpointed.update((r.workload, r.container) for r in results if r.checkpoint is not None)


@dataclass(frozen=True)
class SaveReport:
    """What one save_all wrote: the containers saved, those whose batch failed (skipped, their
    previous values kept), the (workload, container) of the history points and of the
    checkpoints written, and the workloads of the batches committed (their rows stand)."""

    saved: int = 0
    failed: int = 0
    points: frozenset[tuple[WorkloadKey, str]] = frozenset()
    checkpointed: frozenset[tuple[WorkloadKey, str]] = frozenset()
    workloads: frozenset[WorkloadKey] = frozenset()


def save_all(
    session: DbSession,
    results: Iterable[ContainerResult],
    now: datetime,
    batch_size: int,
    *,
    recent: dict[Key, float] | None = None,
    written: dict[Key, tuple[Any, ...]] | None = None,
) -> SaveReport:
    """Writes results in batches; a failing batch is logged and skipped. `recent`: each key's
    newest history point, `written` each recommendation row, read and kept up to date across
    runs (save_batch)."""
    saved = failed = 0
    points: set[tuple[WorkloadKey, str]] = set()
    checkpointed: set[tuple[WorkloadKey, str]] = set()
    workloads: set[WorkloadKey] = set()
    batch: list[ContainerResult] = []

    def flush() -> None:
        nonlocal saved, failed
        try:
            save_batch(session, batch, now, points, checkpointed, recent, written)
            saved += len(batch)
            workloads.update(r.workload for r in batch)
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
    return SaveReport(
        saved, failed, frozenset(points), frozenset(checkpointed), frozenset(workloads)
    )


def stored_workloads(session: DbSession) -> set[WorkloadKey]:
    """Every workload of this cluster with a checkpoint or a recommendation row."""
    out: set[WorkloadKey] = set()
    cluster = cluster_key(session)
    for table in (RecommendationRow, Checkpoint):
        for ns, kind, name in session.execute(
            select(table.namespace, table.kind, table.name)
            .where(table.cluster_id == cluster)
            .distinct()
        ):
            out.add(WorkloadKey(ns, kind, name))
    return out


def delete_workload(session: DbSession, w: WorkloadKey) -> None:
    """Forgets a workload of this cluster that no longer exists: its recommendations,
    checkpoints, history, conditions and node groups."""
    cluster = cluster_key(session)
    for table in (
        RecommendationRow,
        Checkpoint,
        RecommendationPoint,
        WorkloadCondition,
        NodeGroupRecommendation,
    ):
        session.execute(
            delete(table).where(
                table.cluster_id == cluster,
                table.namespace == w.namespace,
                table.kind == w.kind,
                table.name == w.name,
            )
        )
    session.commit()


def find_recommendations(
    session: DbSession,
    namespace: str | None = None,
    kind: str | None = None,
    name: str | None = None,
) -> list[RecommendationRow]:
    q = select(RecommendationRow).where(RecommendationRow.cluster_id == cluster_key(session))
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
    """The namespaces of this cluster with a stored recommendation, sorted."""
    R = RecommendationRow
    q = select(R.namespace).where(R.cluster_id == cluster_key(session))
    q = q.distinct().order_by(R.namespace)
    return list(session.scalars(q))
