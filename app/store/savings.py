"""Savings of stored recommendations (app.core.savings over the rows' pod request totals), one
reading for the REST API and the dashboard, so both say the same numbers.

Only what rightsizer would change counts (app.core.scope): `Scoper` finds each workload's policy
and what it leaves alone, and the savings are over the rest."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.core.policy import Policy, PolicyIndex
from app.core.policy_warnings import never_sized_reasons
from app.core.recommend.settings import RecommenderSettings
from app.core.savings import Savings, container_savings, total
from app.core.scope import DEFAULT, basis, in_scope, left_alone, pod_minimum_share
from app.core.strategy_choice import StrategyChoice
from app.core.workload_key import WorkloadKey
from app.store.models import Recommendation
from app.store.policies import InvalidPolicyLog, valid_policies
from app.store.session import DbSession

if TYPE_CHECKING:
    from app.settings import Settings


def over_pods(row: Recommendation, excluded: Mapping[str, str] | None = None) -> Savings | None:
    """What the container frees over the live pods the recommender last saw (None: no pod seen
    since it records them), over the resources not `excluded` (resource -> why)."""
    if (
        row.replicas is None
        or row.requested_cpu_total is None
        or row.requested_memory_total is None
    ):
        return None
    s = container_savings(
        row.requested_cpu_total,
        row.requested_memory_total,
        row.replicas,
        (row.target_cpu, row.target_memory),
    )
    return in_scope(s, excluded or {})


@dataclass(frozen=True)
class WorkloadScope:
    """What rightsizer would change of one workload (app.core.scope)."""

    policy: Policy | None = None
    basis: str = DEFAULT
    excluded: dict[str, dict[str, str]] = field(default_factory=dict)  # container -> res -> why
    pod_minimum: tuple[int, int] = (0, 0)  # a container's share of the pod minimum

    def of(self, container: str) -> dict[str, str]:
        return self.excluded.get(container, {})


class Scoper:
    """Each workload's scope, from the policies, the namespaces never sized (namespace -> why)
    and the recommender's settings (for the pod minimum)."""

    def __init__(
        self,
        policies: PolicyIndex,
        never_sized: Mapping[str, str],
        model: RecommenderSettings,
    ) -> None:
        self.policies, self.never_sized, self.model = policies, never_sized, model
        # a container's share of the pod minimum, by (the policy's strategy, containers): the
        # same for most workloads, and rounding it costs more than the rest of their scope
        self._floors: dict[tuple[StrategyChoice | None, int], tuple[int, int]] = {}

    @classmethod
    def load(
        cls,
        session: DbSession,
        invalid: InvalidPolicyLog,
        never_sized: Mapping[str, str],
        model: RecommenderSettings,
        namespace: str | None = None,
    ) -> Scoper:
        """With `namespace`, for its workloads only (the policies that can govern them)."""
        return cls(PolicyIndex(valid_policies(session, invalid, namespace)), never_sized, model)

    @classmethod
    def as_configured(
        cls,
        session: DbSession,
        invalid: InvalidPolicyLog,
        configured: Settings,
        namespace: str | None = None,
    ) -> Scoper:
        """What rightsizer would change of each workload, as the settings say (the namespaces it
        never sizes, the recommender's pod minimum); with `namespace`, of its workloads only. The
        REST API and the dashboard both scope through this, so they never disagree."""
        cluster = configured.cluster
        return cls.load(
            session,
            invalid,
            never_sized_reasons(cluster.namespace, cluster.excluded_namespaces),
            configured.recommender.model,
            namespace,
        )

    def __call__(self, rows: list[Recommendation]) -> WorkloadScope:
        if not rows:
            return WorkloadScope()
        first = rows[0]
        w = WorkloadKey(first.namespace, first.kind, first.name)
        p = self.policies.governing(w)
        excluded = {}
        for r in rows:
            why = left_alone(w.namespace, r.container, p, r.conflicts or {}, self.never_sized)
            if why:
                excluded[r.container] = why
        key = (p.recommender if p is not None else None, len(rows))  # all it depends on
        floor = self._floors.get(key)
        if floor is None:
            floor = self._floors[key] = pod_minimum_share(p, len(rows), self.model)
        return WorkloadScope(p, basis(p), excluded, floor)


@dataclass(frozen=True)
class WorkloadSavings:
    all_pods: Savings  # over its containers whose pods were seen
    pods: int  # the most pods any of them ran on

    @property
    def per_pod(self) -> Savings:
        return self.all_pods.per_pod(self.pods)


def workload_savings(
    rows: Iterable[Recommendation], scope: WorkloadScope | None = None
) -> WorkloadSavings | None:
    """One workload's containers together, over what `scope` leaves to rightsizer (None: every
    resource); None when no container's pods were seen."""
    scope = scope or WorkloadScope()
    known = [(r, s) for r in rows if (s := over_pods(r, scope.of(r.container))) is not None]
    if not known:
        return None
    return WorkloadSavings(total(s for _, s in known), max(r.replicas or 0 for r, _ in known))
