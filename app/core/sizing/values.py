"""Requests and limits for the sized containers of one pod, within what kube-apiserver accepts.

Pure arithmetic behind `app.core.sizing.patch` (which reads the pod and writes the JSON Patch): one
container's values from its wanted request (`resize`), then the pod as a whole (`fit_pod`), with
the rules of `app.core.sizing.podlimits`.

One container, one resource (`resize`): the Container LimitRange `max` (and the pod-level limit,
when the pod has one) bounds the limit, so with `RequestsAndLimits` the request is capped where its
proportional limit reaches it (VPA's `GetBoundaryRequest`); the `min` raises the request; with
`RequestsOnly` the request stays at or below the limit and, under a `maxLimitRequestRatio`, at or
above limit / ratio (`min_request_for`, rounded as LimitRanger compares); with `RequestsAndLimits`
the limit keeps its ratio to the request, and where a cap broke that ratio past the LimitRange's
the request is raised to fit it.

The pod (`fit_pod`): sized values are scaled down together, in proportion, until the pod's effective
requests and limits (the KEP-753 aggregate, plain init containers included) fit a Pod LimitRange
`max` and the pod-level request (VPA's `applyPodLimitRange` does the same for a Pod `max`; a
container whose share rounds to nothing is left as it is). They are scaled up together, in
proportion and rounded up, until the aggregate reaches a Pod `min` (as VPA does) or the pod's
requests keep its limits within a Pod `maxLimitRequestRatio`. Whatever still does not fit is left
to `podlimits.violations`, and the pod to the user (see `app.core.sizing.patch`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from app.core.pods import CONTAINER
from app.core.resources import MAX_AMOUNT
from app.core.sizing.limitrange import LimitRangeItem
from app.core.sizing.podlimits import (
    Entry,
    PodLevel,
    aggregate,
    min_request_for,
    ratio_holds,
    terms,
)

ROUNDS = 32  # fitting passes at most; each one moves every sized value


@dataclass
class Slot:
    """A container of the pod, with its values before (as written) and after sizing."""

    list_name: str  # "containers" or "initContainers"
    index: int
    name: str
    kind: str  # podlimits.CONTAINER, SIDECAR or INIT (never sized)
    resources: Any
    requests: dict[str, int]  # as the pod has them
    limits: dict[str, int]
    default_requests: dict[str, int] = field(default_factory=dict)  # LimitRange defaults
    default_limits: dict[str, int] = field(default_factory=dict)
    target: dict[str, int] = field(default_factory=dict)
    new_requests: dict[str, int] = field(default_factory=dict)
    new_limits: dict[str, int] = field(default_factory=dict)
    scale_limit: bool = True  # controlledValues RequestsAndLimits
    notes: list[str] = field(default_factory=list)
    record: dict[str, Any] | None = None  # kept as is from the previous pass

    @property
    def path(self) -> str:
        return f"/spec/{self.list_name}/{self.index}"

    def before(self, res: str) -> tuple[int | None, int | None]:
        """Request and limit as LimitRanger leaves them: the pod's, else the namespace default."""
        req = self.requests.get(res, self.default_requests.get(res))
        lim = self.limits.get(res, self.default_limits.get(res))
        return req, lim

    def final(self, res: str) -> tuple[int | None, int | None]:
        req, lim = self.before(res)
        return self.new_requests.get(res, req), self.new_limits.get(res, lim)

    def changes(self) -> tuple[dict[str, int], dict[str, int]]:
        reqs = {r: v for r, v in self.new_requests.items() if self.requests.get(r) != v}
        lims = {r: v for r, v in self.new_limits.items() if self.limits.get(r) != v}
        return reqs, lims

    def leave(self, res: str, why: str) -> None:
        self.new_requests.pop(res, None)
        self.new_limits.pop(res, None)
        self.notes.append(f"{res} left alone: {why}")


