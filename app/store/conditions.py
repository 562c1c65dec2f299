"""The conditions of workloads' recommendations (app.core.conditions) in `workload_conditions`.

Each writer (the recommender, the updater) owns some condition types and, at each run, states
all the conditions of its types: `save_conditions` then inserts what is new, updates what
changed (the lastTransitionTime moves only when the status does, as Kubernetes' condition
helpers do) and deletes what no longer holds, in one transaction; unchanged rows are not
written. Readers get them per workload, in the order of app.core.conditions.TYPES.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from sqlalchemy import CursorResult, bindparam, delete, func, insert, select, update

from app.core.conditions import Condition, sort_key
from app.core.workload_key import WorkloadKey
from app.store.clusters import cluster_key
from app.store.models import WorkloadCondition
from app.store.session import DbSession

# A stored condition row: its key (namespace, kind, name, type) and, as stored, its id, status,
# reason and message (the last two cut to their columns' sizes)
ConditionKey = tuple[str, str, str, str]
StoredCondition = tuple[int, str, str, str]


class KnownConditions:
    """The rows of one writer's condition types as its committed saves left them, kept over a
    leadership term (only the leader writes them), so that a save does not read them all
    again: 30,000 rows at 15,000 workloads, most of a steady save's time. Each save still
    counts the stored rows (one indexed count); a count that differs (rows deleted with their
    workload by the garbage collection, or added by a save that was not given `known`) makes
    it read them afresh, and so does a save that failed or whose update missed a row. `forget`
    at the start of a term: another leader may have written them meanwhile."""

    def __init__(self, types: Collection[str]) -> None:
        self.types = frozenset(types)  # the writer's: the rows kept are of these types
        self.rows: dict[ConditionKey, StoredCondition] | None = None

    def forget(self) -> None:
        self.rows = None


def save_conditions(
    session: DbSession,
    types: Collection[str],
    conditions: Mapping[WorkloadKey, Sequence[Condition]],
    now: datetime,
    known: KnownConditions | None = None,
) -> int:
    """Makes the stored conditions of `types` exactly `conditions`; returns the rows written or
    deleted. The stored rows are read as plain rows (or taken from `known`, which the save keeps
    up to date once committed) and the changes written with one executemany statement each
    (SQLAlchemy Core: the recommender states two conditions for each of thousands of workloads
    at every run)."""
    table = WorkloadCondition.__table__
    if known is not None and known.types != frozenset(types):
        raise ValueError(f"conditions known of {sorted(known.types)}, saved of {sorted(types)}")
    # keyed by the row's own fields (no WorkloadKey built for each of the rows read)
    wanted = {
        (w.namespace, w.kind, w.name, c.type): c
        for w, cs in conditions.items()
        for c in cs
        if c.type in types
    }
    try:
        cluster = cluster_key(session)
        changes = _changes(_stored(session, table, cluster, types, known), wanted, now)
        new = [  # what is left of `wanted`: no row yet
            {
                "cluster_id": cluster,
                "namespace": namespace,
                "kind": kind,
                "name": name,
                "type": c.type,
                "status": c.status,
                "reason": c.reason[:128],
                "message": c.message[:4000],
                "last_transition_time": now,
                "updated_at": now,
            }
            for (namespace, kind, name, _), c in wanted.items()
        ]
        if changes.gone:
            session.execute(delete(table).where(table.c.id.in_(changes.gone)))
        missed = 0
        for rows in (changes.moved, changes.changed):
            if rows:
                done = session.execute(update(table).where(table.c.id == bindparam("_id")), rows)
                found = cast(CursorResult[Any], done).rowcount  # summed over the rows
                missed += len(rows) - found if 0 <= found < len(rows) else 0
        ids: list[int] = []
        if new and known is not None:  # with the ids given, in order (insertmanyvalues)
            returning = insert(table).returning(table.c.id, sort_by_parameter_order=True)
            ids = list(session.scalars(returning, new))
        elif new:
            session.execute(insert(table), new)
        session.commit()
    except Exception:
        session.rollback()
        if known is not None:
            known.forget()
        raise
    if known is not None:
        if missed:  # a row removed by something else: read them all afresh next time
            known.forget()
        else:
            for row_id, (key, c) in zip(ids, wanted.items(), strict=True):
                changes.kept[key] = (row_id, c.status, c.reason[:128], c.message[:4000])
            known.rows = changes.kept
    return len(changes.gone) + len(changes.moved) + len(changes.changed) + len(new)


@dataclass
class _Changes:
    """What a save writes of the stored rows: the ids of those to delete, the updates (a change
    of status moves lastTransitionTime with it: `moved`; the others leave it), and every row
    kept as it will stand."""

    gone: list[int] = field(default_factory=list)
    moved: list[dict[str, Any]] = field(default_factory=list)
    changed: list[dict[str, Any]] = field(default_factory=list)
    kept: dict[ConditionKey, StoredCondition] = field(default_factory=dict)


def _changes(
    stored: Mapping[ConditionKey, StoredCondition],
    wanted: dict[ConditionKey, Condition],
    now: datetime,
) -> _Changes:
    """The stored rows against the conditions `wanted`, which loses those that have a row."""
    out = _Changes()
    for key, (row_id, status, stored_reason, stored_message) in stored.items():
        c = wanted.pop(key, None)
        if c is None:
            out.gone.append(row_id)
            continue
        reason, message = c.reason[:128], c.message[:4000]
        out.kept[key] = (row_id, c.status, reason, message)
        if (status, stored_reason, stored_message) == (c.status, reason, message):
            continue
        row = {"_id": row_id, "status": c.status, "reason": reason, "message": message}
        row["updated_at"] = now
        if status != c.status:  # lastTransitionTime moves with the status only
            row["last_transition_time"] = now
            out.moved.append(row)
        else:
            out.changed.append(row)
    return out


def _stored(
    session: DbSession,
    table: Any,
    cluster: int,
    types: Collection[str],
    known: KnownConditions | None,
) -> dict[ConditionKey, StoredCondition]:
    """The stored rows of `types`: `known`'s when it has them and their count is the stored
    rows' count, else read."""
    mine = (table.c.cluster_id == cluster, table.c.type.in_(types))
    if known is not None and known.rows is not None:
        count = session.scalar(select(func.count()).select_from(table).where(*mine))
        if count == len(known.rows):
            return known.rows
    rows = session.execute(
        select(
            table.c.id,
            table.c.namespace,
            table.c.kind,
            table.c.name,
            table.c.type,
            table.c.status,
            table.c.reason,
            table.c.message,
        ).where(*mine)
    )
    # by position, as selected: a Row reads an index at C speed, a name through its key map
    return {
        (ns, kind, name, type_): (i, status, reason, message)
        for i, ns, kind, name, type_, status, reason, message in rows
    }


def workload_conditions(
    session: DbSession,
    namespace: str | None = None,
    kind: str | None = None,
    name: str | None = None,
) -> dict[WorkloadKey, list[WorkloadCondition]]:
    """The stored conditions per workload (every filter optional), in display order."""
    q = select(WorkloadCondition).where(WorkloadCondition.cluster_id == cluster_key(session))
    for col, value in (
        (WorkloadCondition.namespace, namespace),
        (WorkloadCondition.kind, kind),
        (WorkloadCondition.name, name),
    ):
        if value is not None:
            q = q.where(col == value)
    out: dict[WorkloadKey, list[WorkloadCondition]] = {}
    for row in session.scalars(q):
        out.setdefault(WorkloadKey(row.namespace, row.kind, row.name), []).append(row)
    for rows in out.values():
        rows.sort(key=lambda r: sort_key(r.type))
    return out
