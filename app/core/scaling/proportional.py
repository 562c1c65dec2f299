"""cluster-proportional-autoscaler (CPA) 1.10 replica formulas, params and cluster status.

Params are CPA's own ConfigMap JSON, `{"linear": {...}}` or `{"ladder": {...}}`, so users can
paste what they run today; the mode's body may also be the JSON *string* a ConfigMap's `data`
holds. Everything here is pure: the scaler job feeds it node dicts from the watch cache.

Where CPA 1.10 behaves in a way worth knowing (kept, so results match CPA):
- linear `min` 0 or absent means 1: linear never scales to zero (ladder can).
- preventSinglePointFailure is applied AFTER the max clamp: max 1 with 2+ nodes gives 2.
- A per-replica param of 0 makes that dimension yield 1, not min; since the other dimension is
  always >= min >= 1, it never decides the result.
- Division is float64, as in Go: 21 nodes / nodesPerReplica 0.7 is 30.000000000000004, so 31.
- Ladder: in CPA an omitted (or empty) coresToReplicas/nodesToReplicas yields 0 (since 1.8.5), so
  `{"ladder": {}}` scales the target to ZERO. We reject an empty ladder or an empty step list
  instead (see below); an omitted dimension beside a non-empty one still yields 0 and so never
  decides. Steps are sorted by threshold; below the first threshold the first step's replicas
  apply, even when that is more than 0.
- Field names match case-insensitively ("CoresPerReplica" works), as Go's encoding/json does;
  a JSON null leaves a number or flag at its default.

Where we are deliberately stricter or different from CPA (CPA silently accepts these):
- A ladder with no steps at all, or an empty step list, is rejected: a typo must not scale
  CoreDNS to zero.
- Unknown fields are rejected, naming the field (CPA ignores them, so a typo such as
  "includeUnschedulableNode" silently did nothing).
- A ladder step must be exactly [threshold, replicas] (Go's [2]int pads [5] to [5, 0] and
  truncates [1, 2, 3]); replica counts above 2^31-1 are rejected (Kubernetes stores int32).
- Non-finite numbers (NaN, Infinity, 1e400) are rejected; Go's JSON rejects them too.
- Schedulable means not `spec.unschedulable` AND Ready (CPA only checks `unschedulable`);
  nodes with a skipped taint are left out entirely (CPA has no taint option).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from app.core.jsontext import JsonTextError, loads
from app.core.quantity import ceil_scaled, parse_quantity
from app.core.wire import section

MODES = ("linear", "ladder")
INT32_MAX = 2**31 - 1  # Kubernetes replica counts are int32
INT64_MAX = 2**63 - 1  # Go's int, which CPA decodes thresholds and min/max into
NANO = 10**9


class ParamsError(ValueError):
    """Invalid scaler params; `field` is the offending field's path, e.g. "linear.max"."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class ParamsUnparsable(ParamsError):
    """Params given as JSON text (a ConfigMap's) that does not parse, or nests too deeply."""


@dataclass(frozen=True)
class LinearParams:
    """`min_replicas` is the effective minimum (CPA turns 0 into 1); `max_replicas` 0 = none."""

    cores_per_replica: float = 0.0
    nodes_per_replica: float = 0.0
    min_replicas: int = 1
    max_replicas: int = 0
    prevent_single_point_failure: bool = False
    include_unschedulable_nodes: bool = False


Step = tuple[int, int]  # (threshold, replicas)


@dataclass(frozen=True)
class LadderParams:
    """Steps are kept sorted by threshold (stable, so of equal thresholds the later one wins)."""

    cores_to_replicas: tuple[Step, ...] = ()
    nodes_to_replicas: tuple[Step, ...] = ()
    include_unschedulable_nodes: bool = False


Params = LinearParams | LadderParams