@dataclass(frozen=True)
class Bounds:
    """What bounds one resource of every container: Container LimitRange and pod-level limit."""

    lo: int | None = None
    hi: int | None = None
    ratio: Fraction | None = None
    pod_limit: int | None = None

    @property
    def limit_cap(self) -> int | None:
        caps = [c for c in (self.hi, self.pod_limit) if c is not None]
        return min(caps) if caps else None


def resize(slot: Slot, res: str, want: int, b: Bounds) -> None:
    """Sets slot's new request (and limit) for `res` from the wanted request."""
    req0, lim0 = slot.before(res)
    if lim0 == 0:
        slot.leave(res, "its limit is 0")
        return
    scale = slot.scale_limit and bool(lim0)
    cap = b.limit_cap
    request, at_max = want, False
    if scale and cap is not None:
        # With the ratio kept, the limit reaches the cap before the request does.
        assert lim0 is not None
        bound = cap if not req0 or req0 == lim0 else req0 * cap // lim0
        if request > bound:
            request, at_max = bound, True
            slot.notes.append(f"{res} capped to fit max in container LimitRange")
    elif b.hi is not None and request > b.hi:
        request = b.hi
        slot.notes.append(f"{res} capped to fit max in container LimitRange")
    if b.lo is not None and request < b.lo:
        request = b.lo
        slot.notes.append(f"{res} raised to fit min in container LimitRange")
    limit: int | None = None
    if not scale:
        if lim0 is not None and request > lim0:
            request = lim0
            slot.notes.append(f"{res} capped to its limit (RequestsOnly)")
        if (
            lim0
            and b.ratio is not None
            and request < (floor := min_request_for(lim0, b.ratio, res))
        ):
            request = min(floor, lim0)
            slot.notes.append(f"{res} raised to keep its limit within maxLimitRequestRatio")
    else:
        assert lim0 is not None
        # Kubernetes treats a missing request as equal to the limit: they stay equal.
        limit = request if not req0 or req0 == lim0 else min(lim0 * request // req0, MAX_AMOUNT)
        if cap is not None and (at_max or limit > cap):
            limit = cap  # exactly the cap: a second pass then finds the same bound
        limit = max(limit, request)
        if b.ratio is not None and not ratio_holds(limit, request, b.ratio, res):
            request = min(min_request_for(limit, b.ratio, res), limit)
            slot.notes.append(f"{res} raised to keep its limit within maxLimitRequestRatio")
    if request <= 0:
        slot.leave(res, "nothing to request")
        return
    slot.new_requests[res] = request
    if limit is not None:
        slot.new_limits[res] = limit
    else:
        slot.new_limits.pop(res, None)


def entries(slots: Sequence[Slot]) -> list[Entry]:
    """The pod's containers with their final values, as podlimits checks them."""
    out = []
    for s in slots:
        e = Entry(s.name, s.kind)
        for res in ("cpu", "memory"):
            req, lim = s.final(res)
            if req is not None:
                e.requests[res] = req
            if lim is not None:
                e.limits[res] = lim
        out.append(e)
    return out


def _split(
    slots: Sequence[Slot], res: str, section: str, scalable: Callable[[Slot], bool]
) -> list[tuple[int, int]]:
    """(fixed, scalable) part of each KEP-753 group of the pod's `section` for `res`."""
    by_name = {s.name: s for s in slots}
    out = []
    for group in terms(entries(slots), section, res):
        fixed = movable = 0
        for e in group:
            value = getattr(e, section).get(res) or 0
            if scalable(by_name[e.name]):
                movable += value
            else:
                fixed += value
        out.append((fixed, movable))
    return out


def _scalable(res: str, section: str) -> Callable[[Slot], bool]:
    if section == "requests":
        return lambda s: s.record is None and res in s.new_requests
    return lambda s: s.record is None and res in s.new_limits


def _caps(
    res: str, pod_range: LimitRangeItem | None, pod_level: PodLevel
) -> list[tuple[str, int, str]]:
    caps = []
    budget = pod_level.request_budget(res)
    if budget is not None:
        caps.append(("requests", budget, "pod-level requests"))
    if pod_range is not None and res in pod_range.max:
        if res not in pod_level.requests:
            caps.append(("requests", pod_range.max[res], "max in pod LimitRange"))
        if res not in pod_level.limits:
            caps.append(("limits", pod_range.max[res], "max in pod LimitRange"))
    return caps


def _floors(
    slots: Sequence[Slot], res: str, pod_range: LimitRangeItem | None, pod_level: PodLevel
) -> list[tuple[str, int, str]]:
    if pod_range is None or res in pod_level.requests:
        return []
    floors = []
    if res in pod_range.min:
        floors.append(("requests", pod_range.min[res], "min in pod LimitRange"))
    ratio = pod_range.max_limit_request_ratio.get(res)
    limits = aggregate(entries(slots), "limits", res)
    if ratio is not None and limits and res not in pod_level.limits:
        floors.append(("requests", min_request_for(limits, ratio, res), "pod maxLimitRequestRatio"))
    return floors


def _state(slots: Sequence[Slot], res: str) -> list[tuple[int | None, int | None]]:
    return [(s.new_requests.get(res), s.new_limits.get(res)) for s in slots]


def fit_pod(
    slots: Sequence[Slot],
    res: str,
    pod_range: LimitRangeItem | None,
    pod_level: PodLevel,
    bounds: Bounds,
) -> None:
    """Scales the sized containers' `res` down to the pod's caps, then up to its floors."""
    _scale_down(slots, res, pod_range, pod_level, bounds)
    _scale_up(slots, res, pod_range, pod_level, bounds)


def _scale_down(
    slots: Sequence[Slot],
    res: str,
    pod_range: LimitRangeItem | None,
    pod_level: PodLevel,
    bounds: Bounds,
) -> None:
    for _ in range(ROUNDS):
        factor, why = Fraction(1), ""
        for section, cap, reason in _caps(res, pod_range, pod_level):
            for fixed, movable in _split(slots, res, section, _scalable(res, section)):
                if fixed + movable > cap and movable > 0:
                    f = Fraction(max(cap - fixed, 0), movable)
                    if f < factor:
                        factor, why = f, reason
        if factor >= 1:
            return
        for s in _movable(slots, res):
            request = s.new_requests[res]
            want = min(math.floor(request * factor), request - 1)
            if want <= 0:
                s.leave(res, f"no room in {why}")
                continue
            resize(s, res, want, bounds)
            s.notes.append(f"{res} scaled to fit {why}")


def _scale_up(
    slots: Sequence[Slot],
    res: str,
    pod_range: LimitRangeItem | None,
    pod_level: PodLevel,
    bounds: Bounds,
) -> None:
    for _ in range(ROUNDS):
        factor, why = Fraction(1), ""
        for section, floor, reason in _floors(slots, res, pod_range, pod_level):
            agg = aggregate(entries(slots), section, res)
            if agg is not None and agg >= floor:
                continue
            fixed, movable = _split(slots, res, section, _scalable(res, section))[0]
            if movable > 0 and Fraction(floor - fixed, movable) > factor:
                factor, why = Fraction(floor - fixed, movable), reason
        if factor <= 1:
            return
        before = _state(slots, res)
        for s in _movable(slots, res):
            request = s.new_requests[res]
            resize(s, res, max(math.ceil(request * factor), request + 1), bounds)
            s.notes.append(f"{res} scaled to fit {why}")
        if _state(slots, res) == before:
            return


def _movable(slots: Sequence[Slot], res: str) -> list[Slot]:
    """The containers this pass sized for `res` (not kept as an earlier pass left them)."""
    return [s for s in slots if s.record is None and res in s.new_requests]


def is_sized(slot: Slot) -> bool:
    return slot.kind != "init"


__all__ = ["CONTAINER", "Bounds", "Slot", "entries", "fit_pod", "is_sized", "resize"]
