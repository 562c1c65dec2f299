"""Policies (the VerticalPodAutoscaler objects of rightsizer) and which one governs a workload.

Precedence, most specific first: a policy naming the workload as its target (`kind`, `name`),
then a policy of its namespace whose `target.selector` matches the labels of the workload's pod
template, then a policy for its namespace (no target), then a cluster default (namespace `*`)
with a matching selector, then a cluster default without one. Among equals the oldest wins (its
creation time, then the first stored, then the first name), as VPA chooses among the VPAs matching
a pod (`stronger` in vpa_api_util: creation time, then name), so creating a second, conflicting
policy never silently changes what the first one decided.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain

from app.core.recommendation import ContainerPolicy
from app.core.selectors import LabelSelector, template_labels
from app.core.strategy_choice import StrategyChoice
from app.core.update_mode import UpdateMode
from app.core.update_policy import EvictionRequirement, ObservationWindow, StartupBoost
from app.core.workload_key import WorkloadKey

TARGET_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob")
CONTAINER_MODES = ("Auto", "Off")
CONTROLLED_VALUES = ("RequestsAndLimits", "RequestsOnly")
CLUSTER_WIDE = "*"
# How the pods of a policy are placed (app.documents.placement_fields): `default` leaves the pod's
# scheduler alone; `waterLevel` sends new pods to the water-level scheduler (docs/policies.md).
DEFAULT_PLACEMENT, WATER_LEVEL = "default", "waterLevel"
PLACEMENTS = (DEFAULT_PLACEMENT, WATER_LEVEL)


@dataclass(frozen=True)
class Policy:
    name: str
    namespace: str  # or "*" for a cluster default
    target_kind: str | None = None  # a WorkloadKey's kind (`Deployment`, `Rollout.argoproj.io`)
    target_name: str | None = None
    target_selector: LabelSelector | None = None  # instead of kind and name
    update_mode: UpdateMode = UpdateMode.OFF  # a name (`"Recreate"`, `"Auto"`) is read as its mode
    min_replicas: int | None = None
    container_policies: tuple[ContainerPolicy, ...] = field(default_factory=tuple)
    # app.core.update_policy: when the updater may act, and the CPU startup boost
    eviction_requirements: tuple[EvictionRequirement, ...] = ()
    evict_after_oom_seconds: int | None = None  # None: the global quick-OOM setting
    in_place_skip_disruption_budget: bool | None = None  # None: the global setting
    startup_boost: StartupBoost | None = None
    container_boosts: Mapping[str, StartupBoost] = field(default_factory=dict)  # by containerName
    observation_window: ObservationWindow | None = None  # None: the defaults
    deprecations: tuple[str, ...] = ()  # what the document says in a deprecated way
    recommender: StrategyChoice = field(default_factory=StrategyChoice)  # strategies.chosen
    # a DaemonSet's pods sized per node group: the value of this node label (app.core.node_groups)
    node_group_label: str | None = None
    placement: str = DEFAULT_PLACEMENT  # one of PLACEMENTS
    created: float = 0.0  # unix seconds; ties broken by age
    changed: float = 0.0  # unix seconds of its last change (creation or update)

    def __post_init__(self) -> None:
        if not isinstance(self.update_mode, UpdateMode):
            object.__setattr__(self, "update_mode", UpdateMode.of(self.update_mode))

    id: int = 0

    def specificity(self, w: WorkloadKey, labels: Mapping[str, str] | None = None) -> int | None:
        """4: the workload's own policy, 3: its namespace's selecting it, 2: its namespace's,
        1: a cluster default selecting it, 0: the cluster's; None: not its. `labels`: the
        workload's pods' labels (None: unknown, so no selector matches)."""
        if self.namespace not in (CLUSTER_WIDE, w.namespace):
            return None
        rank = 0 if self.namespace == CLUSTER_WIDE else 2
        if self.target_selector is not None:
            selected = labels is not None and self.target_selector.matches(template_labels(labels))
            return rank + 1 if selected else None
        if self.target_kind is None:
            return rank
        if self.namespace == CLUSTER_WIDE:
            return None  # refused by the document's validation: a cluster default names nothing
        return 4 if (self.target_kind, self.target_name) == (w.kind, w.name) else None


def governing_policy(
    policies: Iterable[Policy], w: WorkloadKey, labels: Mapping[str, str] | None = None
) -> Policy | None:
    """The policy of workload `w`, whose pods carry `labels` (for selector policies)."""
    best: tuple[int, float, int, str] | None = None
    chosen = None
    for p in policies:
        s = p.specificity(w, labels)
        if s is None:
            continue
        rank = (-s, p.created, p.id, p.name)
        if best is None or rank < best:
            best, chosen = rank, p
    return chosen


class PolicyIndex:
    """The policies, indexed for `governing`: governing_policy's answer for a workload from the
    only policies that can govern it, its own (by namespace, kind and name), its namespace's
    others (selectors, namespace-wide) and the cluster defaults, instead of a scan of them all.
    VPA's usual pattern, one VerticalPodAutoscaler per workload, makes that scan quadratic: at
    15,000 workloads each with its policy, 14 s for each pass over the workloads a recommender
    run makes (benchmarks/policy_lookup.py). Iterates as the policies it was built from."""

    def __init__(self, policies: Iterable[Policy]) -> None:
        self.policies = tuple(policies)
        self._named: dict[tuple[str, str, str | None], list[Policy]] = {}
        self._rest: dict[str, list[Policy]] = {}  # by namespace, cluster defaults under "*"
        for p in self.policies:
            named = p.target_kind is not None and p.target_selector is None
            if named and p.namespace != CLUSTER_WIDE:
                key = (p.namespace, p.target_kind or "", p.target_name)
                self._named.setdefault(key, []).append(p)
            else:
                self._rest.setdefault(p.namespace, []).append(p)

    def __iter__(self) -> Iterator[Policy]:
        return iter(self.policies)

    def __len__(self) -> int:
        return len(self.policies)

    def governing(self, w: WorkloadKey, labels: Mapping[str, str] | None = None) -> Policy | None:
        """governing_policy(policies, w, labels), from the candidates alone (every other policy
        is of another namespace or names another workload: not `w`'s)."""
        return governing_policy(
            chain(
                self._named.get((w.namespace, w.kind, w.name), ()),
                self._rest.get(w.namespace, ()),
                self._rest.get(CLUSTER_WIDE, ()),
            ),
            w,
            labels,
        )
