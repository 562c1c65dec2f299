"""Which running pods the updater should replace or resize, and in what order (VPA's updater).

A pod qualifies when a controlled request is outside [lowerBound, upperBound] (or missing); or it
has lived long enough (12h) and its requests differ from the targets by at least 10% in total; or
it was OOM-killed soon (10 min) after starting and its requests would change. Pods that need more
go first, then larger differences. Per owner, at most int(replicas x tolerance) pods are disrupted
per run (one when the tolerance rounds to zero and every replica is running), and owners with
fewer live pods than minReplicas are left alone: a recommendation must never cost availability.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.core.sizing.qos import pod_qos

RESOURCES = ("cpu", "memory")


@dataclass(frozen=True)
class UpdaterSettings:
    min_lifetime_seconds: float = 12 * 3600.0
    min_change: float = 0.1
    quick_oom_seconds: float = 600.0
    eviction_tolerance: float = 0.5
    default_min_replicas: int = 2
    # VPA's --in-place-skip-disruption-budget; a policy's inPlaceSkipDisruptionBudget overrides it
    in_place_skip_disruption_budget: bool = False


@dataclass(frozen=True)
class ContainerView:
    """One controlled container: its current requests and its recommendation (millicores/bytes).

    Only resources the policy controls (and no other controller owns) belong in `target`.
    """

    name: str
    requests: dict[str, int]
    target: dict[str, int]
    lower_bound: dict[str, int] = field(default_factory=dict)
    upper_bound: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, order=True)
class PodPriority:
    outside_range: bool
    scale_up: bool
    resource_diff: float

    def sort_key(self) -> tuple[bool, float]:
        """Ascending sort puts scale-ups first, then the largest differences."""
        return (not self.scale_up, -self.resource_diff)


def pod_priority(containers: list[ContainerView]) -> PodPriority:
    outside = scale_up = False
    requested: dict[str, int] = {}
    recommended: dict[str, int] = {}
    for c in containers:
        for res, target in c.target.items():
            recommended[res] = recommended.get(res, 0) + target
            request = c.requests.get(res)
            if request is None:
                # No request: the container takes whatever is left; treat it as 0 and act.
                scale_up = outside = True
                continue
            requested[res] = requested.get(res, 0) + request
            if target > request:
                scale_up = True
            lo, hi = c.lower_bound.get(res), c.upper_bound.get(res)
            if (lo is not None and request < lo) or (hi is not None and request > hi):
                outside = True
    diff = 0.0
    for res, total_rec in recommended.items():
        total_req = max(float(requested.get(res, 0)), 1.0)
        diff += abs(total_req - total_rec) / total_req
    return PodPriority(outside, scale_up, diff)


def update_reason(
    priority: PodPriority,
    started_at: float | None,
    now: float,
    quick_oom: bool,
    s: UpdaterSettings,
) -> str | None:
    """Why the pod should be updated now, or None to leave it."""
    if quick_oom:
        return "OOM-killed soon after start" if priority.resource_diff > 0 else None
    if priority.outside_range:
        return "request outside the recommended range"
    if started_at is None or now - started_at < s.min_lifetime_seconds:
        return None
    if priority.resource_diff < s.min_change:
        return None
    return f"requests differ from the target by {priority.resource_diff:.0%}"


def is_quick_oom(
    started_at: float | None, finished_at: float | None, reason: str | None, s: UpdaterSettings
) -> bool:
    """The container's last run ended in an OOM kill within quick_oom_seconds of its start."""
    if reason != "OOMKilled" or started_at is None or finished_at is None:
        return False
    return finished_at - started_at < s.quick_oom_seconds


@dataclass
class DisruptionBudget:
    """Per workload (all its ReplicaSets together): which of its pods may be disrupted this run.

    `configured` is the workload's desired replicas, `running` its pods that are Running AND
    Ready now: a pod that is not ready already counts as unavailable, as VPA and
    PodDisruptionBudgets count it. At most int(configured x tolerance) Running pods are
    disrupted per run (one when that rounds to zero and every replica is ready), and a ready
    pod only while at least configured - that number ready pods stay. During a rollout with a
    surge there are more pods than replicas: the cap still holds, whatever the surplus.
    Pending pods serve nobody: replacing them is free and not counted.
    """

    configured: int
    running: int
    tolerance: float = 0.5
    disrupted: int = 0  # Running pods disrupted this run, ready or not
    disrupted_ready: int = 0  # ... of which were ready

    @property
    def allowed(self) -> int:
        return int(self.configured * self.tolerance)

    def can_disrupt(self, pending: bool, ready: bool = True) -> bool:
        if pending:
            return True
        if self.allowed == 0:
            return self.disrupted == 0 and self.running >= self.configured
        if self.disrupted >= self.allowed:
            return False
        if not ready:
            return True  # already unavailable: it costs no availability, only the cap
        return self.running - self.disrupted_ready - 1 >= self.configured - self.allowed

    def record(self, pending: bool, ready: bool = True) -> None:
        if not pending:
            self.disrupted += 1
            if ready:
                self.disrupted_ready += 1

    def release(self, pending: bool, ready: bool = True) -> None:
        """Gives back what `record` took for a disruption that did not happen: the updater
        records each eviction before sending it (app.jobs.evictions) and releases it when the
        API server refuses it (429 from a PodDisruptionBudget, a uid precondition, an error)."""
        if not pending:
            self.disrupted -= 1
            if ready:
                self.disrupted_ready -= 1


