"""One cluster's figures for the fleet view, summed from its recommendation rows: its
workloads, savings and risk, as its own overview shows them (app.store.savings). The fleet view
(app.store.fleet) reads them from each cluster's stored totals (app.store.cluster_totals), which
its leader sums with `figures` after a recommender run, at most every 5 minutes
(app.jobs.cluster_totals).

Savings are over the real pods of each workload, over what rightsizer would change; the risk is
the shortfall of the containers whose pods ask for less than recommended (not those only raised
to the pod minimum).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from itertools import groupby

from app.core.savings import Savings
from app.core.scope import shortfalls
from app.store.models import Recommendation as RecommendationRow
from app.store.savings import Scoper, over_pods
from app.store.session import to_unix


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


def figures(rows: list[RecommendationRow], scoper: Scoper) -> Figures:
    """One cluster's figures from its recommendation rows (sorted by workload): per workload,
    its containers whose pods were seen (over_pods), their requests, savings and what the short
    ones lack; added up in plain integers (a leader sums every row of its cluster each run)."""
    workloads = containers = seen_workloads = pods = short_containers = 0
    requested_cpu = requested_memory = saved_cpu = saved_memory = short_cpu = short_memory = 0
    for _, group in groupby(rows, key=lambda r: (r.namespace, r.kind, r.name)):
        members = list(group)
        scope = scoper(members)
        workloads += 1
        containers += len(members)
        seen = [(r, s) for r in members if (s := over_pods(r, scope.of(r.container))) is not None]
        if not seen:
            continue
        seen_workloads += 1
        pods += max(r.replicas or 0 for r, _ in seen)
        short: dict[str, Savings] = {}
        for r, s in seen:
            requested_cpu += r.requested_cpu_total or 0
            requested_memory += r.requested_memory_total or 0
            saved_cpu += s.cpu
            saved_memory += s.memory
            if s.cpu < 0 or s.memory < 0:  # else nothing lacking
                lacking = _lacking(s, r, scope.pod_minimum)
                if lacking != Savings():
                    short[r.container] = lacking
        short_containers += len(short)
        short_cpu += sum(x.cpu for x in short.values())
        short_memory += sum(x.memory for x in short.values())
    return Figures(
        workloads,
        containers,
        seen_workloads,
        pods,
        Savings(requested_cpu, requested_memory),
        Savings(requested_cpu - saved_cpu, requested_memory - saved_memory),
        Savings(saved_cpu, saved_memory),
        Savings(short_cpu, short_memory),
        short_containers,
    )


def newest(rows: list[RecommendationRow]) -> datetime | None:
    """The newest of the rows' updates (None: no row)."""
    return max((r.updated_at for r in rows), key=lambda t: to_unix(t) or 0.0, default=None)


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
