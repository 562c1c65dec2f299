"""The LimitRanger admission plugin for pods, as kube-apiserver runs it on pod CREATE.

Pure (no I/O): the caller passes the namespace's LimitRange objects as stored (JSON dicts).
Rules re-derived from kubernetes/kubernetes:

- `plugin/pkg/admission/limitranger/admission.go`: `Admit` -> `PodMutateLimitFunc`
  (`defaultContainerResourceRequirements`, `mergePodResourceRequirements`,
  `mergeContainerResources`) fills `default`/`defaultRequest` of Container-type items into
  containers and init containers lacking them and records the `kubernetes.io/limit-ranger`
  annotation; `Validate` -> `PodValidateLimitFunc` checks Container-type `min`/`max`/
  `maxLimitRequestRatio` per container and init container and Pod-type ones over `podRequests`/
  `podLimits` (regular containers + sidecars, or the largest plain init container plus the
  sidecars started before it; pod-level `spec.resources` replace the aggregate for cpu/memory,
  the PodLevelResources feature being on). The first LimitRange with violations refuses the pod
  with `admission.NewForbidden`: 403, `pods "NAME" is forbidden: <aggregate>`, the aggregate
  rendered as `utilerrors.NewAggregate` does (one message alone, else `[a, b]`, duplicates once).
- `pkg/apis/core/v1/defaults.go` `SetDefaults_LimitRangeItem`: a Container item's `default`
  falls back to `max`, `defaultRequest` to `default` then `min` (applied here to a copy, so
  LimitRanges stored without API defaulting behave as on a real cluster).

Go ranges over maps in random order; resources (and LimitRanges) are taken in name order here,
so messages are deterministic. Comparisons use `requestLimitEnforcedValues`' milli precision.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from app.simulator.apiserver import quantity
from app.simulator.apiserver.errors import ApiError

ANNOTATION = "kubernetes.io/limit-ranger"
# resource.MaxMilliValue: the largest value whose milli value fits an int64.
_MAX_MILLI = (2**63 - 1) // 1000
# isSupportedPodLevelResource (k8s.io/component-helpers/resource): cpu, memory (and hugepages).
POD_LEVEL_RESOURCES = ("cpu", "memory")


class Q:
    """A parsed quantity with the Format it prints in (as Go's resource.Quantity keeps one)."""

    __slots__ = ("fmt", "value")

    def __init__(self, value: Decimal, fmt: str) -> None:
        self.value, self.fmt = value, fmt

    @classmethod
    def of(cls, raw: object) -> Q:
        return cls(quantity.parse(raw), quantity.quantity_format(raw))

    def __str__(self) -> str:
        return quantity.format_quantity(self.value, self.fmt)

    def __repr__(self) -> str:
        return f"Q({self})"


ResourceList = dict[str, Q]


def is_pod_level_resource(name: str) -> bool:
    return name in POD_LEVEL_RESOURCES or name.startswith("hugepages-")


def resource_list(values: Any) -> ResourceList:
    """A container's (or the pod's) `requests`/`limits` map, parsed."""
    if not isinstance(values, Mapping):
        return {}
    return {str(k): Q.of(v) for k, v in values.items()}


def _container_lists(container: Mapping[str, Any]) -> tuple[ResourceList, ResourceList]:
    res = container.get("resources") or {}
    return resource_list(res.get("requests")), resource_list(res.get("limits"))


def _add(into: ResourceList, more: ResourceList) -> None:
    # addResourceList: a new key takes the added quantity (and its format).
    for name, q in more.items():
        into[name] = Q(into[name].value + q.value, into[name].fmt) if name in into else q


def _max(into: ResourceList, more: ResourceList) -> None:
    # maxResourceList
    for name, q in more.items():
        if name not in into or q.value > into[name].value:
            into[name] = q


def _is_sidecar(container: Mapping[str, Any]) -> bool:
    return container.get("restartPolicy") == "Always"


def aggregate_container_resources(pod: Mapping[str, Any], kind: str) -> ResourceList:
    """`podRequests`/`podLimits` without pod-level resources (AggregateContainerRequests/Limits):
    the sum of regular containers and sidecars, or, if larger, each plain init container plus
    the sidecars started before it. `kind` is "requests" or "limits"."""
    idx = 0 if kind == "requests" else 1
    spec = pod.get("spec") or {}
    total: ResourceList = {}
    for c in spec.get("containers") or []:
        if isinstance(c, Mapping):
            _add(total, _container_lists(c)[idx])
    sidecars: ResourceList = {}
    init_max: ResourceList = {}
    for c in spec.get("initContainers") or []:
        if not isinstance(c, Mapping):
            continue
        own = _container_lists(c)[idx]
        if _is_sidecar(c):
            _add(total, own)
            _add(sidecars, own)
            effective = dict(sidecars)
        else:
            effective = {}
            _add(effective, own)
            _add(effective, sidecars)
        _max(init_max, effective)
    _max(total, init_max)
    return total


def effective_pod_resources(pod: Mapping[str, Any], kind: str) -> ResourceList:
    """LimitRanger's `podRequests`/`podLimits`: the container aggregate, with pod-level
    `spec.resources` values overriding it for the resources pod-level resources support."""
    total = aggregate_container_resources(pod, kind)
    pod_level = ((pod.get("spec") or {}).get("resources") or {}).get(kind)
    for name, q in resource_list(pod_level).items():
        if is_pod_level_resource(name):
            total[name] = q
    return total


# --- defaulting (Admit) ---------------------------------------------------------------------


def default_limit_range(limit_range: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the LimitRange with `SetDefaults_LimitRangeItem` applied to Container items."""
    lr = copy.deepcopy(dict(limit_range))
    for item in (lr.get("spec") or {}).get("limits") or []:
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default = item.setdefault("default", {}) or {}
        default_request = item.setdefault("defaultRequest", {}) or {}
        for k, v in (item.get("max") or {}).items():
            default.setdefault(k, v)
        for k, v in default.items():
            default_request.setdefault(k, v)
        for k, v in (item.get("min") or {}).items():
            default_request.setdefault(k, v)
        item["default"], item["defaultRequest"] = default, default_request
        for field in ("default", "defaultRequest"):
            if not item[field]:
                del item[field]
    return lr


def _ordered(limit_ranges: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        default_limit_range(lr)
        for lr in sorted(limit_ranges, key=lambda lr: (lr.get("metadata") or {}).get("name", ""))
    ]


def _container_defaults(limit_range: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """defaultContainerResourceRequirements: (requests, limits); later items win."""
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    for item in (limit_range.get("spec") or {}).get("limits") or []:
        if isinstance(item, Mapping) and item.get("type") == "Container":
            requests.update(item.get("defaultRequest") or {})
            limits.update(item.get("default") or {})
    return requests, limits


def _merge_container(
    container: dict[str, Any], requests: Mapping[str, Any], limits: Mapping[str, Any], kind: str
) -> list[str]:
    """mergeContainerResources: fill what the container lacks; the annotation parts."""
    res = container.get("resources")
    if not isinstance(res, dict):
        res = container["resources"] = {}
    notes: list[str] = []
    set_limits = sorted(k for k in limits if k not in (res.get("limits") or {}))
    set_requests = sorted(k for k in requests if k not in (res.get("requests") or {}))
    if set_limits:
        res["limits"] = {**(res.get("limits") or {}), **{k: limits[k] for k in set_limits}}
    if set_requests:
        res["requests"] = {
            **(res.get("requests") or {}),
            **{k: requests[k] for k in set_requests},
        }
    name = container.get("name", "")
    if set_requests:
        notes.append(f"{', '.join(set_requests)} request for {kind} {name}")
    if set_limits:
        notes.append(f"{', '.join(set_limits)} limit for {kind} {name}")
    return notes


def apply_defaults(pod: dict[str, Any], limit_ranges: Sequence[Mapping[str, Any]]) -> None:
    """LimitRanger's Admit on pod CREATE: mutate `pod` in place, once per LimitRange."""
    spec = pod.get("spec") or {}
    for lr in _ordered(limit_ranges):
        requests, limits = _container_defaults(lr)
        notes: list[str] = []
        for field, kind in (("containers", "container"), ("initContainers", "init container")):
            for c in spec.get(field) or []:
                if isinstance(c, dict):
                    notes += _merge_container(c, requests, limits, kind)
        if notes:
            meta = pod.setdefault("metadata", {})
            annotations = meta.get("annotations")
            if not isinstance(annotations, dict):
                annotations = meta["annotations"] = {}
            annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)


# --- validation (Validate) ------------------------------------------------------------------


def _value(q: Q | None) -> int:
    return 0 if q is None else math.ceil(q.value)


def _milli(q: Q | None) -> int:
    return 0 if q is None else math.ceil(q.value * 1000)


def _enforced_values(req: Q | None, lim: Q | None, enforced: Q) -> tuple[int, int, int]:
    """requestLimitEnforcedValues: milli values when none would overflow, else whole values."""
    values = (_value(req), _value(lim), _value(enforced))
    if all(v <= _MAX_MILLI for v in values):
        return _milli(req), _milli(lim), _milli(enforced)
    return values


def _min(kind: str, name: str, enforced: Q, reqs: ResourceList, lims: ResourceList) -> str | None:
    req, lim = reqs.get(name), lims.get(name)
    r, li, e = _enforced_values(req, lim, enforced)
    if req is None:
        return f"minimum {name} usage per {kind} is {enforced}.  No request is specified"
    if r < e:
        return f"minimum {name} usage per {kind} is {enforced}, but request is {req}"
    if lim is not None and li < e:
        return f"minimum {name} usage per {kind} is {enforced}, but limit is {lim}"
    return None


def _max_c(kind: str, name: str, enforced: Q, reqs: ResourceList, lims: ResourceList) -> str | None:
    req, lim = reqs.get(name), lims.get(name)
    r, li, e = _enforced_values(req, lim, enforced)
    if lim is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No limit is specified"
    if li > e:
        return f"maximum {name} usage per {kind} is {enforced}, but limit is {lim}"
    if req is not None and r > e:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {req}"
    return None


def _ratio(kind: str, name: str, enforced: Q, reqs: ResourceList, lims: ResourceList) -> str | None:
    req, lim = reqs.get(name), lims.get(name)
    r, li, _ = _enforced_values(req, lim, enforced)
    head = f"{name} max limit to request ratio per {kind} is {enforced}"
    if req is None or r == 0:
        return f"{head}, but no request is specified or request is 0"
    if lim is None or li == 0:
        return f"{head}, but no limit is specified or limit is 0"
    observed = float(li) / float(r)
    shown = observed
    allowed = float(_value(enforced))
    if _value(enforced) <= _MAX_MILLI:
        observed *= 1000
        allowed = float(_milli(enforced))
    if observed > allowed:
        return f"{head}, but provided ratio is {shown:f}"
    return None


_CHECKS = (("min", _min), ("max", _max_c), ("maxLimitRequestRatio", _ratio))


def _check(item: Mapping[str, Any], kind: str, reqs: ResourceList, lims: ResourceList) -> list[str]:
    errs: list[str] = []
    for field, check in _CHECKS:
        for name, raw in sorted((item.get(field) or {}).items()):
            msg = check(kind, name, Q.of(raw), reqs, lims)
            if msg:
                errs.append(msg)
    return errs


def violations(pod: Mapping[str, Any], limit_range: Mapping[str, Any]) -> list[str]:
    """PodValidateLimitFunc for one (defaulted) LimitRange: its messages, in order."""
    spec = pod.get("spec") or {}
    errs: list[str] = []
    for item in (limit_range.get("spec") or {}).get("limits") or []:
        if not isinstance(item, Mapping):
            continue
        if item.get("type") == "Container":
            for field in ("containers", "initContainers"):
                for c in spec.get(field) or []:
                    if isinstance(c, Mapping):
                        errs += _check(item, "Container", *_container_lists(c))
        elif item.get("type") == "Pod":
            reqs = effective_pod_resources(pod, "requests")
            lims = effective_pod_resources(pod, "limits")
            errs += _check(item, "Pod", reqs, lims)
    return errs


def aggregate_message(messages: Sequence[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message alone, else `[a, b]` without repeats."""
    if len(messages) == 1:
        return messages[0]
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def forbidden(pod: Mapping[str, Any], message: str) -> ApiError:
    """admission.NewForbidden for a pod: the name, else generateName, else "Unknown"."""
    meta = pod.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName") or "Unknown"
    return ApiError(
        403,
        f'pods "{name}" is forbidden: {message}',
        "Forbidden",
        {"name": name, "kind": "pods"},
    )


def validate(pod: Mapping[str, Any], limit_ranges: Sequence[Mapping[str, Any]]) -> None:
    """LimitRanger's Validate on pod CREATE: raise the 403 of the first violated LimitRange."""
    for lr in _ordered(limit_ranges):
        errs = violations(pod, lr)
        if errs:
            raise forbidden(pod, aggregate_message(errs))
