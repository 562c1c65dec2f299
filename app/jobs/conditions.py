"""The recommender's conditions (app.core.conditions), gathered from the cluster caches each run
and saved in place of the previous run's (app.store.conditions).

The workloads reported: every workload the model knows, and every workload a policy names as its
target (a target with no pods, or none at all, is reported too: NoPodsMatched, ConfigUnsupported).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime

from app.core.conditions import (
    FETCHING_HISTORY,
    RECOMMENDER_TYPES,
    Condition,
    WorkloadFacts,
    limit_range_notes,
    recommender_conditions,
    target_problem,
)
from app.core.pods import PodView
from app.core.policy import CLUSTER_WIDE, Policy, PolicyIndex
from app.core.recommend.array_model import ArrayModel
from app.core.recommendation import Recommendation
from app.core.sizing.limitrange import LimitRangeItem
from app.core.workload_key import WorkloadKey, sorted_keys
from app.kube.cluster import ClusterView
from app.kube.limitranges import LimitRangeCache
from app.store.conditions import KnownConditions, save_conditions
from app.store.session import DbSession


class RecommenderConditions:
    def __init__(
        self,
        cluster: ClusterView,
        limit_ranges: LimitRangeCache | None,
        low_confidence_seconds: float,
        excluded_namespaces: Collection[str] = (),
    ) -> None:
        self.cluster, self.limit_ranges = cluster, limit_ranges
        self.low_confidence_seconds = low_confidence_seconds
        self.excluded = frozenset(excluded_namespaces)
        # the stored rows of its types, as its saves left them (reset at each leadership term)
        self.known = KnownConditions(RECOMMENDER_TYPES)
        # the owner walk; the recommender gives each run its memo (app.core.owner_memo)
        self.workload_of: Callable[[PodView], WorkloadKey | None] = cluster.workload_of

    def live_pods(self, pods: Iterable[PodView]) -> dict[WorkloadKey, PodView]:
        """One live pod of each workload among `pods` (the one a LimitRange check is made on)."""
        out: dict[WorkloadKey, PodView] = {}
        for pod in pods:
            if not pod.is_live or pod.namespace in self.excluded:
                continue
            w = self.workload_of(pod)
            if w is not None and w not in out:
                out[w] = pod
        return out

    def live_workloads(self) -> set[WorkloadKey]:
        """The workloads with a live pod in the cache."""
        return set(self.live_pods(self.cluster.pods.items()))

    def _targets(self, policies: Iterable[Policy]) -> set[WorkloadKey]:
        return {
            WorkloadKey(p.namespace, p.target_kind, p.target_name)
            for p in policies
            if p.namespace != CLUSTER_WIDE
            and p.target_kind
            and p.target_name
            and p.namespace not in self.excluded
        }

    def _ranges(self, namespace: str) -> Sequence[LimitRangeItem]:
        if self.limit_ranges is None or self.limit_ranges.failing:
            return ()
        return self.limit_ranges(namespace)

    def facts(
        self,
        w: WorkloadKey,
        policy: Policy | None,
        model: ArrayModel,
        recs: Mapping[str, Recommendation],
        pod: PodView | None,
        node_cap: str | None = None,
    ) -> WorkloadFacts:
        history = model.history_seconds(w)
        problem = None
        if policy is not None and (policy.target_kind, policy.target_name) == (w.kind, w.name):
            found = self.cluster.replicas_source(w)  # the cached object, or the Scale
            problem = target_problem(w.kind, w.name, found)
        notes: list[str] = []
        if policy is not None and pod is not None and recs:
            ranges = self._ranges(w.namespace)
            notes = limit_range_notes(pod.wire, recs, policy, ranges)
        return WorkloadFacts(recs, history, pod is not None, problem, False, notes, node_cap)

    def publish(
        self,
        session: DbSession,
        policies: Iterable[Policy],
        model: ArrayModel,
        recommended: Mapping[WorkloadKey, Mapping[str, Recommendation]],
        now: datetime,
        live: Mapping[WorkloadKey, PodView] | None = None,
        capped: Mapping[WorkloadKey, str] | None = None,
    ) -> int:
        """Computes and saves the conditions of every workload; returns the rows changed.
        `live` is `live_pods` of the pods the run read (by default, of the cache now); `capped`
        why the recommendations of a workload were capped to fit a node (app.jobs.node_fit)."""
        if not isinstance(policies, PolicyIndex):
            policies = PolicyIndex(policies)
        pods = live if live is not None else self.live_pods(self.cluster.pods.items())
        workloads = set(model.rows) | set(recommended) | self._targets(policies)
        out: dict[WorkloadKey, list[Condition]] = {}
        for w in sorted_keys(workloads):
            if w.namespace in self.excluded:
                continue
            pod = pods.get(w)
            policy = policies.governing(w, pod.labels if pod is not None else None)
            node_cap = capped.get(w) if capped else None
            facts = self.facts(w, policy, model, recommended.get(w, {}), pod, node_cap)
            out[w] = recommender_conditions(facts, policy, self.low_confidence_seconds)
        return save_conditions(session, RECOMMENDER_TYPES, out, now, self.known)

    def fetching(self, session: DbSession, workloads: Iterable[WorkloadKey], now: datetime) -> None:
        """FetchingHistory on these workloads while Prometheus history is loaded for them (the
        next `publish` takes it off)."""
        holding = Condition(
            FETCHING_HISTORY, "True", "LoadingHistory", "loading usage history from Prometheus"
        )
        save_conditions(session, (FETCHING_HISTORY,), {w: [holding] for w in workloads}, now)
