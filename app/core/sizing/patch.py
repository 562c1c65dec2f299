"""The JSON Patch (RFC 6902) that gives a new pod its recommended requests and limits.

Semantics follow the VPA admission controller, re-derived; the arithmetic is in
`app.core.sizing.values`, kube-apiserver's rules in `app.core.sizing.podlimits`:

- Request = the recommendation target, clamped by the container policy (`minAllowed`,
  `maxAllowed`), then by the namespace's LimitRange. The LimitRange comes last (VPA applies it
  first, so a policy can push a pod past it): LimitRanger rejects a pod outside the range, and a
  webhook must never turn a recommendation into a failed pod creation. The pod is read as
  LimitRanger's Admit leaves it (it runs before the webhooks): a missing request or limit is the
  LimitRange's `defaultRequest`/`default`.
- `RequestsAndLimits`: the limit keeps its ratio to the request (new limit = old limit x new
  request / old request, whole units rounded down). A limit equal to the request, or a limit with
  no request (Kubernetes then treats the request as equal), stays equal to the new request. No
  limit stays no limit, unless the LimitRange has a default limit, which is scaled the same way.
  A container LimitRange `max` (and a pod-level limit) therefore bounds the request at old
  request x max / old limit; where that rounding would break a `maxLimitRequestRatio`, the
  request is raised to limit / ratio.
- `RequestsOnly`: limits are left alone, the request is capped at the limit and, under a
  `maxLimitRequestRatio`, kept at or above limit / ratio (rounded up so LimitRanger accepts it).
- A LimitRange of type Pod bounds the pod's effective requests and limits (containers and
  sidecars, or a plain init container with the sidecars before it when larger): above its `max`
  the sized containers are scaled down in proportion, below its `min` (or its ratio) scaled up.
- Pod-level resources (`spec.resources`, app.core.sizing.podlevel): the pod-level request is
  sized to the sum of what its containers need (a container without a request of its own shares
  that budget and is not given one), its limit keeps its ratio, within a Pod LimitRange; the
  containers are then sized within the new values: the aggregate of their requests stays within
  the pod-level request (the sized ones are scaled down in proportion, as for a Pod `max`) and no
  limit exceeds the pod-level limit, as kube-apiserver requires.
- A pod whose final values kube-apiserver would still refuse (a container the patch leaves alone
  below a `min`, an init container above a Pod `max`, ...) gets no patch at all: reason `unfit`,
  the refusal in `PodPatch.detail`. The pod as the user wrote it is then the user's to fix.
- Left alone: everything when there is no policy or its updateMode is Off; a container whose mode
  is Off or without a recommendation; a resource not in `controlledResources` or owned by another
  controller (`excluded`, e.g. an HPA on cpu); init and ephemeral containers (sidecars, i.e. init
  containers with `restartPolicy: Always`, are sized like containers); resources other than cpu
  and memory.

CPU startup boost (the webhook's `boost` option, app.core.sizing.boost): after sizing, a policy's
boost raises the CPU of its containers, within the same LimitRange and pod-level bounds (a boost
that would make the pod unacceptable is dropped, the sizing kept), also in updateMode Off; the
values without it go into the `rightsizer.io/startup-boost` annotation and the updates record.

Idempotence: kube-apiserver re-invokes the webhook (`reinvocationPolicy: IfNeeded`) after other
webhooks changed the pod, and the pod then carries our `rightsizer.io/updates` annotation. A
container whose recorded target equals today's and whose resources still hold what we wrote is
left exactly as it is, so a second pass never re-rounds a limit ratio or re-splits a pod LimitRange
by a millicore; values are compared as amounts, so `1` and `1000m` are equal.

Quantities: the pod carries strings, so the caller passes the parser (`QuantityParser`); this
keeps app.core free of the Kubernetes client while the webhook parses as kube-apiserver does
(`app.core.quantity.parse_amount`, cached), and tests use the same. Values written are whole
millicores (`"250m"`) and whole bytes (`"262144000"`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.core.pods import CONTAINER, INIT, SIDECAR, is_sidecar
from app.core.policy import Policy
from app.core.recommendation import Recommendation, policy_for_container
from app.core.resources import format_cpu, format_memory
from app.core.sizing.boost import (
    BOOST_ANNOTATION,
    BoostOptions,
    Unboosted,
    annotation_value,
    apply_boost,
    has_boost,
    revert_boost,
)
from app.core.sizing.limitrange import RESOURCES, LimitRangeItem, QuantityParser, merged
from app.core.sizing.podlevel import PodLevelPlan, controlled_values, plan_pod_level, settle
from app.core.sizing.podlimits import (
    PodLevel,
    default_pod_level,
    unset_request_is_zero,
    violations,
)
from app.core.sizing.values import Bounds, Slot, entries, fit_pod, resize

UPDATES_ANNOTATION = "rightsizer.io/updates"
OBSERVED_ANNOTATION = "rightsizer.io/observed-containers"
UNFIT = "unfit"  # PodPatch.reason: no sizing passes the API server's checks; the pod is left as is


class PodInvalid(ValueError):
    """The pod JSON does not have the shape of a pod (the API server would never send it)."""


class QuantityInvalid(PodInvalid):
    """A request or limit of the pod is not a quantity rightsizer can size from (`cpu: "-1"`,
    `"abc"`). Unlike a wrong shape, the API server may send it: mutating admission runs before
    validation, which then refuses the pod with its own message."""


@dataclass(frozen=True)
class ContainerUpdate:
    """What the patch does to one container. Amounts in millicores / bytes."""

    name: str
    path: str  # JSON Pointer of the container, e.g. /spec/containers/0
    target: dict[str, int]  # the recommendation target it was sized from
    requests: dict[str, int]  # values after the patch, for the resources it sets
    limits: dict[str, int]
    previous_requests: dict[str, int]  # values before (absent: not set)
    previous_limits: dict[str, int]
    notes: tuple[str, ...] = ()  # why a value differs from the target, e.g. "cpu capped to ..."


@dataclass(frozen=True)
class PodLevelUpdate:
    """What the patch does to the pod-level `spec.resources` (only the values it changes)."""

    requests: dict[str, int]
    limits: dict[str, int]
    previous_requests: dict[str, int]
    previous_limits: dict[str, int]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class PodSizing:
    """What sizing does to a pod (size_pod): what the updater ranks a pod by, and the notes the
    conditions read; a PodPatch without its JSON Patch."""

    updates: tuple[ContainerUpdate, ...]
    reason: str  # one word on the outcome, for logs and metrics
    detail: str = ""  # why, when the reason alone does not say (e.g. "unfit": what kube refuses)
    boosted: tuple[str, ...] = ()  # containers given a CPU startup boost (app.core.sizing.boost)
    pod_level: PodLevelUpdate | None = None  # the pod-level values it changes


@dataclass(frozen=True)
class PodPatch(PodSizing):
    """The sizing of a pod and the JSON Patch that makes it (build_patch)."""

    # RFC 6902; empty when nothing changes
    operations: list[dict[str, Any]] = field(default_factory=list, kw_only=True)

    @property
    def changed(self) -> bool:
        return bool(self.operations)


def escape_pointer(token: str) -> str:
    """RFC 6901: `~` -> `~0`, then `/` -> `~1`."""
    return token.replace("~", "~0").replace("/", "~1")


def format_amount(resource: str, value: int) -> str:
    return format_cpu(value) if resource == "cpu" else format_memory(value)


def _amounts(section: Any, parse: QuantityParser, where: str) -> dict[str, int]:
    if section is None:
        return {}
    if not isinstance(section, Mapping):
        raise PodInvalid(f"{where} is not an object")
    out = {}
    for res in RESOURCES:
        if section.get(res) is not None:
            try:
                out[res] = parse(res, section[res])
            except ValueError as e:
                raise QuantityInvalid(f"{where}.{res}: {e}") from None
    return out


def _slots(
    pod: Mapping[str, Any], parse: QuantityParser, container_range: LimitRangeItem | None
) -> list[Slot]:
    spec = pod.get("spec")
    if not isinstance(spec, Mapping):
        raise PodInvalid("spec is not an object")
    slots = []
    for field_ in ("containers", "initContainers"):
        items = spec.get(field_)
        if items is None:
            continue
        if not isinstance(items, list):
            raise PodInvalid(f"spec.{field_} is not a list")
        for i, c in enumerate(items):
            where = f"spec.{field_}[{i}]"
            if not isinstance(c, Mapping) or not isinstance(c.get("name"), str):
                raise PodInvalid(f"{where} is not a container with a name")
            kind = CONTAINER
            if field_ == "initContainers":
                # a run-to-completion init container is left alone, but LimitRanger counts it
                kind = SIDECAR if is_sidecar(c) else INIT
            res = c.get("resources")
            if res is not None and not isinstance(res, Mapping):
                raise PodInvalid(f"{where}.resources is not an object")
            res = res or {}
            slots.append(
                Slot(
                    field_,
                    i,
                    c["name"],
                    kind,
                    c.get("resources"),
                    _amounts(res.get("requests"), parse, f"{where}.resources.requests"),
                    _amounts(res.get("limits"), parse, f"{where}.resources.limits"),
                    dict(container_range.default_request) if container_range else {},
                    dict(container_range.default) if container_range else {},
                )
            )
    return slots


def _pod_level(
    pod: Mapping[str, Any], parse: QuantityParser, slots: Sequence[Slot], release: int | None
) -> PodLevel:
    """`spec.resources`, with pod-level requests defaulted as the API server of 1.`release`
    does, and its rule for a resource without one (podlimits.unset_request_is_zero)."""
    section = pod["spec"].get("resources")
    if section is None:
        return PodLevel()
    if not isinstance(section, Mapping):
        raise PodInvalid("spec.resources is not an object")
    requests = _amounts(section.get("requests"), parse, "spec.resources.requests")
    limits = _amounts(section.get("limits"), parse, "spec.resources.limits")
    return default_pod_level(requests, limits, entries(slots), unset_request_is_zero(release))


def policy_ref(policy: Policy) -> str:
    return f"{policy.namespace}/{policy.name}"


def _previous_records(annotations: Mapping[str, Any], policy: Policy) -> dict[str, Any]:
    """Containers recorded by an earlier pass under the same policy; garbage counts as none."""
    text = annotations.get(UPDATES_ANNOTATION)
    if not text:  # no earlier pass (most pods): json.loads("") would raise, at 10 times the cost
        return {}
    try:
        doc = json.loads(text)
    except (ValueError, TypeError, RecursionError):
        return {}
    if not isinstance(doc, dict) or doc.get("policy") != policy_ref(policy):
        return {}
    containers = doc.get("containers")
    return containers if isinstance(containers, dict) else {}


def _still_applied(record: Any, slot: Slot, target: dict[str, str], parse: QuantityParser) -> bool:
    """The record was made from this target and the container still holds what it wrote."""
    if not isinstance(record, dict) or record.get("target") != target:
        return False
    for section, current in (("requests", slot.requests), ("limits", slot.limits)):
        values = record.get(section, {})
        if not isinstance(values, dict):
            return False
        for res, text in values.items():
            if res not in RESOURCES:
                return False
            try:
                if parse(res, text) != current.get(res):
                    return False
            except ValueError:
                return False
    return True


def _size_container(
    slot: Slot,
    rec: Recommendation,
    policy: Policy,
    bounds: Mapping[str, Bounds],
    excluded: Collection[str],
    shared: Collection[str] = (),
) -> None:
    """Sizes the container's controlled resources; those it `shared` from the pod-level budget
    keep having no value of their own (their need is in the pod-level value)."""
    cp = policy_for_container(list(policy.container_policies), slot.name)
    slot.target = {"cpu": rec.target.cpu, "memory": rec.target.memory}
    slot.scale_limit = cp.controlled_values == "RequestsAndLimits"
    for res in RESOURCES:
        if res not in cp.controlled_resources or res in excluded or res in shared:
            continue
        want = slot.target[res]
        lo_allowed, hi_allowed = cp.min_allowed.get(res), cp.max_allowed.get(res)
        if hi_allowed is not None and want > hi_allowed:
            want = hi_allowed
            slot.notes.append(f"{res} capped to maxAllowed")
        if lo_allowed is not None and want < lo_allowed:
            want = lo_allowed
            slot.notes.append(f"{res} raised to minAllowed")
        if want > 0:
            resize(slot, res, want, bounds[res])


def _record(slot: Slot, unboosted: Unboosted) -> dict[str, Any]:
    """What the updates annotation says of a container (and what a later pass checks): the values
    sizing gave it, a startup boost left out."""
    requests, limits = dict(slot.new_requests), dict(slot.new_limits)
    if slot.name in unboosted:
        for section, values in (("requests", requests), ("limits", limits)):
            cpu = unboosted[slot.name][section].get("cpu")
            if cpu is None or "cpu" not in values:
                values.pop("cpu", None)
            else:
                values["cpu"] = cpu
    changed_requests, changed_limits = slot.changes()
    record: dict[str, Any] = {
        "target": {r: format_amount(r, v) for r, v in slot.target.items()},
        "requests": _as_held(requests, slot.requests, changed_requests, slot.resources, "requests"),
    }
    if limits:
        record["limits"] = _as_held(limits, slot.limits, changed_limits, slot.resources, "limits")
    if slot.notes:
        record["notes"] = list(dict.fromkeys(slot.notes))
    return record


def _as_held(
    values: Mapping[str, int],
    held: Mapping[str, int],
    changed: Mapping[str, int],
    resources: Any,
    section: str,
) -> dict[str, str]:
    """`values` as the record writes them: what the patch sets as it sets it, and a value it
    leaves as the pod wrote it (`500u` is 1m to sizing, which counts whole millicores, but the
    pod holds 500u: kube-apiserver sends quantities in their canonical form and keeps them)."""
    written = resources.get(section) if isinstance(resources, Mapping) else None
    out = {}
    for res, value in sorted(values.items()):
        text = None
        if res not in changed and held.get(res) == value and isinstance(written, Mapping):
            text = written.get(res)
        out[res] = text if isinstance(text, str) else format_amount(res, value)
    return out


def _resource_ops(slot: Slot) -> list[dict[str, Any]]:
    requests, limits = slot.changes()
    if not requests and not limits:
        return []
    base = f"{slot.path}/resources"
    ops: list[dict[str, Any]] = []
    resources = slot.resources
    if not isinstance(resources, Mapping):
        ops.append({"op": "add", "path": base, "value": {}})
        resources = {}
    return ops + _values_ops(base, resources, requests, limits)


def _values_ops(
    base: str,
    resources: Mapping[str, Any],
    requests: Mapping[str, int],
    limits: Mapping[str, int],
) -> list[dict[str, Any]]:
    """The JSON Patch setting `requests` and `limits` under `base` (a `resources` object as
    written in the pod: a missing section is added first, a written value replaced)."""
    ops: list[dict[str, Any]] = []
    for section, values in (("requests", requests), ("limits", limits)):
        if not values:
            continue
        current = resources.get(section)
        if not isinstance(current, Mapping):
            ops.append({"op": "add", "path": f"{base}/{section}", "value": {}})
            current = {}
        for res in RESOURCES:
            if res in values:
                ops.append(
                    {
                        "op": "replace" if res in current else "add",
                        "path": f"{base}/{section}/{res}",
                        "value": format_amount(res, values[res]),
                    }
                )
    return ops


def _annotation_ops(pod: Mapping[str, Any], wanted: dict[str, str]) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    meta = pod.get("metadata")
    if not isinstance(meta, Mapping):
        ops.append({"op": "add", "path": "/metadata", "value": {}})
        meta = {}
    annotations = meta.get("annotations")
    if not isinstance(annotations, Mapping):
        ops.append({"op": "add", "path": "/metadata/annotations", "value": {}})
        annotations = {}
    for key, value in wanted.items():
        if annotations.get(key) == value:
            continue
        ops.append(
            {
                "op": "replace" if key in annotations else "add",
                "path": f"/metadata/annotations/{escape_pointer(key)}",
                "value": value,
            }
        )
    return ops


def _bounds(container_range: LimitRangeItem | None, pod_level: PodLevel) -> dict[str, Bounds]:
    return {
        res: Bounds(
            container_range.min.get(res) if container_range else None,
            container_range.max.get(res) if container_range else None,
            container_range.max_limit_request_ratio.get(res) if container_range else None,
            pod_level.limits.get(res),
        )
        for res in RESOURCES
    }


def _size_slots(
    slots: Sequence[Slot],
    recommendations: Mapping[str, Recommendation],
    policy: Policy,
    bounds: Mapping[str, Bounds],
    previous: Mapping[str, Any],
    parse: QuantityParser,
    excluded: Mapping[str, Collection[str]] | None,
    shared: Mapping[str, Collection[str]],
) -> bool:
    """Sizes each container with a recommendation; True when one was sized in this pass (not
    kept as an earlier pass left it)."""
    sized = False
    for slot in slots:
        rec = recommendations.get(slot.name)
        cp = policy_for_container(list(policy.container_policies), slot.name)
        if slot.kind == INIT or rec is None or cp.mode == "Off":
            continue
        if slot.name in previous:  # the target as the record writes it, only to compare
            target = {"cpu": format_cpu(rec.target.cpu), "memory": format_memory(rec.target.memory)}
            if _still_applied(previous[slot.name], slot, target, parse):
                slot.record = previous[slot.name]
                continue
        sized = True
        _size_container(
            slot,
            rec,
            policy,
            bounds,
            (excluded or {}).get(slot.name, ()),
            shared.get(slot.name, ()),
        )
    return sized


def _pod_level_ops(pod: Mapping[str, Any], plan: PodLevelPlan | None) -> list[dict[str, Any]]:
    """The JSON Patch of the pod-level values the plan changes (`spec.resources` exists: the
    pod sets pod-level values, or there is no plan)."""
    if plan is None:
        return []
    requests, limits = plan.changes()
    return _values_ops("/spec/resources", pod["spec"]["resources"], requests, limits)


def _pod_level_update(plan: PodLevelPlan | None) -> PodLevelUpdate | None:
    if plan is None:
        return None
    requests, limits = plan.changes()
    if not requests and not limits:
        return None
    return PodLevelUpdate(
        requests,
        limits,
        {r: v for r, v in plan.before.requests.items() if r in requests},
        {r: v for r, v in plan.before.limits.items() if r in limits},
        tuple(dict.fromkeys(plan.notes)),
    )


def _pod_record(pod: Mapping[str, Any], plan: PodLevelPlan | None) -> dict[str, Any]:
    """The pod-level values sizing gave the pod, for the updates annotation."""
    if plan is None or not plan.requests:
        return {}
    spec = pod.get("spec")
    written = spec.get("resources") if isinstance(spec, Mapping) else None
    changed_requests, changed_limits = plan.changes()
    before = plan.before
    record: dict[str, Any] = {
        "requests": _as_held(plan.requests, before.requests, changed_requests, written, "requests")
    }
    if plan.limits:
        record["limits"] = _as_held(plan.limits, before.limits, changed_limits, written, "limits")
    if plan.notes:
        record["notes"] = list(dict.fromkeys(plan.notes))
    return {"pod": record}


def _result(
    pod: Mapping[str, Any],
    policy: Policy,
    slots: Sequence[Slot],
    ops: list[dict[str, Any]],
    unboosted: Unboosted,
    plan: PodLevelPlan | None = None,
) -> PodPatch:
    """The patch of `ops` with its annotations and the per-container updates it makes."""
    records: dict[str, Any] = {}
    for slot in slots:
        if slot.record is not None:
            records[slot.name] = slot.record
        elif slot.target:  # sized, changed or not: a later pass leaves it as it is now
            records[slot.name] = _record(slot, unboosted)
    wanted = {}
    if records:  # a pod only boosted (updateMode Off) is not said to be sized
        wanted[UPDATES_ANNOTATION] = json.dumps(
            {"policy": policy_ref(policy), "containers": records, **_pod_record(pod, plan)},
            sort_keys=True,
            separators=(",", ":"),
        )
        wanted[OBSERVED_ANNOTATION] = ", ".join(s.name for s in slots if s.kind != INIT)
    if unboosted:
        wanted[BOOST_ANNOTATION] = annotation_value(unboosted)
    return PodPatch(
        _updates(slots),
        "patched",
        boosted=tuple(sorted(unboosted)),
        pod_level=_pod_level_update(plan),
        operations=ops + _annotation_ops(pod, wanted),
    )


def _updates(slots: Sequence[Slot]) -> tuple[ContainerUpdate, ...]:
    """What sizing changes in each container (those an earlier pass sized are left as they are)."""
    return tuple(
        ContainerUpdate(
            slot.name,
            slot.path,
            dict(slot.target),
            {r: v for r, v in slot.new_requests.items()},
            {r: v for r, v in slot.new_limits.items()},
            {r: slot.requests[r] for r in slot.new_requests if r in slot.requests},
            {r: slot.limits[r] for r in slot.new_limits if r in slot.limits},
            tuple(dict.fromkeys(slot.notes)),
        )
        for slot in slots
        if slot.record is None and slot.changes() != ({}, {})
    )


def build_patch(
    pod: Mapping[str, Any],
    recommendations: Mapping[str, Recommendation],
    policy: Policy | None,
    limit_ranges: Sequence[LimitRangeItem] = (),
    *,
    parse: QuantityParser,
    excluded: Mapping[str, Collection[str]] | None = None,
    boost: BoostOptions | None = None,
    release: int | None = None,
) -> PodPatch:
    """The patch for `pod` (its JSON) under `policy`, from per-container recommendations.

    `excluded` names, per container, resources another controller owns. With `boost` (the
    webhook's, for new pods) the policy's CPU startup boost is added on top of the sizing, in
    every mode, Off included (app.core.sizing.boost). `release` is the API server's minor version
    where its rules differ (None: a current one). Raises PodInvalid when the pod does not have
    the shape of a pod.
    """
    patch = _size(pod, recommendations, policy, limit_ranges, parse, excluded, boost, True, release)
    assert isinstance(patch, PodPatch)
    return patch


def size_pod(
    pod: Mapping[str, Any],
    recommendations: Mapping[str, Recommendation],
    policy: Policy | None,
    limit_ranges: Sequence[LimitRangeItem] = (),
    *,
    parse: QuantityParser,
    excluded: Mapping[str, Collection[str]] | None = None,
    release: int | None = None,
) -> PodSizing:
    """build_patch without a boost, all but its JSON Patch: the same updates, reason, detail and
    pod-level update, without the operations and the annotations' JSON, which the updater and
    the conditions never read (the updater ranks each pod template by it at every run: the
    patch's operations were a third of that). Raises PodInvalid as build_patch does."""
    return _size(pod, recommendations, policy, limit_ranges, parse, excluded, None, False, release)


def _size(
    pod: Mapping[str, Any],
    recommendations: Mapping[str, Recommendation],
    policy: Policy | None,
    limit_ranges: Sequence[LimitRangeItem],
    parse: QuantityParser,
    excluded: Mapping[str, Collection[str]] | None,
    boost: BoostOptions | None,
    patching: bool,
    release: int | None = None,
) -> PodSizing:
    """build_patch when `patching`, else size_pod."""
    if not isinstance(pod, Mapping):
        raise PodInvalid("the pod is not an object")
    outcome = PodPatch if patching else PodSizing
    if policy is None:
        return outcome((), "no-policy")
    boosting = boost is not None and has_boost(policy)
    if not policy.update_mode.sizes_new_pods and not boosting:
        return outcome((), "mode-off")
    items = [item.defaulted() for item in limit_ranges]
    container_range = merged(items, "Container")
    pod_range = merged(items, "Pod")
    slots = _slots(pod, parse, container_range)
    pod_level = _pod_level(pod, parse, slots, release)
    sizing = policy.update_mode.sizes_new_pods
    plan = None
    if sizing and (pod_level.requests or pod_level.limits):
        plan = plan_pod_level(slots, recommendations, policy, pod_level, pod_range, excluded or {})
        pod_level = plan.planned()  # the containers are sized within the new values
    bounds = _bounds(container_range, pod_level)
    meta = pod.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    annotations = annotations if isinstance(annotations, Mapping) else {}
    previous = _previous_records(annotations, policy)
    sized = sizing and _size_slots(
        slots,
        recommendations,
        policy,
        bounds,
        previous,
        parse,
        excluded,
        plan.shared if plan else {},
    )
    for res in RESOURCES:
        fit_pod(slots, res, pod_range, pod_level, bounds[res])
    if plan is not None:
        settle(plan, slots, pod_range, controlled_values(policy))
        pod_level = plan.planned()
    unboosted: Unboosted = {}
    if boost is not None and boosting:
        unboosted = apply_boost(slots, policy, bounds["cpu"], annotations, boost)
    ops = _changes(pod, slots, plan, patching)
    refused = violations(entries(slots), items, pod_level) if ops else []
    if refused and unboosted:  # the boost would make the pod unacceptable: size it without
        revert_boost(slots, unboosted)
        unboosted = {}
        ops = _changes(pod, slots, plan, patching)
        refused = violations(entries(slots), items, pod_level) if ops else []
    if not ops:
        return outcome((), "up-to-date" if sized or previous else "no-recommendation")
    if refused:
        # Sizing cannot make this pod acceptable (often it was not as written): leave it as is.
        return outcome((), UNFIT, "; ".join(dict.fromkeys(refused)))
    if not patching:
        return PodSizing(_updates(slots), "patched", pod_level=_pod_level_update(plan))
    assert isinstance(ops, list)
    return _result(pod, policy, slots, ops, unboosted, plan)


def _changes(
    pod: Mapping[str, Any], slots: Sequence[Slot], plan: PodLevelPlan | None, patching: bool
) -> list[dict[str, Any]] | bool:
    """The JSON Patch of the containers' and the pod-level values sizing changed (`patching`),
    or only whether there is one, as bool() of that patch would say."""
    if patching:
        return [op for slot in slots for op in _resource_ops(slot)] + _pod_level_ops(pod, plan)
    return any(slot.changes() != ({}, {}) for slot in slots) or (
        plan is not None and plan.changes() != ({}, {})
    )
