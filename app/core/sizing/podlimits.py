"""What kube-apiserver checks of a pod's requests and limits as a whole, re-derived (pure).

Two sources of rules, both applied after the mutating webhooks, so a patch must satisfy them:

- LimitRanger (kubernetes/kubernetes `plugin/pkg/admission/limitranger/admission.go`,
  `PodValidateLimitFunc`). A `Container` item applies to every container and init container:
  `min` needs a request, and request and limit (when there is one) at least `min`; `max` needs a
  limit, and limit and request at most `max`; `maxLimitRequestRatio` needs both, non-zero, and
  limit <= request x ratio. A `Pod` item applies the same three checks to the pod's effective
  requests and limits (`podRequests`/`podLimits`): the sum over containers and sidecars, or each
  plain init container plus the sidecars declared before it when that is larger (the KEP-753
  formula); a container without the value adds nothing, and a sum no container has is "not
  specified". With pod-level resources (`spec.resources`, KEP-2837) set for a resource, the
  pod-level value replaces the sum. Every LimitRange item is checked on its own.
- Pod-level resources (`pkg/apis/core/validation/validation.go`, `validatePodResourceConsistency`):
  the aggregate container requests (the KEP-753 formula) must not exceed the pod-level request, and
  no container's limit may exceed the pod-level limit.

The ratio: current kube-apiserver compares exactly (`exceedsAllowed`: limit > request x ratio, in
Quantity arithmetic); older ones divide as float64 values (`observedRatio x 1000 >
ratio.MilliValue()`, milli-values below MaxMilliValue, whole values above it). `ratio_holds`
requires both, so a request from `min_request_for` passes either.

Amounts are millicores (cpu) and bytes (memory), as everywhere in app.core.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from app.core.pods import CONTAINER, INIT, SIDECAR
from app.core.sizing.limitrange import RESOURCES, LimitRangeItem


@dataclass
class Entry:
    """One container as LimitRanger sees it: its kind and its values after LimitRange defaults."""

    name: str
    kind: str  # CONTAINER, SIDECAR (init container with restartPolicy Always) or INIT
    requests: dict[str, int] = field(default_factory=dict)
    limits: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class PodLevel:
    """`spec.resources` of the pod (cpu and memory only), after kube-apiserver's defaulting.

    `unset_is_zero`: the pod sets `spec.resources` and its API server compares every resource the
    containers request with the pod-level request, one the pod does not set as 0. kube-apiserver
    1.33 does (`validatePodResourceConsistency`); from 1.34 on it skips a resource without a
    pod-level request. `pod_level_rules` says which a release follows."""

    requests: Mapping[str, int] = field(default_factory=dict)
    limits: Mapping[str, int] = field(default_factory=dict)
    unset_is_zero: bool = False

    def request_budget(self, res: str) -> int | None:
        """The most the containers' aggregate request may be (None: no pod-level bound)."""
        budget = self.requests.get(res)
        if budget is None and self.unset_is_zero:
            return 0
        return budget


def unset_request_is_zero(release: int | None) -> bool:
    """Whether kube-apiserver 1.`release` holds a resource without a pod-level request to 0 (see
    PodLevel): 1.33 only, the first release with pod-level resources that rightsizer supports
    (alpha there); 1.34 added the skip. An unknown release is taken as a current one."""
    return release is not None and release < 34


def terms(entries: Sequence[Entry], section: str, res: str) -> list[list[Entry]]:
    """The groups the KEP-753 formula takes the largest sum of: containers with sidecars, then
    each plain init container with the sidecars declared before it."""
    running = [e for e in entries if e.kind in (CONTAINER, SIDECAR)]
    out = [running]
    before: list[Entry] = []
    for e in entries:
        if e.kind == SIDECAR:
            before.append(e)
        elif e.kind == INIT:
            out.append([e, *before])
    return out