@dataclass(frozen=True)
class ClusterStatus:
    """What CPA measures: node counts and whole cores (allocatable CPU summed, then rounded up)."""

    total_nodes: int
    schedulable_nodes: int
    total_cores: int
    schedulable_cores: int

    def __post_init__(self) -> None:
        for name in ("total_nodes", "schedulable_nodes", "total_cores", "schedulable_cores"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        if self.schedulable_nodes > self.total_nodes:
            raise ValueError("schedulable_nodes must not exceed total_nodes")
        if self.schedulable_cores > self.total_cores:
            raise ValueError("schedulable_cores must not exceed total_cores")


# --- parsing ----------------------------------------------------------------------------------


def parse_params(raw: str | bytes | Mapping[str, Any]) -> Params:
    """CPA ConfigMap JSON (text or already decoded) -> params; ParamsError names the field."""
    doc = _decode(raw, "params") if isinstance(raw, str | bytes) else raw
    if not isinstance(doc, Mapping):
        raise ParamsError("params", "must be a JSON object with one key, 'linear' or 'ladder'")
    keys = list(doc)
    if not keys:
        raise ParamsError("params", "needs one mode key, 'linear' or 'ladder'; got none")
    if len(keys) > 1:
        got = ", ".join(sorted(map(str, keys)))
        raise ParamsError("params", f"needs exactly one mode key, 'linear' or 'ladder'; got {got}")
    mode = keys[0]
    if mode not in MODES:
        raise ParamsError(str(mode), "unknown mode; expected 'linear' or 'ladder'")
    body = doc[mode]
    if isinstance(body, str | bytes):  # a ConfigMap's data value is the JSON as a string
        body = _decode(body, mode)
    if not isinstance(body, Mapping):
        raise ParamsError(mode, f"must be a JSON object, not {_kind(body)}")
    return _parse_linear(body) if mode == "linear" else _parse_ladder(body)


def _decode(text: str | bytes, field: str) -> Any:
    try:
        return loads(text)
    except JsonTextError as e:
        raise ParamsUnparsable(field, f"invalid JSON ({e.message})") from None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    return "an object" if isinstance(value, Mapping) else type(value).__name__


def _as_float(field: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ParamsError(field, f"must be a number, not {_kind(value)}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise ParamsError(field, "must be a finite number")
    return number


def _as_int(field: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ParamsError(field, f"must be an integer, not {_kind(value)}")
    if isinstance(value, float):  # Go's json refuses 2.0 and 2.5 for an int field alike
        raise ParamsError(field, f"must be an integer, not {value!r}")
    if abs(value) > INT64_MAX:
        raise ParamsError(field, "is out of range")
    return value


def _as_bool(field: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ParamsError(field, f"must be true or false, not {_kind(value)}")
    return value


def _as_steps(field: str, value: Any) -> tuple[Step, ...]:
    if not isinstance(value, list | tuple):
        raise ParamsError(field, f"must be an array of [threshold, replicas], not {_kind(value)}")
    return tuple(_as_step(f"{field}[{i}]", entry) for i, entry in enumerate(value))


def _as_step(field: str, entry: Any) -> Step:
    if not isinstance(entry, list | tuple) or len(entry) != 2:
        raise ParamsError(field, f"must be a pair [threshold, replicas], got {entry!r}")
    threshold = _as_int(f"{field}[0]", entry[0])
    replicas = _as_int(f"{field}[1]", entry[1])
    if threshold < 0:
        raise ParamsError(f"{field}[0]", f"threshold must not be negative, got {threshold}")
    if replicas < 0:
        raise ParamsError(f"{field}[1]", f"replicas must not be negative, got {replicas}")
    if replicas > INT32_MAX:
        raise ParamsError(f"{field}[1]", f"replicas must be at most {INT32_MAX}")
    return threshold, replicas


Reader = Callable[[str, Any], Any]

LINEAR_FIELDS: dict[str, Reader] = {
    "coresPerReplica": _as_float,
    "nodesPerReplica": _as_float,
    "min": _as_int,
    "max": _as_int,
    "preventSinglePointFailure": _as_bool,
    "includeUnschedulableNodes": _as_bool,
}
LADDER_FIELDS: dict[str, Reader] = {
    "coresToReplicas": _as_steps,
    "nodesToReplicas": _as_steps,
    "includeUnschedulableNodes": _as_bool,
}


def _read_fields(mode: str, body: Mapping[str, Any], readers: dict[str, Reader]) -> dict[str, Any]:
    """Typed values by canonical name. Keys match case-insensitively and the last one wins, and a
    null leaves a scalar alone but empties a list: all as Go's encoding/json, so pasted
    ConfigMaps mean what they meant to CPA."""
    by_fold = {name.casefold(): name for name in readers}
    values: dict[str, Any] = {}
    for key, value in body.items():
        name = by_fold.get(str(key).casefold())
        if name is None:
            allowed = ", ".join(readers)
            raise ParamsError(f"{mode}.{key}", f"unknown field; {mode} accepts {allowed}")
        if value is None:
            if readers[name] is _as_steps:
                values[name] = ()
            continue
        values[name] = readers[name](f"{mode}.{name}", value)
    return values


def _parse_linear(body: Mapping[str, Any]) -> LinearParams:
    v = _read_fields("linear", body, LINEAR_FIELDS)
    cores, nodes = v.get("coresPerReplica", 0.0), v.get("nodesPerReplica", 0.0)
    low, high = v.get("min", 0), v.get("max", 0)
    for name, number in (("coresPerReplica", cores), ("nodesPerReplica", nodes), ("min", low)):
        if number < 0:
            raise ParamsError(f"linear.{name}", f"must not be negative, got {number}")
    if high < 0:
        raise ParamsError("linear.max", f"must not be negative (0 means no maximum), got {high}")
    low = low or 1  # CPA: "Defaulting min replicas count to 1"
    for name, number in (("min", low), ("max", high)):
        if number > INT32_MAX:
            raise ParamsError(f"linear.{name}", f"must be at most {INT32_MAX}")
    if high and high < low:
        raise ParamsError("linear.max", f"must be at least min ({low}), got {high}")
    if cores == 0 and nodes == 0:
        raise ParamsError(
            "linear", "needs coresPerReplica or nodesPerReplica (greater than 0); both are missing"
        )
    return LinearParams(
        cores_per_replica=cores,
        nodes_per_replica=nodes,
        min_replicas=low,
        max_replicas=high,
        prevent_single_point_failure=v.get("preventSinglePointFailure", False),
        include_unschedulable_nodes=v.get("includeUnschedulableNodes", False),
    )


def _parse_ladder(body: Mapping[str, Any]) -> LadderParams:
    v = _read_fields("ladder", body, LADDER_FIELDS)
    explicit = {k.lower(): value for k, value in body.items()}
    for key in ("coresToReplicas", "nodesToReplicas"):
        if explicit.get(key.lower()) == []:
            raise ParamsError(f"ladder.{key}", "must have at least one [threshold, replicas] step")
    if not v.get("coresToReplicas") and not v.get("nodesToReplicas"):
        # CPA would scale the target to zero; a typo must not take CoreDNS down.
        raise ParamsError("ladder", "needs coresToReplicas or nodesToReplicas (or both)")
    return LadderParams(
        cores_to_replicas=_sorted_steps(v.get("coresToReplicas", ())),
        nodes_to_replicas=_sorted_steps(v.get("nodesToReplicas", ())),
        include_unschedulable_nodes=v.get("includeUnschedulableNodes", False),
    )


def _sorted_steps(steps: tuple[Step, ...]) -> tuple[Step, ...]:
    return tuple(sorted(steps, key=lambda step: step[0]))


def params_to_config(params: Params) -> dict[str, Any]:
    """Back to CPA's JSON shape, e.g. for display or a ConfigMap (min shows its effective 1)."""
    if isinstance(params, LinearParams):
        return {
            "linear": {
                "coresPerReplica": _plain(params.cores_per_replica),
                "nodesPerReplica": _plain(params.nodes_per_replica),
                "min": params.min_replicas,
                "max": params.max_replicas,
                "preventSinglePointFailure": params.prevent_single_point_failure,
                "includeUnschedulableNodes": params.include_unschedulable_nodes,
            }
        }
    ladder: dict[str, Any] = {}
    if params.cores_to_replicas:
        ladder["coresToReplicas"] = [list(step) for step in params.cores_to_replicas]
    if params.nodes_to_replicas:
        ladder["nodesToReplicas"] = [list(step) for step in params.nodes_to_replicas]
    ladder["includeUnschedulableNodes"] = params.include_unschedulable_nodes
    return {"ladder": ladder}


def _plain(number: float) -> int | float:
    return int(number) if number.is_integer() else number


# --- formulas ---------------------------------------------------------------------------------


def replicas(params: Params, status: ClusterStatus) -> int:
    """The replica count CPA 1.10 would set for this cluster."""
    if isinstance(params, LinearParams):
        return _linear(params, status)
    return _ladder(params, status)


def _measured(status: ClusterStatus, include_unschedulable: bool) -> tuple[int, int]:
    """(nodes, cores) the formula sees: cordoned and NotReady nodes count only when asked."""
    if include_unschedulable:
        return status.total_nodes, status.total_cores
    return status.schedulable_nodes, status.schedulable_cores


def _linear(p: LinearParams, status: ClusterStatus) -> int:
    nodes, cores = _measured(status, p.include_unschedulable_nodes)
    from_cores = _linear_dimension(p, cores, p.cores_per_replica)
    from_nodes = _linear_dimension(p, nodes, p.nodes_per_replica)
    if p.prevent_single_point_failure and nodes > 1:
        from_nodes = max(from_nodes, 2)  # after the max clamp, as in CPA
    return max(from_cores, from_nodes)


def _linear_dimension(p: LinearParams, resources: int, per_replica: float) -> int:
    if per_replica == 0:
        return 1
    wanted = resources / per_replica  # float64 division, like CPA's
    whole = math.ceil(wanted) if wanted < INT32_MAX else INT32_MAX  # a tiny perReplica
    if p.max_replicas:
        whole = min(p.max_replicas, whole)
    return max(p.min_replicas, whole)


def _ladder(p: LadderParams, status: ClusterStatus) -> int:
    nodes, cores = _measured(status, p.include_unschedulable_nodes)
    return max(_step_for(cores, p.cores_to_replicas), _step_for(nodes, p.nodes_to_replicas))


def _step_for(resources: int, steps: tuple[Step, ...]) -> int:
    """Replicas of the last step whose threshold <= resources; below them all, the first's."""
    if not steps:
        return 0
    chosen = steps[0][1]
    for threshold, count in steps:
        if threshold > resources:
            break
        chosen = count
    return chosen


# --- cluster status from nodes ----------------------------------------------------------------

# A label selector requirement: (key, operator, value); operators "=", "!=", "exists", "!exists".
Requirement = tuple[str, str, str]
Taint = tuple[str, str | None, str | None]  # (key, value or any, effect or any)

_LABEL_NAME = r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_LABEL_KEY = re.compile(rf"(?:[a-z0-9](?:[-a-z0-9.]{{0,251}}[a-z0-9])?/)?{_LABEL_NAME}", re.ASCII)
_LABEL_VALUE = re.compile(rf"(?:{_LABEL_NAME})?", re.ASCII)
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def cluster_status(
    nodes: Iterable[Mapping[str, Any]],
    selector: Mapping[str, str] | str | None = None,
    skip_taints: Iterable[str | Mapping[str, Any]] = (),
) -> ClusterStatus:
    """Count nodes (Kubernetes Node JSON) as CPA does, over those the selector matches and that
    carry none of `skip_taints`. ValueError for a bad selector, taint or CPU quantity."""
    requirements = parse_selector(selector)
    taints = tuple(parse_taint(t) for t in skip_taints)
    total_nodes = schedulable_nodes = total_nano = schedulable_nano = 0
    for node in nodes:
        if not _selected(node, requirements) or _tainted(node, taints):
            continue
        nano = _allocatable_nanocores(node)
        total_nodes += 1
        total_nano += nano
        if is_schedulable(node):
            schedulable_nodes += 1
            schedulable_nano += nano
    return ClusterStatus(
        total_nodes=total_nodes,
        schedulable_nodes=schedulable_nodes,
        total_cores=_ceil_div(total_nano, NANO),
        schedulable_cores=_ceil_div(schedulable_nano, NANO),
    )


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def is_schedulable(node: Mapping[str, Any]) -> bool:
    """Not cordoned (spec.unschedulable) and Ready=True: a node that takes new pods."""
    if section(node, "spec").get("unschedulable") is True:
        return False
    conditions = section(node, "status").get("conditions") or []
    return any(
        isinstance(c, Mapping) and c.get("type") == "Ready" and c.get("status") == "True"
        for c in conditions
    )


def _allocatable_nanocores(node: Mapping[str, Any]) -> int:
    """Allocatable CPU in nanocores; summed exactly per cluster and only then rounded up to
    whole cores, as CPA does (3 x 3920m is 12 cores, not 3 x 4). Absent means 0, as in CPA."""
    cpu = section(section(node, "status"), "allocatable").get("cpu")
    if cpu is None:
        return 0
    name = section(node, "metadata").get("name", "?")
    try:
        value = parse_quantity(cpu)
    except ValueError as e:
        raise ValueError(f"node {name}: allocatable cpu: {e}") from None
    if value < 0:
        raise ValueError(f"node {name}: allocatable cpu must not be negative, got {cpu!r}")
    return ceil_scaled(value, 9)


def parse_selector(selector: Mapping[str, str] | str | None) -> tuple[Requirement, ...]:
    """A node label selector: a dict of equality matches, or an equality-based selector string
    "key=value,key2!=value,key3,!key4" ("==" also means equal; "key3" = has the label, "!key4" =
    lacks it). Set-based forms (in, notin) are not supported. All requirements must hold."""
    if selector is None:
        return ()
    if isinstance(selector, Mapping):
        return tuple(_requirement(str(k), "=", v) for k, v in selector.items())
    if not isinstance(selector, str):
        raise ValueError(f"node selector must be a string or a mapping, not {selector!r}")
    if not selector.strip():
        return ()
    return tuple(_parse_term(term.strip()) for term in selector.split(","))


def _parse_term(term: str) -> Requirement:
    if "(" in term or re.search(r"\s(in|notin)\b", term):
        raise ValueError(
            f"selector {term!r}: set-based selectors (in, notin) are not supported; "
            "use key=value, key!=value, key or !key"
        )
    for op, canonical in (("!=", "!="), ("==", "="), ("=", "=")):
        if op in term:
            key, _, value = term.partition(op)
            return _requirement(key.strip(), canonical, value.strip())
    if term.startswith("!"):
        return _requirement(term[1:].strip(), "!exists", "")
    return _requirement(term, "exists", "")


def _requirement(key: str, op: str, value: Any) -> Requirement:
    if not _LABEL_KEY.fullmatch(key):
        raise ValueError(f"selector: {key!r} is not a valid label key")
    if not isinstance(value, str) or not _LABEL_VALUE.fullmatch(value):
        raise ValueError(f"selector: {value!r} is not a valid value for label {key!r}")
    return key, op, value


def _selected(node: Mapping[str, Any], requirements: tuple[Requirement, ...]) -> bool:
    labels = section(node, "metadata").get("labels") or {}
    return all(_holds(labels, r) for r in requirements)


def _holds(labels: Mapping[str, Any], requirement: Requirement) -> bool:
    key, op, value = requirement
    if op == "exists":
        return key in labels
    if op == "!exists":
        return key not in labels
    if op == "!=":  # as in Kubernetes, a node without the label matches key!=value
        return labels.get(key) != value
    return labels.get(key) == value


def parse_taint(spec: str | Mapping[str, Any]) -> Taint:
    """A taint to skip: "key", "key=value", "key:Effect" or "key=value:Effect" (kubectl taint
    syntax), or a {key, value, effect} mapping. Missing value or effect matches any."""
    if isinstance(spec, Mapping):
        key, value, effect = spec.get("key"), spec.get("value"), spec.get("effect")
    elif isinstance(spec, str):
        head, _, effect_text = spec.partition(":")
        key_text, eq, value_text = head.partition("=")
        key, value, effect = key_text, (value_text if eq else None), (effect_text or None)
    else:
        raise ValueError(f"taint must be a string or a mapping, not {spec!r}")
    if not isinstance(key, str) or not _LABEL_KEY.fullmatch(key):
        raise ValueError(f"taint {spec!r}: {key!r} is not a valid taint key")
    if value is not None and (not isinstance(value, str) or not _LABEL_VALUE.fullmatch(value)):
        raise ValueError(f"taint {spec!r}: {value!r} is not a valid taint value")
    if effect is not None and effect not in TAINT_EFFECTS:
        raise ValueError(f"taint {spec!r}: effect must be one of {', '.join(TAINT_EFFECTS)}")
    return key, value, effect


def _tainted(node: Mapping[str, Any], skip: tuple[Taint, ...]) -> bool:
    if not skip:
        return False
    taints = section(node, "spec").get("taints") or []
    return any(
        isinstance(t, Mapping) and _taint_matches(t, wanted) for t in taints for wanted in skip
    )


def _taint_matches(taint: Mapping[str, Any], wanted: Taint) -> bool:
    key, value, effect = wanted
    return (
        taint.get("key") == key
        and (value is None or (taint.get("value") or "") == value)
        and (effect is None or taint.get("effect") == effect)
    )
