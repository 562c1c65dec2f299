"""The conditions of workloads' recommendations (app.core.conditions) in `workload_conditions`.

Each writer (the recommender, the updater) owns some condition types and, at each run, states
all the conditions of its types: `save_conditions` then inserts what is new, updates what
changed (the lastTransitionTime moves only when the status does, as Kubernetes' condition
helpers do) and deletes what no longer holds, in one transaction; unchanged rows are not
written. Readers get them per workload, in the order of app.core.conditions.TYPES.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, delete, insert, select, update

from app.core.conditions import Condition, sort_key
from app.core.workload_key import WorkloadKey
from app.store.clusters import cluster_key
from app.store.models import WorkloadCondition
from app.store.session import DbSession


def save_conditions(
    session: DbSession,
    types: Collection[str],
    conditions: Mapping[WorkloadKey, Sequence[Condition]],
    now: datetime,
) -> int:
    """Makes the stored conditions of `types` exactly `conditions`; returns the rows written or
    deleted. The stored rows are read as plain rows and the changes written with one executemany
    statement each (SQLAlchemy Core: the recommender states two conditions for each of
    thousands of workloads at every run)."""
    table = WorkloadCondition.__table__
    # keyed by the row's own fields (no WorkloadKey built for each of the rows read)
    wanted = {
        (w.namespace, w.kind, w.name, c.type): c
        for w, cs in conditions.items()
        for c in cs
        if c.type in types
    }
    gone: list[int] = []
    changed: list[dict[str, Any]] = []
    try:
        cluster = cluster_key(session)
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
                table.c.last_transition_time,
            ).where(table.c.cluster_id == cluster, table.c.type.in_(types))
        )
        # by position, as selected: a Row reads an index at C speed, a name through its key map
        for row_id, *key, status, stored_reason, stored_message, transition in rows:
            c = wanted.pop(tuple(key), None)
            if c is None:
                gone.append(row_id)
                continue
            reason, message = c.reason[:128], c.message[:4000]
            if (status, stored_reason, stored_message) == (c.status, reason, message):
                continue
            moved = status != c.status  # lastTransitionTime moves with the status only
            changed.append(
                {
                    "_id": row_id,
                    "status": c.status,
                    "reason": reason,
                    "message": message,
                    "last_transition_time": now if moved else transition,
                    "updated_at": now,
                }
            )
        new = [
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
        if gone:
            session.execute(delete(table).where(table.c.id.in_(gone)))
        if changed:
            session.execute(update(table).where(table.c.id == bindparam("_id")), changed)
        if new:
            session.execute(insert(table), new)
        session.commit()
    except Exception:
        session.rollback()
        raise
    return len(gone) + len(changed) + len(new)


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