def aggregate(entries: Sequence[Entry], section: str, res: str) -> int | None:
    """The pod's effective request or limit for `res`; None when no container sets it."""

    def value(e: Entry) -> int | None:
        amounts: Mapping[str, int] = getattr(e, section)
        return amounts.get(res)

    if all(value(e) is None for e in entries):
        return None
    return max(sum(value(e) or 0 for e in group) for group in terms(entries, section, res))


def default_pod_level(
    requests: Mapping[str, int],
    limits: Mapping[str, int],
    entries: Sequence[Entry],
    unset_is_zero: bool = False,
) -> PodLevel:
    """Pod-level requests as the API server defaults them (`pkg/apis/core/v1/defaults.go`,
    KEP-2837): a resource with a pod-level limit and no request gets the containers' aggregate
    request, or the limit when no container requests it."""
    out = dict(requests)
    for res, limit in limits.items():
        if res not in out:
            agg = aggregate(entries, "requests", res)
            out[res] = agg if agg is not None else limit
    return PodLevel(out, dict(limits), unset_is_zero)


# resource.MaxMilliValue (apimachinery pkg/api/resource): the largest value whose milli-value fits
# an int64.
MAX_MILLI_VALUE = (2**63 - 1) // 1000


def _go_values(res: str, amount: int) -> tuple[int, int]:
    """(Value(), MilliValue()) of an amount (millicores for cpu, bytes otherwise): Value() rounds
    up to a whole unit, as Quantity.Value does."""
    if res == "cpu":
        return -(-amount // 1000), amount
    return amount, amount * 1000


def ratio_holds(limit: int, request: int, ratio: Fraction, res: str) -> bool:
    """limit <= request x ratio, exactly, and as LimitRanger's float64 check decides it
    (`limitRequestRatioConstraint` in plugin/pkg/admission/limitranger/admission.go): both
    must accept it. The float check divides milli-values when request, limit and the ratio's
    whole values are all at most MaxMilliValue (`requestLimitEnforcedValues`), whole values
    rounded up otherwise, and compares ratio x 1000 with the ratio's milli-value while that
    fits (the ratio's whole value otherwise), so a limit of exactly request x ratio can be
    refused (3000.0000000000005 > 3000)."""
    if request <= 0 or limit <= 0:
        return False
    if limit > request * ratio:
        return False
    (req_whole, req_milli), (lim_whole, lim_milli) = (
        _go_values(res, request),
        _go_values(res, limit),
    )
    enforced_whole, enforced_milli = math.ceil(ratio), math.ceil(ratio * 1000)
    if max(req_whole, lim_whole, enforced_whole) <= MAX_MILLI_VALUE:
        observed = float(lim_milli) / float(req_milli)
    else:
        observed = float(lim_whole) / float(req_whole)
    if enforced_whole <= MAX_MILLI_VALUE:
        return observed * 1000 <= float(enforced_milli)
    return observed <= float(enforced_whole)


def min_request_for(limit: int, ratio: Fraction, res: str) -> int:
    """The smallest request for which `limit` keeps within `ratio`."""
    request = max(math.ceil(Fraction(limit) / ratio), 1)
    while not ratio_holds(limit, request, ratio, res):
        request += 1
    return request


def _fmt(res: str, value: int | None) -> str:
    if value is None:
        return "none"
    return f"{value}m" if res == "cpu" else str(value)


def _ratio_text(r: Fraction) -> str:
    return str(r.numerator) if r.denominator == 1 else f"{float(r):g}"


def _check(
    kind: str,
    item: LimitRangeItem,
    requests: Mapping[str, int | None],
    limits: Mapping[str, int | None],
) -> list[str]:
    """One LimitRange item against one set of values, with LimitRanger's messages."""
    errs = []
    for res, lo in item.min.items():
        req, lim = requests.get(res), limits.get(res)
        if req is None:
            errs.append(
                f"minimum {res} usage per {kind} is {_fmt(res, lo)}.  No request is specified"
            )
        elif req < lo:
            errs.append(
                f"minimum {res} usage per {kind} is {_fmt(res, lo)}, but request is "
                f"{_fmt(res, req)}"
            )
        elif lim is not None and lim < lo:
            errs.append(
                f"minimum {res} usage per {kind} is {_fmt(res, lo)}, but limit is {_fmt(res, lim)}"
            )
    for res, hi in item.max.items():
        req, lim = requests.get(res), limits.get(res)
        if lim is None:
            errs.append(
                f"maximum {res} usage per {kind} is {_fmt(res, hi)}.  No limit is specified"
            )
        elif lim > hi:
            errs.append(
                f"maximum {res} usage per {kind} is {_fmt(res, hi)}, but limit is {_fmt(res, lim)}"
            )
        elif req is not None and req > hi:
            errs.append(
                f"maximum {res} usage per {kind} is {_fmt(res, hi)}, but request is "
                f"{_fmt(res, req)}"
            )
    for res, ratio in item.max_limit_request_ratio.items():
        req, lim = requests.get(res), limits.get(res)
        if not req:
            errs.append(
                f"{res} max limit to request ratio per {kind} is {_ratio_text(ratio)}, but no "
                "request is specified or request is 0"
            )
        elif not lim:
            errs.append(
                f"{res} max limit to request ratio per {kind} is {_ratio_text(ratio)}, but no "
                "limit is specified or limit is 0"
            )
        elif not ratio_holds(lim, req, ratio, res):
            errs.append(
                f"{res} max limit to request ratio per {kind} is {_ratio_text(ratio)}, but "
                f"provided ratio is {lim / req:.6f}"
            )
    return errs


def violations(
    entries: Sequence[Entry], items: Iterable[LimitRangeItem], pod_level: PodLevel
) -> list[str]:
    """Why kube-apiserver would refuse these values (empty: it accepts them). `entries` hold the
    values after LimitRange defaults, in pod order (containers, then init containers)."""
    errs = []
    for e in entries:
        for res in RESOURCES:
            req, lim = e.requests.get(res), e.limits.get(res)
            if req is not None and lim is not None and req > lim:
                errs.append(f"{e.name}: {res} request {_fmt(res, req)} is above its limit")
    items = list(items)
    for item in items:
        if item.type == "Container":
            for e in entries:
                errs += [f"{e.name}: {m}" for m in _check("Container", item, e.requests, e.limits)]
        elif item.type == "Pod":
            pod_req: dict[str, int | None] = {}
            pod_lim: dict[str, int | None] = {}
            for res in RESOURCES:
                pod_req[res] = pod_level.requests.get(res, aggregate(entries, "requests", res))
                pod_lim[res] = pod_level.limits.get(res, aggregate(entries, "limits", res))
            errs += _check("Pod", item, pod_req, pod_lim)
    for res in RESOURCES:
        # pkg/apis/core/validation ValidatePodResourceRequirements: a pod-level request above its
        # own pod-level limit is refused like a container's.
        preq, plim = pod_level.requests.get(res), pod_level.limits.get(res)
        if preq is not None and plim is not None and preq > plim:
            errs.append(
                f"spec.resources.requests[{res}]: must be less than or equal to {res} limit of "
                f"{_fmt(res, plim)}"
            )
        budget = pod_level.request_budget(res)
        agg = aggregate(entries, "requests", res)
        if budget is not None and agg is not None and agg > budget:
            errs.append(
                f"spec.resources.requests[{res}]: must be greater than or equal to aggregate "
                f"container requests of {_fmt(res, agg)}"
            )
        cap = pod_level.limits.get(res)
        for e in entries:
            lim = e.limits.get(res)
            if cap is not None and lim is not None and lim > cap and e.kind == CONTAINER:
                errs.append(
                    f"{e.name}: {res} limit {_fmt(res, lim)} must be less than or equal to pod "
                    f"limits of {_fmt(res, cap)}"
                )
    return errs
