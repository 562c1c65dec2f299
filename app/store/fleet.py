"""The fleet at a glance: per cluster of the database, its workloads, savings and risk, and the
totals across clusters; one reading for the REST API (GET /api/v1/fleet), the CLI and the
dashboard's fleet page, so all say the same numbers.

Each cluster's numbers are the ones its own overview shows (app.store.savings): savings over the
real pods of each workload, over what rightsizer would change; its risk is the shortfall of the
containers whose pods ask for less than recommended (not those only raised to the pod minimum).
The totals add up only quantities that mean the same in every cluster: counts (workloads,
containers, pods), millicores and bytes. Prices are not summed here (a viewer multiplies).
What rightsizer would change is scoped by the policies governing each cluster, and by the
viewing process's never-sized namespaces and pod minimum (the same in every cluster installed
from the same values).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from itertools import groupby

from sqlalchemy import func, select

from app.core.savings import Savings, total
from app.core.scope import shortfalls
from app.store.clusters import clusters, own_cluster_key, viewing
from app.store.models import Cluster
from app.store.models import Recommendation as RecommendationRow
from app.store.recommendations import find_recommendations
from app.store.savings import Scoper, over_pods
from app.store.session import DbSession, to_unix


@dataclass(frozen=True)
class Figures:
    """What can be added up across clusters (millicores and bytes, counts)."""

    workloads: int = 0
    containers: int = 0
    seen_workloads: int = 0  # workloads whose pods the recommender saw (savings are over them)
    pods: int = 0  # of those workloads
    requested: Savings = field(default_factory=Savings)  # their pods' requests together
    recommended: Savings = field(default_factory=Savings)  # ... with the recommendations
    savings: Savings = field(default_factory=Savings)  # requested - recommended
    shortfall: Savings = field(default_factory=Savings)  # what short containers lack (>= 0)
    short_containers: int = 0

    def __add__(self, o: Figures) -> Figures:
        return Figures(
            self.workloads + o.workloads,
            self.containers + o.containers,
            self.seen_workloads + o.seen_workloads,
            self.pods + o.pods,
            self.requested + o.requested,
            self.recommended + o.recommended,
            self.savings + o.savings,
            self.shortfall + o.shortfall,
            self.short_containers + o.short_containers,
        )


@dataclass(frozen=True)
class ClusterSummary:
    key: int
    uid: str | None  # None: not claimed yet (a single-cluster database moved by migration 0013)
    name: str
    own: bool  # the serving process's cluster
    figures: Figures
    last_update: datetime | None  # the newest recommendation row written


@dataclass(frozen=True)
class Fleet:
    clusters: list[ClusterSummary]

    @property
    def totals(self) -> Figures:
        return sum((c.figures for c in self.clusters), Figures())

    @property
    def last_update(self) -> datetime | None:
        known = [c.last_update for c in self.clusters if c.last_update is not None]
        return max(known, key=_aware) if known else None


def _aware(d: datetime) -> float:
    return to_unix(d) or 0.0


def figures(rows: list[RecommendationRow], scoper: Scoper) -> Figures:
    """One cluster's figures from its recommendation rows (sorted by workload)."""
    out = Figures()
    for _, group in groupby(rows, key=lambda r: (r.namespace, r.kind, r.name)):
        members = list(group)
        scope = scoper(members)
        seen = [(r, s) for r in members if (s := over_pods(r, scope.of(r.container))) is not None]
        one = Figures(workloads=1, containers=len(members))
        if seen:
            requested = total(
                Savings(r.requested_cpu_total or 0, r.requested_memory_total or 0) for r, _ in seen
            )
            saved = total(s for _, s in seen)
            short = {
                r.container: lacking
                for r, s in seen
                if (lacking := _lacking(s, r, scope.pod_minimum)) != Savings()
            }
            one = replace(
                one,
                seen_workloads=1,
                pods=max(r.replicas or 0 for r, _ in seen),
                requested=requested,
                recommended=Savings(requested.cpu - saved.cpu, requested.memory - saved.memory),
                savings=saved,
                shortfall=total(short.values()),
                short_containers=len(short),
            )
        out = out + one
    return out


def _lacking(s: Savings, r: RecommendationRow, pod_minimum: tuple[int, int]) -> Savings:
    """What one container's pods lack together (app.core.scope.shortfalls), not counting a
    shortfall only because its recommendation is the pod minimum."""
    short = [
        f
        for f in shortfalls(s, (r.target_cpu, r.target_memory), pod_minimum)
        if not f.at_pod_minimum
    ]
    return Savings(
        sum(f.lacking for f in short if f.resource == "cpu"),
        sum(f.lacking for f in short if f.resource == "memory"),
    )


def _last_updates(session: DbSession) -> dict[int, datetime]:
    R = RecommendationRow
    q = select(R.cluster_id, func.max(R.updated_at)).group_by(R.cluster_id)
    return {key: t for key, t in session.execute(q) if t is not None}


def fleet(session: DbSession, scoper: Callable[[], Scoper]) -> Fleet:
    """Every cluster of the database with its figures; `scoper` builds the Scoper of the
    cluster being read (called once per cluster, while it is viewed)."""
    own = own_cluster_key(session)
    last = _last_updates(session)
    out = []
    for c in clusters(session):
        with viewing(c.id):
            rows = find_recommendations(session)
            numbers = figures(rows, scoper())
        out.append(_summary(c, c.id == own, numbers, last.get(c.id)))
    return Fleet(out)


def _summary(c: Cluster, own: bool, numbers: Figures, last: datetime | None) -> ClusterSummary:
    return ClusterSummary(c.id, c.uid, c.name, own, numbers, last)
