"""What the webhook and the updater load: every policy and recommendation, as plain values.

`load_snapshot` reads them (three queries: app.store.policies.valid_policies,
`recommendation_targets` and app.store.node_groups.node_group_targets, the recommendations of
DaemonSets per node group) into an immutable `Snapshot`, the one the webhook's cache
(app.webhook.cache) serves from and the updater plans with; the updater also reads
`history_seconds`, how much data each recommendation rests on. `carry_forward` keeps the objects
of a reloaded snapshot that did not change, so caches keyed by their identity keep hitting.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import chain
from typing import TypeVar

from sqlalchemy import select

from app.core.node_groups import NodeGroupRecommendations, grouping_label
from app.core.policy import Policy, PolicyIndex
from app.core.recommend.capping import Recommendation
from app.core.recommend.model import WorkloadKey
from app.core.resources import Resources
from app.models import Recommendation as RecommendationRow
from app.store.node_groups import node_group_targets
from app.store.policies import InvalidPolicyLog, valid_policies
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


@dataclass(frozen=True)
class Snapshot:
    """Everything the webhook knows, as of `loaded_at` (time.monotonic())."""

    policies: Mapping[str, tuple[Policy, ...]]  # namespace (or "*") -> its policies
    recommendations: Mapping[WorkloadKey, Mapping[str, Recommendation]]
    excluded: Mapping[WorkloadKey, Mapping[str, frozenset[str]]]  # owned by another controller
    loaded_at: float
    counts: Mapping[str, int] = field(default_factory=dict)
    # grouped DaemonSets: their recommendations per node group (app.store.node_groups)
    node_groups: Mapping[WorkloadKey, NodeGroupRecommendations] = field(default_factory=dict)
    # the policies indexed by what they govern: a namespace of thousands of policies, one per
    # workload, is not scanned for each review (app.core.policy.PolicyIndex)
    index: PolicyIndex = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", PolicyIndex(chain.from_iterable(self.policies.values())))

    def policy_for(self, w: WorkloadKey, labels: Mapping[str, str] | None = None) -> Policy | None:
        """The policy of `w`, whose pods carry `labels` (selector policies need them)."""
        return self.index.governing(w, labels)

    def node_groups_of(self, w: WorkloadKey, policy: Policy) -> NodeGroupRecommendations | None:
        """`w`'s recommendations per node group, when its policy groups it by their label."""
        groups = self.node_groups.get(w)
        if groups is None or grouping_label(policy, w) != groups.label:
            return None
        return groups


def build_snapshot(
    policies: Iterable[Policy],
    recommendations: Iterable[tuple[WorkloadKey, str, Recommendation, Iterable[str]]],
    loaded_at: float,
    node_groups: Mapping[WorkloadKey, NodeGroupRecommendations] | None = None,
) -> Snapshot:
    by_ns: dict[str, list[Policy]] = {}
    n_policies = n_recs = 0
    for p in policies:
        by_ns.setdefault(p.namespace, []).append(p)
        n_policies += 1
    recs: dict[WorkloadKey, dict[str, Recommendation]] = {}
    excluded: dict[WorkloadKey, dict[str, frozenset[str]]] = {}
    for w, container, rec, conflicts in recommendations:
        recs.setdefault(w, {})[container] = rec
        if conflicts := frozenset(conflicts):
            excluded.setdefault(w, {})[container] = conflicts
        n_recs += 1
    return Snapshot(
        {ns: tuple(ps) for ns, ps in by_ns.items()},
        recs,
        excluded,
        loaded_at,
        {"policies": n_policies, "recommendations": n_recs},
        {w: g.merged(recs.get(w, {})) for w, g in (node_groups or {}).items()},
    )


K = TypeVar("K")
V = TypeVar("V")


def _kept(previous: Mapping[K, V], new: Mapping[K, V]) -> dict[K, V]:
    out: dict[K, V] = {}
    for k, v in new.items():
        old = previous.get(k)
        out[k] = old if old is not None and old == v else v
    return out


def _kept_policies(
    previous: Mapping[str, tuple[Policy, ...]], new: Mapping[str, tuple[Policy, ...]]
) -> dict[str, tuple[Policy, ...]]:
    out = {}
    for ns, policies in new.items():
        old = previous.get(ns, ())
        if old == policies:
            out[ns] = old
            continue
        by_id = {p.id: p for p in old}
        out[ns] = tuple(q if (q := by_id.get(p.id)) is not None and q == p else p for p in policies)
    return out


def carry_forward(previous: Snapshot, new: Snapshot) -> Snapshot:
    """`new`, with every policy, workload's recommendations, exclusions and node groups equal to
    `previous`'s replaced by `previous`'s object. The patch cache (app.core.sizing.patch_cache)
    keys these by identity, so a reload every few seconds that builds new objects for the same
    values would make the next review of every pod shape miss it; carried forward, only what
    changed misses. Values are equal, so every answer is the same as from `new` itself."""
    return Snapshot(
        _kept_policies(previous.policies, new.policies),
        _kept(previous.recommendations, new.recommendations),
        _kept(previous.excluded, new.excluded),
        new.loaded_at,
        new.counts,
        _kept(previous.node_groups, new.node_groups),
    )


def load_snapshot(
    session: DbSession,
    clock: Callable[[], float] = time.monotonic,
    invalid: InvalidPolicyLog | None = None,
) -> Snapshot:
    """Reads all policies and recommendations (three queries: node groups too)."""
    policies = valid_policies(session, invalid or InvalidPolicyLog("webhook"))
    recs = recommendation_targets(session)
    return build_snapshot(policies, recs, clock(), node_group_targets(session))
