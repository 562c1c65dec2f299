"""What the webhook and the updater load: every policy and recommendation, as plain values.

`load_snapshot` reads them (four queries: app.store.policies.valid_policies, the policies that
may govern this cluster and its row, `recommendation_targets` and
app.store.node_groups.node_group_targets, the recommendations of DaemonSets per node group)
into an immutable `Snapshot`, the one the webhook's cache (app.webhook.cache) serves from and
the updater plans with; the updater also reads
`history_seconds`, how much data each recommendation rests on. `carry_forward` keeps the objects
of a reloaded snapshot that did not change, so caches keyed by their identity keep hitting.

A `RowMemo` given to `load_snapshot` keeps what the previous load built from each recommendation
row, by the row's values: a reload builds objects only for the rows that changed. Each webhook
process reloads every few seconds; at 15,000 rows a reload built ~100,000 objects that outlive
the reload (the new snapshot's), which made the cyclic collector run full collections on every
reload: 0.57-0.68 s of CPU per reload on a 2-core machine, half of it in the collector. With the
memo only the rows themselves are made, and die young: 0.13-0.19 s (benchmarks/snapshot_reload.py).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import chain
from typing import TypeVar

from sqlalchemy import Text, cast, select

from app.core.node_groups import NodeGroupRecommendations, grouping_label
from app.core.policy import Policy, PolicyIndex
from app.core.recommendation import Recommendation
from app.core.resources import Resources
from app.core.workload_key import WorkloadKey
from app.store.clusters import cluster_key
from app.store.models import Recommendation as RecommendationRow
from app.store.node_groups import node_group_targets
from app.store.policies import InvalidPolicyLog, valid_policies
from app.store.session import DbSession

# A workload container's recommendation and the conflicts that exclude it (resource -> owner).
RecommendationTarget = tuple[WorkloadKey, str, Recommendation, Mapping[str, str]]


# A recommendation row's values as read: the conflicts as their JSON text (hashable, and decoded
# only when the row is new to a RowMemo).
RowValues = tuple[str, str, str, str, int, int, int, int, int, int, int, int, str | None]


class RowMemo:
    """The targets built from the previous load's rows, by each row's values (see the module
    docstring). Only the rows of the last load are kept."""

    def __init__(self) -> None:
        self._built: dict[RowValues, RecommendationTarget] = {}
        self.built = 0  # targets built from rows new or changed since the previous load

    def targets(self, rows: Iterable[RowValues]) -> list[RecommendationTarget]:
        built, fresh, out = self._built, {}, []
        for values in rows:
            target = built.get(values)
            if target is None:
                target = _target(values)
                self.built += 1
            fresh[values] = target
            out.append(target)
        self._built = fresh
        return out


def _target(values: RowValues) -> RecommendationTarget:
    ns, kind, name, container, *amounts, conflicts = values
    t_cpu, t_mem, lo_cpu, lo_mem, hi_cpu, hi_mem, u_cpu, u_mem = amounts
    rec = Recommendation(
        Resources(t_cpu, t_mem),
        Resources(lo_cpu, lo_mem),
        Resources(hi_cpu, hi_mem),
        Resources(u_cpu, u_mem),
    )
    owners = json.loads(conflicts) if conflicts else None  # SQL NULL, or JSON null
    return WorkloadKey(ns, kind, name), container, rec, owners or {}


def recommendation_targets(
    session: DbSession, memo: RowMemo | None = None
) -> list[RecommendationTarget]:
    """Every stored recommendation (one query over the columns the webhook needs); with `memo`,
    the objects of the rows its previous load read are reused."""
    r = RecommendationRow
    # Core, not the ORM's execute (its row loading was a fifth of a reload), as plain tuples
    # (a Row's equality, which the memo's lookups call, is Python code in SQLAlchemy)
    rows = session.connection().execute(
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
            cast(r.conflicts, Text),  # the JSON text: PostgreSQL's driver would decode it
        ).where(r.cluster_id == cluster_key(session))
    )
    return (memo or RowMemo()).targets(map(tuple, rows.all()))


def history_seconds(session: DbSession) -> dict[tuple[WorkloadKey, str], float]:
    """Per workload container with a recommendation, the seconds between its first and last
    sample (containers without both times are left out)."""
    r = RecommendationRow
    out = {}
    for ns, kind, name, container, first, last in session.execute(
        select(r.namespace, r.kind, r.name, r.container, r.first_sample_at, r.last_sample_at).where(
            r.cluster_id == cluster_key(session)
        )
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
    memo: RowMemo | None = None,
) -> Snapshot:
    """Reads all policies and recommendations (three queries: node groups too); `memo`: the
    caller's RowMemo, kept from one load to the next."""
    policies = valid_policies(session, invalid or InvalidPolicyLog("webhook"))
    recs = recommendation_targets(session, memo)
    return build_snapshot(policies, recs, clock(), node_group_targets(session))
