"""How and when a policy lets pods be updated, beyond its mode: the values of VPA 1.7's
`spec.updatePolicy` (`evictionRequirements`, `evictAfterOOMSeconds`) and `spec.startupBoost`
(also per container), plus rightsizer's per-policy `inPlaceSkipDisruptionBudget` and
`observationWindow` (what the updater watches before and after it acts:
app.core.sizing.observation).

Re-derived from kubernetes/autoscaler vertical-pod-autoscaler 1.7
(pkg/apis/autoscaling.k8s.io/v1/types.go: EvictionRequirement, StartupBoost,
GenericStartupBoost). The arithmetic that uses them lives in app.core.sizing.requirements and
app.core.sizing.boost; the documents users write are read by app.documents.update_fields.
"""

from __future__ import annotations

from dataclasses import dataclass

# EvictionChangeRequirement: how the target must relate to the pod's current request.
TARGET_HIGHER = "TargetHigherThanRequests"  # a scale-up
TARGET_LOWER = "TargetLowerThanRequests"  # a scale-down
CHANGE_REQUIREMENTS = (TARGET_HIGHER, TARGET_LOWER)

# StartupBoostType
FACTOR, QUANTITY = "Factor", "Quantity"
BOOST_TYPES = (FACTOR, QUANTITY)


@dataclass(frozen=True)
class EvictionRequirement:
    """One condition a pod must meet to be updated: for at least one of `resources`, the new
    target relates to the current request as `change` says (VPA's EvictionRequirement)."""

    resources: tuple[str, ...]
    change: str  # TARGET_HIGHER or TARGET_LOWER


@dataclass(frozen=True)
class StartupBoost:
    """CPU given on top of the usual request while a pod starts (VPA's GenericStartupBoost for
    cpu): `Factor` multiplies the request, `Quantity` adds millicores to it. It is removed, in
    place, `duration_seconds` after the pod became Ready."""

    type: str  # FACTOR or QUANTITY
    factor: int | None = None  # with FACTOR, at least 1
    quantity: int | None = None  # with QUANTITY, millicores
    duration_seconds: int = 0


DEFAULT_WINDOW_SECONDS = 3600
DEFAULT_MAX_REPLACEMENTS = 3  # per replica, in the window
MAX_WINDOW_SECONDS = 7 * 86400  # the longest window (the updater keeps that much of its audit)


@dataclass(frozen=True)
class ObservationWindow:
    """A policy's `observationWindow` (every field optional there; app.core.sizing.observation
    applies it)."""

    min_history_seconds: int | None = None  # None: the updater's setting
    min_interval_seconds: int = 0
    window_seconds: int = DEFAULT_WINDOW_SECONDS
    max_replacements_per_replica: int = DEFAULT_MAX_REPLACEMENTS

    @property
    def horizon(self) -> int:
        """How far back the updater's changes matter."""
        return max(self.window_seconds, self.min_interval_seconds)
