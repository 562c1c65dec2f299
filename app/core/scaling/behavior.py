"""HorizontalPodAutoscaler-style `behavior` for proportional scalers (HPA v2 semantics).

cluster-proportional-autoscaler applies each new count at once, so draining a node for a few
minutes scales CoreDNS down and straight back up. HPA's answer, re-derived here:

1. Stabilization: remember every raw proposal with its time. Scaling up goes only as high as the
   LOWEST proposal within the scale-up window; scaling down only as low as the HIGHEST proposal
   within the scale-down window. A dip shorter than the window never scales down.
2. Rate policies: each policy bounds the change against the replica count at the start of its
   period (current minus the changes made within the last periodSeconds). Pods adds/removes
   `value` pods; Percent scales by value% (rounded up when growing; shrinking keeps
   floor(start x (1 - P/100))). selectPolicy Max takes the policy allowing the biggest change,
   Min the smallest, Disabled forbids that direction.

Without a behaviour the scaler acts at once (CPA); `{}` means the HPA defaults.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

POLICY_TYPES = ("Pods", "Percent")
SELECT_POLICIES = ("Max", "Min", "Disabled")


@dataclass(frozen=True)
class RatePolicy:
    type: str  # Pods | Percent
    value: int
    period_seconds: int


@dataclass(frozen=True)
class Rules:
    stabilization_window_seconds: int
    select_policy: str = "Max"
    policies: tuple[RatePolicy, ...] = ()


DEFAULT_SCALE_UP = Rules(0, "Max", (RatePolicy("Pods", 4, 15), RatePolicy("Percent", 100, 15)))
DEFAULT_SCALE_DOWN = Rules(300, "Max", (RatePolicy("Percent", 100, 15),))


@dataclass(frozen=True)
class Behavior:
    scale_up: Rules = DEFAULT_SCALE_UP
    scale_down: Rules = DEFAULT_SCALE_DOWN


@dataclass(frozen=True)
class Proposal:
    time: float
    replicas: int


@dataclass(frozen=True)
class ScaleChange:
    time: float
    change: int  # positive: added, negative: removed


@dataclass(frozen=True)
class Decision:
    replicas: int
    reason: str


class BehaviorError(ValueError):
    def __init__(self, errors: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{f}: {m}" for f, m in errors))
        self.errors = errors


# Validation ------------------------------------------------------------------------------------
def _int(
    doc: dict[str, Any], key: str, lo: int, hi: int | None, path: str, errors: list[tuple[str, str]]
) -> int | None:
    value = doc.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        errors.append((f"{path}.{key}", "must be a whole number"))
        return None
    if value < lo or (hi is not None and value > hi):
        errors.append(
            (
                f"{path}.{key}",
                f"must be between {lo} and {hi}" if hi is not None else f"must be >= {lo}",
            )
        )
        return None
    return value


def _rules(doc: Any, default: Rules, path: str, errors: list[tuple[str, str]]) -> Rules:
    if doc is None:
        return default
    if not isinstance(doc, dict):
        errors.append((path, "must be an object"))
        return default
    _unknown(doc, ("stabilizationWindowSeconds", "selectPolicy", "policies"), path, errors)
    window = default.stabilization_window_seconds
    if "stabilizationWindowSeconds" in doc:
        window = _int(doc, "stabilizationWindowSeconds", 0, 3600, path, errors) or 0
    select = doc.get("selectPolicy", default.select_policy)
    if select not in SELECT_POLICIES:
        errors.append(
            (f"{path}.selectPolicy", f"{select!r} is not one of {', '.join(SELECT_POLICIES)}")
        )
    policies = default.policies
    if "policies" in doc:
        raw = doc["policies"]
        if not isinstance(raw, list) or not raw:
            errors.append((f"{path}.policies", "must be a non-empty list"))
        else:
            parsed = []
            for i, p in enumerate(raw):
                pp = f"{path}.policies[{i}]"
                if not isinstance(p, dict):
                    errors.append((pp, "must be an object"))
                    continue
                _unknown(p, ("type", "value", "periodSeconds"), pp, errors)
                if p.get("type") not in POLICY_TYPES:
                    errors.append(
                        (f"{pp}.type", f"{p.get('type')!r} is not one of {', '.join(POLICY_TYPES)}")
                    )
                value = _int(p, "value", 1, None, pp, errors)
                period = _int(p, "periodSeconds", 1, 1800, pp, errors)
                if value is not None and period is not None and p.get("type") in POLICY_TYPES:
                    parsed.append(RatePolicy(p["type"], value, period))
            policies = tuple(parsed)
    return Rules(window, str(select), policies)


def parse_behavior(doc: Any) -> Behavior | None:
    """None (no behaviour: act at once) for None; HPA defaults for {}. Raises BehaviorError."""
    if doc is None:
        return None
    errors: list[tuple[str, str]] = []
    if not isinstance(doc, dict):
        raise BehaviorError([("behavior", "must be an object")])
    _unknown(doc, ("scaleUp", "scaleDown"), "behavior", errors)
    up = _rules(doc.get("scaleUp"), DEFAULT_SCALE_UP, "behavior.scaleUp", errors)
    down = _rules(doc.get("scaleDown"), DEFAULT_SCALE_DOWN, "behavior.scaleDown", errors)
    if errors:
        raise BehaviorError(errors)
    return Behavior(up, down)


# The algorithm -----------------------------------------------------------------------------------
def stabilized(
    current: int, desired: int, proposals: Iterable[Proposal], now: float, b: Behavior
) -> int:
    """`proposals`: earlier raw proposals (the caller adds `desired` to the history afterwards)."""
    up, down = desired, desired
    up_cutoff = now - b.scale_up.stabilization_window_seconds
    down_cutoff = now - b.scale_down.stabilization_window_seconds
    for p in proposals:
        if p.time > up_cutoff:
            up = min(up, p.replicas)
        if p.time > down_cutoff:
            down = max(down, p.replicas)
    return min(max(current, up), down)


def period_start(current: int, period: int, changes: Iterable[ScaleChange], now: float) -> int:
    """The replica count when the period began: current minus what changed since then."""
    return current - sum(c.change for c in changes if c.time > now - period)


def scale_up_limit(current: int, changes: list[ScaleChange], now: float, rules: Rules) -> int:
    if rules.select_policy == "Disabled":
        return current
    pick = min if rules.select_policy == "Min" else max
    result: int | None = None
    for p in rules.policies:
        start = period_start(current, p.period_seconds, changes, now)
        proposed = start + p.value if p.type == "Pods" else math.ceil(start * (1 + p.value / 100))
        result = proposed if result is None else pick(result, proposed)
    return max(result if result is not None else current, current)


def scale_down_limit(current: int, changes: list[ScaleChange], now: float, rules: Rules) -> int:
    if rules.select_policy == "Disabled":
        return current
    pick = max if rules.select_policy == "Min" else min
    result: int | None = None
    for p in rules.policies:
        start = period_start(current, p.period_seconds, changes, now)
        proposed = start - p.value if p.type == "Pods" else math.floor(start * (1 - p.value / 100))
        result = proposed if result is None else pick(result, proposed)
    return min(result if result is not None else current, current)


def _policies(rules: Rules) -> str:
    return ", ".join(
        f"{p.value}{'%' if p.type == 'Percent' else ' pods'} per {p.period_seconds}s"
        for p in rules.policies
    )


def decide(
    current: int,
    desired: int,
    proposals: list[Proposal],
    changes: list[ScaleChange],
    now: float,
    b: Behavior | None,
) -> Decision:
    """The replica count to set now, and why it differs from `desired` if it does."""
    if b is None:
        return Decision(desired, "no behavior: applied at once")
    target = stabilized(current, desired, proposals, now, b)
    why = "as proposed"
    if target > desired:
        why = (
            f"stabilized to {target}: the highest proposal within the "
            f"{b.scale_down.stabilization_window_seconds}s scale-down window "
            "(behavior.scaleDown.stabilizationWindowSeconds)"
        )
    elif target < desired:
        why = (
            f"stabilized to {target}: the lowest proposal within the "
            f"{b.scale_up.stabilization_window_seconds}s scale-up window "
            "(behavior.scaleUp.stabilizationWindowSeconds)"
        )
    if target > current:
        rules, direction = b.scale_up, "up"
        allowed = min(target, scale_up_limit(current, changes, now, rules))
    elif target < current:
        rules, direction = b.scale_down, "down"
        allowed = max(target, scale_down_limit(current, changes, now, rules))
    else:
        return Decision(target, why)
    if allowed == target:
        return Decision(target, why)
    field = f"behavior.scale{direction.title()}"
    if rules.select_policy == "Disabled":
        return Decision(
            current, f"scale-{direction} to {target} blocked: {field}.selectPolicy is Disabled"
        )
    return Decision(
        allowed,
        f"scale-{direction} to {target} limited to {allowed} by {field}.policies "
        f"(selectPolicy {rules.select_policy} of {_policies(rules)}, counted from the replicas "
        "at the start of each period)",
    )


def parse_history(doc: Any, now: float) -> History:
    """History given by hand (the CLI's offline preview): ages in seconds before `now`.

    `{"proposals": [[secondsAgo, replicas], ...], "changes": [[secondsAgo, change], ...]}`;
    `change` is positive for replicas added, negative for removed. Raises BehaviorError.
    """
    errors: list[tuple[str, str]] = []
    if not isinstance(doc, dict):
        raise BehaviorError([("history", "must be an object with proposals and changes")])
    _unknown(doc, ("proposals", "changes"), "history", errors)
    out = History()
    for key, lo in (("proposals", 0), ("changes", None)):
        items = doc.get(key) or []
        if not isinstance(items, list):
            errors.append((f"history.{key}", "must be a list of [secondsAgo, number] pairs"))
            continue
        for i, item in enumerate(items):
            path = f"history.{key}[{i}]"
            if (
                not isinstance(item, list)
                or len(item) != 2
                or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in item)
            ):
                errors.append((path, "must be a [secondsAgo, number] pair"))
            elif item[0] < 0:
                errors.append((f"{path}[0]", "seconds ago must be >= 0"))
            elif not float(item[1]).is_integer() or (lo is not None and item[1] < lo):
                errors.append(
                    (f"{path}[1]", "must be a whole number" + (" >= 0" if lo is not None else ""))
                )
            elif key == "proposals":
                out.proposals.append(Proposal(now - item[0], int(item[1])))
            else:
                out.changes.append(ScaleChange(now - item[0], int(item[1])))
    if errors:
        raise BehaviorError(errors)
    return out


@dataclass
class History:
    """Proposals and changes to keep (the job stores them in the database between runs)."""

    proposals: list[Proposal] = field(default_factory=list)
    changes: list[ScaleChange] = field(default_factory=list)

    @classmethod
    def from_json(cls, doc: dict[str, Any] | None) -> History:
        doc = doc or {}
        return cls(
            [Proposal(float(t), int(r)) for t, r in doc.get("proposals") or []],
            [ScaleChange(float(t), int(c)) for t, c in doc.get("changes") or []],
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "proposals": [[p.time, p.replicas] for p in self.proposals],
            "changes": [[c.time, c.change] for c in self.changes],
        }

    def prune(self, now: float, b: Behavior | None) -> None:
        if b is None:
            self.proposals.clear()
            self.changes.clear()
            return
        keep_proposals = max(
            b.scale_up.stabilization_window_seconds, b.scale_down.stabilization_window_seconds
        )
        periods = [p.period_seconds for r in (b.scale_up, b.scale_down) for p in r.policies] or [0]
        self.proposals = [p for p in self.proposals if p.time > now - keep_proposals]
        self.changes = [c for c in self.changes if c.time > now - max(periods)]


def _unknown(
    doc: dict[str, Any], known: tuple[str, ...], path: str, errors: list[tuple[str, str]]
) -> None:
    """An error for each field of `doc` not `known`, listing the valid ones."""
    valid = ", ".join(sorted(known))
    for extra in sorted(set(doc) - set(known), key=str):
        errors.append((f"{path}.{extra}", f"unknown field; valid fields are {valid}"))
