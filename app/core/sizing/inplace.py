"""In-place updates beyond InPlaceOrRecreate, no I/O: the `InPlace` mode's infeasible attempts,
and which resizes may skip the disruption budget.

Re-derived from kubernetes/autoscaler vertical-pod-autoscaler 1.7:
- pkg/updater/logic/updater.go (recordInfeasibleAttempt, cleanupStaleInfeasibleAttempts) and
  pkg/updater/priority/update_priority_calculator.go (hasLowerResourceRecommendation): in
  `InPlace` mode a resize found infeasible is remembered per pod, and the pod is tried again only
  when the new values ask for less of at least one resource of one container than the attempt.
- pkg/updater/restriction/pods_inplace_restriction.go (CanInPlaceUpdate) and
  pods_restriction_factory.go (GetCreatorMaps), with pkg/updater/utils/pod.go
  (IsNonDisruptiveResize): with --in-place-skip-disruption-budget, the in-place modes resize a
  workload below minReplicas, and a pod none of whose containers restarts on resize without the
  disruption budget; evictions still respect both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from app.core.policy import Policy
from app.core.sizing.priority import UpdaterSettings

Requests = Mapping[str, Mapping[str, int]]  # container -> resource -> amount


def skips_budget(policy: Policy, settings: UpdaterSettings) -> bool:
    """In-place resizes of this policy's pods may skip the disruption budget and minReplicas
    (when they restart nothing): the policy's inPlaceSkipDisruptionBudget, else the setting."""
    if not policy.update_mode.resizes_in_place:
        return False
    own = policy.in_place_skip_disruption_budget
    return settings.in_place_skip_disruption_budget if own is None else own


def asks_for_less(attempt: Requests, wanted: Requests) -> bool:
    """Some container asks for less of some resource than in the attempt."""
    for name, values in wanted.items():
        tried = attempt.get(name, {})
        if any(r in tried and v < tried[r] for r, v in values.items()):
            return True
    return False


@dataclass
class InfeasibleAttempts:
    """Per pod uid, the requests of the last resize found infeasible (refused by the API server,
    known to be refused, or reported Infeasible by the kubelet)."""

    attempts: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)  # why each was infeasible
    # the condition reason of each: Infeasible, or PodLevelResizeUnsupported (KEP-5419)
    kinds: dict[str, str] = field(default_factory=dict)

    def record(self, uid: str, requests: Requests, why: str = "", kind: str = "Infeasible") -> None:
        self.attempts[uid] = {n: dict(v) for n, v in requests.items()}
        self.reasons[uid] = why
        self.kinds[uid] = kind

    def blocks(self, uid: str, wanted: Requests) -> bool:
        """True while the pod's new values ask for nothing less than the infeasible attempt;
        asking for less clears the attempt (the pod is tried again)."""
        attempt = self.attempts.get(uid)
        if attempt is None:
            return False
        if asks_for_less(attempt, wanted):
            self.forget(uid)
            return False
        return True

    def forget(self, uid: str) -> None:
        self.attempts.pop(uid, None)
        self.reasons.pop(uid, None)
        self.kinds.pop(uid, None)

    def keep_only(self, uids: Iterable[str]) -> None:
        """Pods that no longer exist are forgotten."""
        live = set(uids)
        for uid in set(self.attempts) - live:
            self.forget(uid)
