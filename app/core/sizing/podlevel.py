"""Pod-level resources (`spec.resources`, KEP-2837) of the pods rightsizer sizes (pure).

VPA 1.7 does not size pod-level resources: its admission controller and updater change the
containers only, and its design for them (AEP-7571, phase 1 planned for VPA 1.9) gives a pod-level
policy its own histograms of the pods' summed usage and, in that phase, leaves the containers
alone. rightsizer keeps one history per container and sizes both, so that what users set at pod
level keeps its meaning:

- A container with no request and no limit of its own for a resource the pod sets at pod level
  shares the pod's budget. It is not given a request (that would end the sharing the user asked
  for); its recommendation goes into the pod-level value instead. A container with its own
  request (or a LimitRange default) is sized as any other, within the pod-level values.
- The pod-level request is the sum of what the pod's containers and sidecars need: the
  recommendation target of each container the policy sizes for that resource (within its
  `minAllowed`/`maxAllowed`), else the request it has. Summing per-container targets does not
  give the percentile of the pod's summed usage (AEP-7571 says as much); it gives at least what
  the same containers would be given one by one, which is the conservative side. It is kept
  within a Pod LimitRange's `min` and `max`, and never below the containers' effective requests
  (KEP-753, plain init containers included), which kube-apiserver requires.
- The pod-level limit keeps its ratio to the pod-level request, as a container's does, unless
  the policy's `*` container policy says `RequestsOnly` (then the limit stays and the request is
  kept at or below it); a Pod LimitRange `max` caps it. Containers' limits then stay within it.
- Left alone, with a note: a resource the pod does not set at pod level; one whose sharing
  container has no recommendation (mode Off, not controlled, another controller's resource, no
  data), since nothing then says what that container needs; one no container is sized for.

Amounts are millicores and bytes. Kubernetes resizes pod-level resources in place only with the
InPlacePodLevelResourcesVerticalScaling gate (KEP-5419: alpha in 1.35, on by default from 1.36):
the updater resizes them where the release and the pod's node allow it, else evicts such pods
(app.core.sizing.podlevel_resize, app.core.sizing.plan).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from app.core.pods import INIT
from app.core.policy import Policy
from app.core.recommendation import Recommendation, policy_for_container
from app.core.sizing.limitrange import RESOURCES, LimitRangeItem
from app.core.sizing.podlimits import PodLevel, aggregate
from app.core.sizing.values import Slot, entries

WHOLE_POD = "*"  # the container policy whose controlledValues the pod-level limit follows


@dataclass
class PodLevelPlan:
    """The pod-level values rightsizer gives a pod, per resource, and why."""

    before: PodLevel  # as the pod has them (after kube-apiserver's defaulting)
    wants: dict[str, int] = field(default_factory=dict)  # the sum of the containers' needs
    requests: dict[str, int] = field(default_factory=dict)  # sized values, by resource
    limits: dict[str, int] = field(default_factory=dict)
    shared: dict[str, set[str]] = field(default_factory=dict)  # container -> shared resources
    notes: list[str] = field(default_factory=list)

    def planned(self) -> PodLevel:
        """The pod-level values after sizing, what the containers are sized within."""
        return PodLevel(
            {**self.before.requests, **self.requests},
            {**self.before.limits, **self.limits},
            self.before.unset_is_zero,
        )

    def changes(self) -> tuple[dict[str, int], dict[str, int]]:
        requests = {r: v for r, v in self.requests.items() if self.before.requests.get(r) != v}
        limits = {r: v for r, v in self.limits.items() if self.before.limits.get(r) != v}
        return requests, limits


def shares(slot: Slot, res: str, pod_level: PodLevel) -> bool:
    """The container takes `res` from the pod's budget: the pod sets `res` at pod level and the
    container has no request or limit of its own for it (LimitRange defaults count as its own)."""
    if slot.kind == INIT or (res not in pod_level.requests and res not in pod_level.limits):
        return False
    return slot.before(res) == (None, None)


def container_want(
    slot: Slot,
    res: str,
    recommendations: Mapping[str, Recommendation],
    policy: Policy,
    excluded: Collection[str],
) -> int | None:
    """The request sizing aims at for the container: its target within minAllowed/maxAllowed;
    None when the policy does not size it for `res`."""
    rec = recommendations.get(slot.name)
    cp = policy_for_container(list(policy.container_policies), slot.name)
    if rec is None or cp.mode == "Off" or res not in cp.controlled_resources or res in excluded:
        return None
    want: int = getattr(rec.target, res)
    hi, lo = cp.max_allowed.get(res), cp.min_allowed.get(res)
    if hi is not None:
        want = min(want, hi)
    if lo is not None:
        want = max(want, lo)
    return want


def plan_pod_level(
    slots: Sequence[Slot],
    recommendations: Mapping[str, Recommendation],
    policy: Policy,
    before: PodLevel,
    pod_range: LimitRangeItem | None,
    excluded: Mapping[str, Collection[str]],
) -> PodLevelPlan:
    """The pod-level request and limit of every resource the pod sets at pod level, before its
    containers are sized (they are then sized within them; `settle` finishes the plan)."""
    plan = PodLevelPlan(before)
    for slot in slots:
        for res in RESOURCES:
            if shares(slot, res, before):
                plan.shared.setdefault(slot.name, set()).add(res)
    for res in RESOURCES:
        if res not in before.requests and res not in before.limits:
            continue
        want = _pod_want(plan, slots, res, recommendations, policy, excluded)
        if want is not None:
            plan.wants[res] = want
            _size(plan, res, want, pod_range, controlled_values(policy))
    return plan


def _pod_want(
    plan: PodLevelPlan,
    slots: Sequence[Slot],
    res: str,
    recommendations: Mapping[str, Recommendation],
    policy: Policy,
    excluded: Mapping[str, Collection[str]],
) -> int | None:
    """The sum of what the pod's containers and sidecars need of `res` (None: not known, or no
    container is sized for it, and the pod-level value is left alone)."""
    total, sized = 0, False
    for slot in slots:
        if slot.kind == INIT:
            continue
        want = container_want(slot, res, recommendations, policy, excluded.get(slot.name, ()))
        own, _ = slot.before(res)
        if want is None and res in plan.shared.get(slot.name, ()):
            plan.notes.append(
                f"pod-level {res} left alone: container {slot.name} shares it and has no "
                "recommendation"
            )
            return None
        sized = sized or want is not None
        total += want if want is not None else (own or 0)
    return total if sized and total > 0 else None


def controlled_values(policy: Policy) -> str:
    """`RequestsAndLimits` or `RequestsOnly`: what the pod-level limit follows, the policy's `*`
    container policy."""
    return policy_for_container(list(policy.container_policies), WHOLE_POD).controlled_values


def _size(
    plan: PodLevelPlan, res: str, want: int, pod_range: LimitRangeItem | None, values: str
) -> None:
    request = want
    hi = pod_range.max.get(res) if pod_range else None
    lo = pod_range.min.get(res) if pod_range else None
    if hi is not None and request > hi:
        request = hi
        plan.notes.append(f"pod-level {res} capped to fit max in pod LimitRange")
    if lo is not None and request < lo:
        request = lo
        plan.notes.append(f"pod-level {res} raised to fit min in pod LimitRange")
    limit0 = plan.before.limits.get(res)
    if limit0 is not None and values == "RequestsOnly" and request > limit0:
        request = limit0
        plan.notes.append(f"pod-level {res} capped to its limit (RequestsOnly)")
    plan.requests[res] = request
    _limit(plan, res, pod_range, values)


def _limit(plan: PodLevelPlan, res: str, pod_range: LimitRangeItem | None, values: str) -> None:
    """The pod-level limit for the planned request: its ratio to the request kept (the pod as
    written passed any Pod maxLimitRequestRatio, so the scaled limit does too), within a Pod
    LimitRange max and never below the request."""
    limit0, request0 = plan.before.limits.get(res), plan.before.requests.get(res)
    if limit0 is None or values == "RequestsOnly":
        return
    request = plan.requests[res]
    limit = request if not request0 or request0 == limit0 else limit0 * request // request0
    hi = pod_range.max.get(res) if pod_range else None
    if hi is not None and limit > hi:
        limit = hi
    plan.limits[res] = max(limit, request)


def settle(
    plan: PodLevelPlan, slots: Sequence[Slot], pod_range: LimitRangeItem | None, values: str
) -> None:
    """After the containers were sized: a pod-level request below their effective requests
    (plain init containers can make them larger than the sum) is raised to them, as
    kube-apiserver requires, and its limit follows."""
    for res in list(plan.requests):
        effective = aggregate(entries(slots), "requests", res)
        if effective is not None and effective > plan.requests[res]:
            plan.requests[res] = effective
            plan.notes.append(f"pod-level {res} raised to the containers' effective requests")
            _limit(plan, res, pod_range, values)
