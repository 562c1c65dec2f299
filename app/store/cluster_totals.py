"""Each cluster's totals for the fleet view (GET /api/v1/fleet, `rightsizer fleet`, the
dashboard's Fleet page), in the database: one row per cluster (migration 0017).

Summing a cluster's recommendation rows costs about 0.15 ms a container (benchmarks/fleet.py),
some 45 s for a fleet of 20 clusters of 150,000 pods at every view. So each cluster's leader
sums its own rows after a recommender run, at most every 5 minutes (`write_totals`, the same
`figures` the view used to compute, over the policies governing the cluster and its own
settings), and the view reads one row per cluster (`load_totals`). Each row carries `as_of`,
the run's time when the rows were read, which the view shows: the figures are true as of then.
A write never replaces totals newer than its own (a leader deposed mid-run does not overwrite
its successor's).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import cast

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from app.core.savings import Savings
from app.store.clusters import cluster_key
from app.store.figures import Figures, figures, newest
from app.store.models import ClusterTotals as Row
from app.store.models import Recommendation as RecommendationRow
from app.store.savings import Scoper
from app.store.session import DbSession


@dataclass(frozen=True)
class Totals:
    """A cluster's figures, the newest row they sum and when they were summed."""

    figures: Figures
    last_update: datetime | None
    as_of: datetime


R = RecommendationRow
# what `figures` and `newest` read of a row (and the Scoper: its workload, container, conflicts)
READ = (
    R.namespace,
    R.kind,
    R.name,
    R.container,
    R.target_cpu,
    R.target_memory,
    R.replicas,
    R.requested_cpu_total,
    R.requested_memory_total,
    R.conflicts,
    R.updated_at,
)


def summed(session: DbSession, scoper: Scoper, as_of: datetime) -> Totals:
    """The figures of the cluster `cluster_key` answers, summed from its rows now. The rows are
    read as plain tuples of the columns summed, by name like the ORM's objects (a third of the
    time: no identity map, no unread columns)."""
    q = (
        select(*READ)
        .where(R.cluster_id == cluster_key(session))
        .order_by(R.namespace, R.kind, R.name, R.container)
    )
    rows = cast(list[RecommendationRow], session.execute(q).all())
    return Totals(figures(rows, scoper), newest(rows), as_of)


def write_totals(session: DbSession, scoper: Scoper, as_of: datetime) -> bool:
    """Sums this cluster's rows and stores the totals as of `as_of` (one transaction, committed),
    unless totals as of a later time are stored already: True when written. Raises (rolled back)
    when the rows cannot be read or the totals written."""
    try:
        totals = summed(session, scoper, as_of)
        cluster = cluster_key(session)
        try:
            written = _stored(session, cluster, totals)
            session.commit()
        except IntegrityError:  # another process of the cluster inserted its row first
            session.rollback()
            written = _stored(session, cluster, totals)
            session.commit()
    except Exception:
        session.rollback()
        raise
    return written


def _stored(session: DbSession, cluster: int, totals: Totals) -> bool:
    values = _columns(totals)
    done = session.execute(
        update(Row).where(Row.cluster_id == cluster, Row.as_of <= totals.as_of).values(**values)
    )
    if done.rowcount:  # type: ignore[attr-defined]
        return True
    if session.scalar(select(Row.cluster_id).where(Row.cluster_id == cluster)) is not None:
        return False  # totals as of a later time are stored
    session.add(Row(cluster_id=cluster, **values))
    session.flush()
    return True


def _columns(t: Totals) -> dict[str, object]:
    f = t.figures
    return {
        "workloads": f.workloads,
        "containers": f.containers,
        "seen_workloads": f.seen_workloads,
        "pods": f.pods,
        "requested_cpu": f.requested.cpu,
        "requested_memory": f.requested.memory,
        "recommended_cpu": f.recommended.cpu,
        "recommended_memory": f.recommended.memory,
        "savings_cpu": f.savings.cpu,
        "savings_memory": f.savings.memory,
        "shortfall_cpu": f.shortfall.cpu,
        "shortfall_memory": f.shortfall.memory,
        "short_containers": f.short_containers,
        "last_update": t.last_update,
        "as_of": t.as_of,
    }


def load_totals(session: DbSession) -> dict[int, Totals]:
    """Every cluster's stored totals, by cluster key (a cluster whose leader has written none
    is absent)."""
    return {r.cluster_id: _totals(r) for r in session.scalars(select(Row))}


def _totals(r: Row) -> Totals:
    return Totals(
        Figures(
            r.workloads,
            r.containers,
            r.seen_workloads,
            r.pods,
            Savings(r.requested_cpu, r.requested_memory),
            Savings(r.recommended_cpu, r.recommended_memory),
            Savings(r.savings_cpu, r.savings_memory),
            Savings(r.shortfall_cpu, r.shortfall_memory),
            r.short_containers,
        ),
        r.last_update,
        r.as_of,
    )
