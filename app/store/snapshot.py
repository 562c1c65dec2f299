"""What the webhook and the updater load: every recommendation, as plain values, in one query.

The webhook's cache (app.webhook.cache) builds its Snapshot from `recommendation_targets` and
app.store.policies.valid_policies; the updater also reads `history_seconds`, how much data each
recommendation rests on.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import select

from app.core.recommend.capping import Recommendation
from app.core.recommend.model import WorkloadKey
from app.core.resources import Resources
from app.models import Recommendation as RecommendationRow
from app.store.session import DbSession

# A workload container's recommendation and the conflicts that exclude it (resource -> owner).
RecommendationTarget = tuple[WorkloadKey, str, Recommendation, Mapping[str, str]]


def recommendation_targets(session: DbSession) -> list[RecommendationTarget]:
    """Every stored recommendation (one query over the columns the webhook needs)."""
    r = RecommendationRow
    rows = session.execute(
        select(
            r.namespace,
            r.kind,
            r.name,
            r.container,
            r.target_cpu,
            r.target_memory,
            r.lower_bound_cpu,
            r.lower_bound_memory,
            r.upper_bound_cpu,
            r.upper_bound_memory,
            r.uncapped_target_cpu,
            r.uncapped_target_memory,
            r.conflicts,
        )
    )
    out: list[RecommendationTarget] = []
    for values in rows:
        ns, kind, name, container, *amounts, conflicts = values
        t_cpu, t_mem, lo_cpu, lo_mem, hi_cpu, hi_mem, u_cpu, u_mem = amounts
        rec = Recommendation(
            Resources(t_cpu, t_mem),
            Resources(lo_cpu, lo_mem),
            Resources(hi_cpu, hi_mem),
            Resources(u_cpu, u_mem),
        )
        out.append((WorkloadKey(ns, kind, name), container, rec, conflicts or {}))
    return out


def history_seconds(session: DbSession) -> dict[tuple[WorkloadKey, str], float]:
    """Per workload container with a recommendation, the seconds between its first and last
    sample (containers without both times are left out)."""
    r = RecommendationRow
    out = {}
    for ns, kind, name, container, first, last in session.execute(
        select(r.namespace, r.kind, r.name, r.container, r.first_sample_at, r.last_sample_at)
    ):
        if first is not None and last is not None:
            out[(WorkloadKey(ns, kind, name), container)] = (last - first).total_seconds()
    return out
