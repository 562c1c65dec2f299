"""Policy documents (the JSON users write) -> validated core Policy objects.

One parser for every way a policy arrives (REST, CLI files, database rows, whose document
app.store.policy_codec gives back), so that a policy the API accepted is exactly the policy the
webhook, recommender and updater apply. Every problem is reported with the path of its field, all
at once.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from app.core.policy import (
    CLUSTER_WIDE,
    CONTAINER_MODES,
    CONTROLLED_VALUES,
    Policy,
)
from app.core.quantity import amount
from app.core.recommendation import RESOURCES, ContainerPolicy
from app.core.update_mode import UPDATE_MODE_ALIASES, UPDATE_MODES, UpdateMode
from app.documents.cluster_target import parse_cluster_target
from app.documents.fields import FieldError, unknown_fields
from app.documents.node_group_fields import (
    NODE_GROUP_FIELDS,
    parse_node_group_label,
)
from app.documents.placement_fields import (
    PLACEMENT_FIELDS,
    parse_placement,
)
from app.documents.recommender_fields import (
    RECOMMENDER_FIELDS,
    parse_recommender,
)
from app.documents.target import parse_target
from app.documents.update_fields import (
    UPDATE_FIELDS,
    container_boosts,
    parse_update_fields,
)

# Kubernetes' DNS-1123 label and subdomain. Use with fullmatch(): `match` with `$` would let a
# trailing newline through ("web\n"), which no Kubernetes name can hold.
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
DNS_SUBDOMAIN = re.compile(
    r"(?=.{1,253}\Z)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
)
INT32_MAX = 2**31 - 1  # the database column's range
# VPA 1.7 deprecates updateMode Auto (types.go: "Use explicit update modes ... instead"); the
# recommender reports it as the workload's ConfigDeprecated condition.
DEPRECATED_MODES = {
    "Auto": ("updateMode Auto is deprecated (VPA 1.7): it means Recreate; write Recreate",)
}
POLICY_FIELDS = {
    "name",
    "namespace",
    "target",
    "updateMode",
    "minReplicas",
    "containerPolicies",
    "clusters",  # app.documents.cluster_target
    *UPDATE_FIELDS,  # app.documents.update_fields
    *RECOMMENDER_FIELDS,  # app.documents.recommender_fields
    *NODE_GROUP_FIELDS,  # app.documents.node_group_fields
    *PLACEMENT_FIELDS,  # app.documents.placement_fields
}
CONTAINER_FIELDS = {
    "containerName",
    "mode",
    "minAllowed",
    "maxAllowed",
    "controlledResources",
    "controlledValues",
    "integerCPU",
    "startupBoost",  # app.documents.update_fields.container_boosts
}


class PolicyInvalid(ValueError):
    def __init__(self, errors: list[FieldError]) -> None:
        super().__init__("; ".join(f"{e.field}: {e.message}" for e in errors))
        self.errors = errors


def _resources(doc: Any, path: str, errors: list[FieldError]) -> dict[str, int]:
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        errors.append(FieldError(path, 'must be an object such as {"cpu": "100m"}'))
        return {}
    out = {}
    for res, text in doc.items():
        if res not in RESOURCES:
            errors.append(
                FieldError(
                    f"{path}.{res}", f"unknown resource; expected one of {', '.join(RESOURCES)}"
                )
            )
            continue
        try:
            out[res] = amount(res, text)
        except ValueError as e:
            errors.append(FieldError(f"{path}.{res}", str(e)))
    return out


def _choice(
    doc: dict[str, Any],
    key: str,
    choices: tuple[str, ...],
    default: str,
    path: str,
    errors: list[FieldError],
) -> str:
    value = doc.get(key, default)
    if isinstance(value, bool):
        errors.append(FieldError(f"{path}{key}", yaml_boolean(value, key, choices)))
        return default
    if value not in choices:
        errors.append(FieldError(f"{path}{key}", f"{value!r} is not one of {', '.join(choices)}"))
        return default
    return str(value)


def yaml_boolean(value: bool, key: str, choices: tuple[str, ...]) -> str:
    """The message for a boolean where a mode goes: YAML 1.1 (PyYAML, kubectl's sigs.k8s.io/yaml)
    reads an unquoted Off, No, On or Yes as a boolean, so `updateMode: Off` arrives as false."""
    word = "true" if value else "false"
    if not value and "Off" in choices:
        return (
            "false is a boolean, not a mode: YAML reads an unquoted Off as false; "
            f'quote it: {key}: "Off"'
        )
    return (
        f"{word} is a boolean (YAML reads unquoted On, Off, Yes, No as booleans); "
        f"expected one of {', '.join(choices)}"
    )


def parse_container_policies(
    doc: Any, path: str = "containerPolicies"
) -> tuple[tuple[ContainerPolicy, ...], list[FieldError]]:
    errors: list[FieldError] = []
    if doc is None:
        return (), errors
    if not isinstance(doc, list):
        return (), [FieldError(path, "must be a list")]
    out = []
    seen: set[str] = set()
    for i, cp in enumerate(doc):
        p = f"{path}[{i}]"
        if not isinstance(cp, dict):
            errors.append(FieldError(p, "must be an object"))
            continue
        errors += unknown_fields(cp, CONTAINER_FIELDS, p)
        name = cp.get("containerName", "*")
        if not isinstance(name, str) or not (name == "*" or DNS_LABEL.fullmatch(name)):
            errors.append(FieldError(f"{p}.containerName", "must be a container name or '*'"))
            name = "*"
        elif name in seen:
            errors.append(FieldError(f"{p}.containerName", f"{name!r} appears twice"))
        seen.add(name)
        mode = _choice(cp, "mode", CONTAINER_MODES, "Auto", f"{p}.", errors)
        values = _choice(
            cp, "controlledValues", CONTROLLED_VALUES, "RequestsAndLimits", f"{p}.", errors
        )
        lo = _resources(cp.get("minAllowed"), f"{p}.minAllowed", errors)
        hi = _resources(cp.get("maxAllowed"), f"{p}.maxAllowed", errors)
        for res in set(lo) & set(hi):
            if lo[res] > hi[res]:
                errors.append(FieldError(f"{p}.minAllowed.{res}", "is greater than maxAllowed"))
        controlled = cp.get("controlledResources", list(RESOURCES))
        if not isinstance(controlled, list) or not all(r in RESOURCES for r in controlled):
            errors.append(
                FieldError(f"{p}.controlledResources", f"must be a list of {', '.join(RESOURCES)}")
            )
            controlled = list(RESOURCES)
        integer = cp.get("integerCPU", False)
        if not isinstance(integer, bool):
            errors.append(FieldError(f"{p}.integerCPU", "must be true or false"))
            integer = False
        out.append(
            ContainerPolicy(
                name, mode, lo, hi, tuple(dict.fromkeys(controlled)), values, integer_cpu=integer
            )
        )
    return tuple(out), errors


def parse_policy(
    doc: Any,
    *,
    created: datetime | None = None,
    id_: int = 0,
    changed: datetime | None = None,
) -> Policy:
    """Raises PolicyInvalid listing every bad field."""
    if not isinstance(doc, dict):
        raise PolicyInvalid([FieldError("", "a policy must be a JSON object")])
    errors: list[FieldError] = unknown_fields(doc, POLICY_FIELDS)
    name, namespace = doc.get("name"), doc.get("namespace")
    if not isinstance(name, str) or not DNS_SUBDOMAIN.fullmatch(name):
        errors.append(FieldError("name", "required: lower-case letters, digits, '-' and '.'"))
    if not isinstance(namespace, str) or not (
        namespace == CLUSTER_WIDE or DNS_LABEL.fullmatch(namespace)
    ):
        errors.append(
            FieldError("namespace", "required: a namespace name, or '*' for a cluster default")
        )
    target = parse_target(doc.get("target"), namespace, errors)  # app.documents.target
    mode = doc.get("updateMode", "Off")
    if isinstance(mode, bool):
        errors.append(FieldError("updateMode", yaml_boolean(mode, "updateMode", UPDATE_MODES)))
        mode = "Off"
    elif not isinstance(mode, str) or (
        mode not in UPDATE_MODES and mode not in UPDATE_MODE_ALIASES
    ):
        errors.append(
            FieldError("updateMode", f"{mode!r} is not one of {', '.join(UPDATE_MODES)} (or Auto)")
        )
        mode = "Off"
    min_replicas = doc.get("minReplicas")
    if min_replicas is not None and (
        isinstance(min_replicas, bool)
        or not isinstance(min_replicas, int)
        or not 1 <= min_replicas <= INT32_MAX
    ):
        errors.append(
            FieldError("minReplicas", f"must be a whole number >= 1 (at most {INT32_MAX})")
        )
        min_replicas = None
    containers, cp_errors = parse_container_policies(doc.get("containerPolicies"))
    errors += cp_errors
    update = parse_update_fields(doc, errors)
    boosts = container_boosts(doc.get("containerPolicies"), errors)
    recommender = parse_recommender(doc, errors)
    node_group_label = parse_node_group_label(doc, target.kind, errors)
    placement = parse_placement(doc, errors)
    parse_cluster_target(doc, errors)  # read by the store (app.store.policies), not the Policy
    if errors:
        raise PolicyInvalid(errors)
    return Policy(
        name=name,  # type: ignore[arg-type]
        namespace=namespace,  # type: ignore[arg-type]
        target_kind=target.kind,
        target_name=target.name,
        target_selector=target.selector,
        update_mode=UpdateMode.of(str(mode)),
        min_replicas=min_replicas,
        container_policies=containers,
        eviction_requirements=update.eviction_requirements,
        evict_after_oom_seconds=update.evict_after_oom_seconds,
        in_place_skip_disruption_budget=update.in_place_skip_disruption_budget,
        startup_boost=update.startup_boost,
        observation_window=update.observation_window,
        container_boosts=boosts,
        deprecations=DEPRECATED_MODES.get(str(mode), ()),
        recommender=recommender,
        node_group_label=node_group_label,
        placement=placement,
        created=_unix(created) if created else 0.0,
        changed=max((_unix(t) for t in (created, changed) if t is not None), default=0.0),
        id=id_,
    )


def _unix(t: datetime) -> float:
    """Seconds since the epoch; a naive time (SQLite returns them) is UTC, as it was stored."""
    return (t if t.tzinfo is not None else t.replace(tzinfo=UTC)).timestamp()
