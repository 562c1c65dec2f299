"""The policy fields that say how and when pods are updated, beyond `updateMode` and
`minReplicas` (docs/policies.md, "When the updater acts" and "CPU startup boost"):

- `evictionRequirements`: VPA's `spec.updatePolicy.evictionRequirements`, a list of
  `{resources: [cpu, memory], changeRequirement: TargetHigherThanRequests}` (or
  `TargetLowerThanRequests`).
- `evictAfterOOMSeconds`: VPA's `spec.updatePolicy.evictAfterOOMSeconds` (at least 1).
- `inPlaceSkipDisruptionBudget`: per policy, VPA's updater flag
  `--in-place-skip-disruption-budget`.
- `startupBoost`: VPA's `spec.startupBoost` (and `containerPolicies[].startupBoost`):
  `{cpu: {type: Factor|Quantity, factor, quantity, durationSeconds}}`.
- `observationWindow`: rightsizer's own (AEP-9936's observation window, against the eviction
  loops of kubernetes/autoscaler #9362): `{minHistorySeconds, minIntervalSeconds,
  windowSeconds, maxReplacementsPerReplica}`, whole numbers (app.core.sizing.observation).

Validation re-derives VPA 1.7's (vertical-pod-autoscaler pkg/admission-controller/resource/vpa/
validation.go and the CRD's enums in deploy/vpa-v1-crd-gen.yaml): a factor is required with
`Factor` and at least 1, a quantity is required with `Quantity` and a whole number of millicores,
`evictAfterOOMSeconds` is at least 1. rightsizer is stricter where VPA would accept what it
cannot act on: only `cpu` and `memory` in `resources` (VPA compares any resource name, and one it
does not size never changes), at least one of them, and no negative `durationSeconds`. These
fields are stored as written, in the policy row's `update_options`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from app.core.quantity import parse_quantity
from app.core.update_policy import (
    BOOST_TYPES,
    CHANGE_REQUIREMENTS,
    FACTOR,
    MAX_WINDOW_SECONDS,
    EvictionRequirement,
    ObservationWindow,
    StartupBoost,
)
from app.documents.fields import FieldError, unknown_fields

UPDATE_FIELDS = (
    "evictionRequirements",
    "evictAfterOOMSeconds",
    "inPlaceSkipDisruptionBudget",
    "startupBoost",
    "observationWindow",
)
# observationWindow's fields: (field name, ObservationWindow attribute, least, most)
WINDOW_FIELDS = (
    ("minHistorySeconds", "min_history_seconds", 0, MAX_WINDOW_SECONDS),
    ("minIntervalSeconds", "min_interval_seconds", 0, MAX_WINDOW_SECONDS),
    ("windowSeconds", "window_seconds", 1, MAX_WINDOW_SECONDS),
    ("maxReplacementsPerReplica", "max_replacements_per_replica", 1, 1000),
)
REQUIREMENT_FIELDS = {"resources", "changeRequirement"}
BOOST_FIELDS = {"cpu"}
CPU_BOOST_FIELDS = {"type", "factor", "quantity", "durationSeconds"}
REQUIREMENT_RESOURCES = ("cpu", "memory")
INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class UpdateFields:
    eviction_requirements: tuple[EvictionRequirement, ...] = ()
    evict_after_oom_seconds: int | None = None
    in_place_skip_disruption_budget: bool | None = None
    startup_boost: StartupBoost | None = None
    observation_window: ObservationWindow | None = None


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _unknown(doc: Mapping[str, Any], known: set[str], path: str, errors: list[FieldError]) -> None:
    errors += unknown_fields(doc, known, path)


def _requirement(item: Any, path: str, errors: list[FieldError]) -> EvictionRequirement | None:
    if not isinstance(item, dict):
        errors.append(FieldError(path, "must be an object with resources and changeRequirement"))
        return None
    _unknown(item, REQUIREMENT_FIELDS, path, errors)
    ok = True
    resources = item.get("resources")
    if (
        not isinstance(resources, list)
        or not resources
        or not all(r in REQUIREMENT_RESOURCES for r in resources)
    ):
        errors.append(
            FieldError(f"{path}.resources", "required: a non-empty list of cpu and memory")
        )
        ok = False
    change = item.get("changeRequirement")
    if change not in CHANGE_REQUIREMENTS:
        errors.append(
            FieldError(
                f"{path}.changeRequirement", f"required: one of {', '.join(CHANGE_REQUIREMENTS)}"
            )
        )
        ok = False
    if not ok:
        return None
    assert isinstance(resources, list)
    return EvictionRequirement(tuple(dict.fromkeys(map(str, resources))), str(change))


def _millicores(value: Any, path: str, errors: list[FieldError]) -> int | None:
    """A CPU quantity that is a whole number of millicores (VPA's validateCPUResolution)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        errors.append(FieldError(path, "must be a CPU quantity such as '500m' or 2"))
        return None
    try:
        cores = parse_quantity(value if isinstance(value, str | int) else repr(value))
    except ValueError as e:
        errors.append(FieldError(path, str(e)))
        return None
    milli = cores * 1000
    if cores < 0 or milli != milli.to_integral_value():
        errors.append(FieldError(path, f"{value!r} must be a whole number of millicores, >= 0"))
        return None
    return int(milli) if milli < Decimal(2**62) else None


def _cpu_boost(doc: Any, path: str, errors: list[FieldError]) -> StartupBoost | None:
    if not isinstance(doc, dict):
        errors.append(FieldError(path, "must be an object with type (Factor or Quantity)"))
        return None
    _unknown(doc, CPU_BOOST_FIELDS, path, errors)
    kind = doc.get("type")
    if kind not in BOOST_TYPES:
        errors.append(FieldError(f"{path}.type", f"required: one of {', '.join(BOOST_TYPES)}"))
        return None
    factor = doc.get("factor")
    quantity = doc.get("quantity")
    duration = 0 if doc.get("durationSeconds") is None else doc["durationSeconds"]
    n = len(errors)
    if kind == FACTOR:
        if factor is None:
            errors.append(FieldError(f"{path}.factor", "required when type is Factor"))
        elif not _whole(factor) or not 1 <= factor <= INT32_MAX:
            errors.append(FieldError(f"{path}.factor", "must be a whole number >= 1"))
        if quantity is not None:
            errors.append(FieldError(f"{path}.quantity", "only with type Quantity"))
    else:
        if quantity is None:
            errors.append(FieldError(f"{path}.quantity", "required when type is Quantity"))
        if factor is not None:
            errors.append(FieldError(f"{path}.factor", "only with type Factor"))
    milli = _millicores(quantity, f"{path}.quantity", errors) if quantity is not None else None
    if not _whole(duration) or not 0 <= duration <= INT32_MAX:
        errors.append(FieldError(f"{path}.durationSeconds", "must be a whole number >= 0"))
    if len(errors) > n:
        return None
    return StartupBoost(str(kind), factor, milli, int(duration))


def parse_startup_boost(doc: Any, path: str, errors: list[FieldError]) -> StartupBoost | None:
    """`startupBoost` (a policy's or a container's): None when absent, invalid (reported in
    `errors`) or without `cpu` (VPA applies no boost then)."""
    if doc is None:
        return None
    if not isinstance(doc, dict):
        errors.append(FieldError(path, "must be an object such as {cpu: {type: Factor, ...}}"))
        return None
    _unknown(doc, BOOST_FIELDS, path, errors)
    if doc.get("cpu") is None:
        return None
    return _cpu_boost(doc["cpu"], f"{path}.cpu", errors)


def parse_observation_window(doc: Any, errors: list[FieldError]) -> ObservationWindow | None:
    """`observationWindow`: None when absent or invalid (each bad field added to `errors`)."""
    if doc is None:
        return None
    path = "observationWindow"
    if not isinstance(doc, dict):
        errors.append(FieldError(path, "must be an object such as {windowSeconds: 3600}"))
        return None
    _unknown(doc, {f for f, *_ in WINDOW_FIELDS}, path, errors)
    n = len(errors)
    values: dict[str, int] = {}
    for name, attr, least, most in WINDOW_FIELDS:
        value = doc.get(name)
        if value is None:
            continue
        if not _whole(value) or not least <= value <= most:
            errors.append(
                FieldError(f"{path}.{name}", f"must be a whole number from {least} to {most}")
            )
            continue
        values[attr] = value
    if len(errors) > n:
        return None
    return ObservationWindow(**values)


def parse_update_fields(doc: Mapping[str, Any], errors: list[FieldError]) -> UpdateFields:
    """The fields of UPDATE_FIELDS in a policy document; each bad one is added to `errors`."""
    requirements: list[EvictionRequirement] = []
    items = doc.get("evictionRequirements")
    if items is not None and not isinstance(items, list):
        errors.append(FieldError("evictionRequirements", "must be a list"))
    for i, item in enumerate(items if isinstance(items, list) else []):
        r = _requirement(item, f"evictionRequirements[{i}]", errors)
        if r is not None:
            requirements.append(r)
    oom = doc.get("evictAfterOOMSeconds")
    if oom is not None and (not _whole(oom) or not 1 <= oom <= INT32_MAX):
        errors.append(FieldError("evictAfterOOMSeconds", "must be a whole number >= 1"))
        oom = None
    skip = doc.get("inPlaceSkipDisruptionBudget")
    if skip is not None and not isinstance(skip, bool):
        errors.append(FieldError("inPlaceSkipDisruptionBudget", "must be true or false"))
        skip = None
    boost = parse_startup_boost(doc.get("startupBoost"), "startupBoost", errors)
    window = parse_observation_window(doc.get("observationWindow"), errors)
    return UpdateFields(tuple(requirements), oom, skip, boost, window)


def stored_options(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """The fields of UPDATE_FIELDS as the document has them (the row's `update_options`)."""
    out = {k: doc[k] for k in UPDATE_FIELDS if doc.get(k) is not None}
    return out or None


def container_boosts(items: Any, errors: list[FieldError]) -> dict[str, StartupBoost]:
    """`containerPolicies[].startupBoost` by containerName (the rest of each entry is checked by
    app.documents.policy.parse_container_policies)."""
    out: dict[str, StartupBoost] = {}
    for i, cp in enumerate(items if isinstance(items, list) else []):
        if not isinstance(cp, dict) or cp.get("startupBoost") is None:
            continue
        path = f"containerPolicies[{i}].startupBoost"
        boost = parse_startup_boost(cp["startupBoost"], path, errors)
        name = cp.get("containerName", "*")
        if boost is not None and isinstance(name, str):
            out[name] = boost
    return out
