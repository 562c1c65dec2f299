"""A policy's `evictionRequirements`: whether a pod that qualifies for an update may be changed.

Re-derived from kubernetes/autoscaler vertical-pod-autoscaler 1.7
pkg/updater/priority/scaling_direction_pod_eviction_admission.go (Admit, admitContainer,
checkEvictionRequirementsForContainer, checkChangeRequirement), which VPA applies to the pods of
both evictions and in-place updates (GetSortedPods): a pod is admitted when there are no
requirements, or when for at least one of its sized containers either a CPU or memory request is
missing or every requirement holds; a requirement holds when at least one of its resources
changes as it says (TargetHigherThanRequests: the target is above the request; ...Lower...: below).

The target here is what the updater would set (after the policy's and the LimitRanges' caps, as
VPA compares with its capped, processed recommendation). Only the resources the patch controls
count: VPA's recommendation leaves out a resource outside controlledResources and so compares it
as 0 ("lower"), which would let a memory-only policy pass a cpu scale-down requirement.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from app.core.pods import ContainerResources
from app.core.sizing.priority import ContainerView
from app.core.update_policy import TARGET_HIGHER, TARGET_LOWER, EvictionRequirement


def changes(request: int | None, target: int | None, change: str) -> bool:
    """checkChangeRequirement, for one resource; a resource without both values never changes."""
    if request is None or target is None:
        return False
    if change == TARGET_HIGHER:
        return target > request
    if change == TARGET_LOWER:
        return target < request
    return False


def _holds(view: ContainerView, requirements: Iterable[EvictionRequirement]) -> bool:
    return all(
        any(changes(view.requests.get(r), view.target.get(r), req.change) for r in req.resources)
        for req in requirements
    )


def admits(
    requirements: Sequence[EvictionRequirement],
    views: Sequence[ContainerView],
    resources: Mapping[str, ContainerResources],
) -> bool:
    """The pod may be updated: `views` are its sized containers (requests and the targets the
    update would set), `resources` every container's requests as the pod has them."""
    if not requirements:
        return True
    for view in views:
        current = resources.get(view.name)
        have = current.requests() if current is not None else {}
        if "cpu" not in have or "memory" not in have:
            return True
        if _holds(view, requirements):
            return True
    return False
