"""The fleet view's per-row summation as it was before migration 0017 (app.store.fleet's
`figures`, kept verbatim): the oracle the stored totals and the request-time summation are
checked against."""

from __future__ import annotations

from dataclasses import replace
from itertools import groupby

from app.core.savings import Savings, total
from app.core.scope import shortfalls
from app.store.figures import Figures
from app.store.models import Recommendation as RecommendationRow
from app.store.savings import Scoper, over_pods


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
    short = [
        f
        for f in shortfalls(s, (r.target_cpu, r.target_memory), pod_minimum)
        if not f.at_pod_minimum
    ]
    return Savings(
        sum(f.lacking for f in short if f.resource == "cpu"),
        sum(f.lacking for f in short if f.resource == "memory"),
    )
