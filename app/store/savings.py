"""Savings of stored recommendations (app.core.savings over the rows' pod request totals), one
reading for the REST API and the dashboard, so both say the same numbers."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from app.core.savings import Savings, container_savings, total
from app.models import Recommendation


def over_pods(row: Recommendation) -> Savings | None:
    """What the container frees over the live pods the recommender last saw (None: no pod seen
    since it records them)."""
    if (
        row.replicas is None
        or row.requested_cpu_total is None
        or row.requested_memory_total is None
    ):
        return None
    return container_savings(
        row.requested_cpu_total,
        row.requested_memory_total,
        row.replicas,
        (row.target_cpu, row.target_memory),
    )


@dataclass(frozen=True)
class WorkloadSavings:
    all_pods: Savings  # over its containers whose pods were seen
    pods: int  # the most pods any of them ran on

    @property
    def per_pod(self) -> Savings:
        return self.all_pods.per_pod(self.pods)


def workload_savings(rows: Iterable[Recommendation]) -> WorkloadSavings | None:
    """One workload's containers together; None when no container's pods were seen."""
    known = [(r, s) for r in rows if (s := over_pods(r)) is not None]
    if not known:
        return None
    return WorkloadSavings(total(s for _, s in known), max(r.replicas or 0 for r, _ in known))
