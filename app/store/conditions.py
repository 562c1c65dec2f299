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

from sqlalchemy import select

from app.core.conditions import Condition, sort_key
from app.core.recommend.model import WorkloadKey
from app.models import WorkloadCondition
from app.store.session import DbSession


def _key(row: WorkloadCondition) -> tuple[WorkloadKey, str]:
    return WorkloadKey(row.namespace, row.kind, row.name), row.type


def save_conditions(
    session: DbSession,
    types: Collection[str],
    conditions: Mapping[WorkloadKey, Sequence[Condition]],
    now: datetime,
) -> int:
    """Makes the stored conditions of `types` exactly `conditions`; returns the rows written or
    deleted."""
    wanted = {(w, c.type): c for w, cs in conditions.items() for c in cs if c.type in types}
    changed = 0
    try:
        rows = session.scalars(select(WorkloadCondition).where(WorkloadCondition.type.in_(types)))
        for row in rows:
            c = wanted.pop(_key(row), None)
            if c is None:
                session.delete(row)
                changed += 1
                continue
            if (row.status, row.reason, row.message) == (c.status, c.reason, c.message):
                continue
            if row.status != c.status:
                row.last_transition_time = now
            row.status, row.reason, row.message, row.updated_at = (
                c.status,
                c.reason,
                c.message[:4000],
                now,
            )
            changed += 1
        for (w, _), c in wanted.items():
            session.add(
                WorkloadCondition(
                    namespace=w.namespace,
                    kind=w.kind,
                    name=w.name,
                    type=c.type,
                    status=c.status,
                    reason=c.reason[:128],
                    message=c.message[:4000],
                    last_transition_time=now,
                    updated_at=now,
                )
            )
            changed += 1
        session.commit()
    except Exception:
        session.rollback()
        raise
    return changed


def workload_conditions(
    session: DbSession,
    namespace: str | None = None,
    kind: str | None = None,
    name: str | None = None,
) -> dict[WorkloadKey, list[WorkloadCondition]]:
    """The stored conditions per workload (every filter optional), in display order."""
    q = select(WorkloadCondition)
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