class TokenBucket:
    """Global rate limit on disruptions: `rate` per second, at most `burst` at once.

    A rate of 0 (or less) means no limit. `clock` is any monotonic clock in seconds.
    """

    def __init__(self, rate: float, burst: int, clock: Callable[[], float]) -> None:
        self.rate, self.burst, self.clock = rate, max(burst, 1), clock
        self.tokens, self.at = float(self.burst), clock()

    def take(self) -> bool:
        if self.rate <= 0:
            return True
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + max(now - self.at, 0.0) * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


# --- in-place resizes: when to give up and evict ---------------------------------------------

DEFERRED_LIMIT_SECONDS = 300.0  # a resize Deferred this long falls back to eviction
IN_PROGRESS_LIMIT_SECONDS = 3600.0  # ... and one InProgress this long


def resize_state(pending_reason: str | None, in_progress: bool, applied: bool) -> str:
    """What the kubelet says of a resize rightsizer asked for.

    `pending_reason`: the reason of a true PodResizePending condition (Infeasible, Deferred);
    `in_progress`: a true PodResizeInProgress condition; `applied`: the pod's spec already holds
    the requested values (until it does, a pod without conditions is a stale view, not a success).
    Returns "Infeasible", "Deferred", "InProgress", "Requested" or "Done".
    """
    if pending_reason:
        return pending_reason
    if in_progress:
        return "InProgress"
    return "Done" if applied else "Requested"


@dataclass
class ResizeWatch:
    """The resizes rightsizer asked for, and since when each has been in its current state.

    `observe` answers why a resize must fall back to eviction (Infeasible at once, Deferred for
    more than `deferred_limit`, InProgress for more than `in_progress_limit`), or None.
    """

    deferred_limit: float = DEFERRED_LIMIT_SECONDS
    in_progress_limit: float = IN_PROGRESS_LIMIT_SECONDS
    states: dict[str, tuple[str, float]] = field(default_factory=dict)
    details: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __contains__(self, uid: object) -> bool:
        return uid in self.states

    def requested(self, uid: str, now: float, details: dict[str, Any] | None = None) -> None:
        self.states[uid] = ("Requested", now)
        self.details[uid] = dict(details or {})

    def forget(self, uid: str) -> None:
        self.states.pop(uid, None)
        self.details.pop(uid, None)

    def keep_only(self, uids: set[str]) -> None:
        """Pods that no longer exist need no watching."""
        for uid in set(self.states) - uids:
            self.forget(uid)

    def observe(self, uid: str, state: str, now: float) -> str | None:
        if uid not in self.states:
            return None
        if state == "Done":
            self.forget(uid)
            return None
        previous, since = self.states[uid]
        if state != previous:
            self.states[uid] = (state, now)
            since = now
        if state == "Infeasible":
            return state
        if state == "Deferred" and now - since > self.deferred_limit:
            return state
        if state == "InProgress" and now - since > self.in_progress_limit:
            return state
        return None


def changes_qos(
    current: dict[str, dict[str, dict[str, int]]],
    updates: dict[str, dict[str, dict[str, int]]],
    others: Iterable[Mapping[str, Mapping[str, int]]] = (),
    pod_level: Mapping[str, Mapping[str, int]] | None = None,
    pod_level_update: Mapping[str, Mapping[str, int]] | None = None,
) -> tuple[str, str] | None:
    """(old, new) QoS class when applying `updates` would change it, else None.

    `current`: per resizable container (regular and sidecar) {"requests": {...}, "limits":
    {...}} as the pod has them; `updates`: per changed container the new values (merged over the
    current ones); `others`: the containers a resize cannot touch but that count for the class
    (non-sidecar init containers); `pod_level`: the pod's spec.resources, and
    `pod_level_update` the values a pod-level resize changes (merged over them). Kubernetes
    refuses a resize that changes the class (ValidatePodResize), by the rule of
    app.core.sizing.qos.
    """
    fixed = list(others)
    old, new = [], []
    for name, cur in current.items():
        req, lim = dict(cur.get("requests") or {}), dict(cur.get("limits") or {})
        old.append({"requests": req, "limits": lim})
        u = updates.get(name) or {}
        new.append(
            {
                "requests": {**req, **(u.get("requests") or {})},
                "limits": {**lim, **(u.get("limits") or {})},
            }
        )
    level_after = pod_level
    if pod_level_update is not None:
        base = pod_level or {}
        level_after = {
            part: {**(base.get(part) or {}), **(pod_level_update.get(part) or {})}
            for part in ("requests", "limits")
        }
    before, after = pod_qos(old + fixed, pod_level), pod_qos(new + fixed, level_after)
    return (before, after) if before != after else None
