"""Proportional scaler documents: `name`, `target` {namespace, kind, name}, `params` in
cluster-proportional-autoscaler's ConfigMap JSON ({"linear": {...}} or {"ladder": {...}}; a mode's
value may also be the JSON text a ConfigMap holds), optional `nodeSelector` ("key=value,..."),
`skipTaints`, `enabled`, optional HPA-style `behavior`.

Checked with the parsers the scaler job itself uses (app/core/scaling), so a scaler the API or the
CLI accepted is one the job can run; every problem is reported with the path of its field.
"""

from __future__ import annotations

import json
from typing import Any

from app.core.scaling.behavior import BehaviorError, Decision, parse_behavior
from app.core.scaling.proportional import (
    ClusterStatus,
    ParamsError,
    ParamsUnparsable,
    parse_params,
    parse_selector,
    parse_taint,
)
from app.documents.fields import FieldError, unknown_fields
from app.documents.policy import DNS_LABEL, DNS_SUBDOMAIN

SCALER_FIELDS = {"name", "target", "params", "nodeSelector", "skipTaints", "enabled", "behavior"}
SCALE_KINDS = ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet")


def validate_scaler_params(params: Any) -> list[FieldError]:
    """CPA params, checked by the same parser the scaler job uses: they can never disagree."""
    try:
        parse_params(params)
    except ParamsError as e:
        field = e.field if e.field.startswith("params") else f"params.{e.field}"
        return [FieldError(field, e.message, isinstance(e, ParamsUnparsable))]
    return []


def normalized_params(params: Any) -> dict[str, Any]:
    """Valid params with any JSON text decoded, as they are stored."""
    if isinstance(params, str):
        params = json.loads(params)
    return {mode: json.loads(doc) if isinstance(doc, str) else doc for mode, doc in params.items()}


def _target_errors(target: Any) -> list[FieldError]:
    if not isinstance(target, dict):
        return [FieldError("target", "required: an object with namespace, kind and name")]
    errors = unknown_fields(target, ("namespace", "kind", "name"), "target")
    ns, kind, name = target.get("namespace"), target.get("kind"), target.get("name")
    if not isinstance(ns, str) or not DNS_LABEL.fullmatch(ns):
        errors.append(FieldError("target.namespace", "required: a namespace name"))
    if kind not in SCALE_KINDS:
        errors.append(FieldError("target.kind", f"must be one of {', '.join(SCALE_KINDS)}"))
    if not isinstance(name, str) or not DNS_SUBDOMAIN.fullmatch(name):
        errors.append(FieldError("target.name", "required: the workload's name"))
    return errors


def validate_scaler(doc: dict[str, Any]) -> list[FieldError]:
    errors = unknown_fields(doc, SCALER_FIELDS)
    name = doc.get("name")
    if not isinstance(name, str) or not DNS_SUBDOMAIN.fullmatch(name):
        errors.append(FieldError("name", "required: lower-case letters, digits, '-' and '.'"))
    errors += _target_errors(doc.get("target"))
    if "params" not in doc:
        errors.append(FieldError("params", 'required: {"linear": {...}} or {"ladder": {...}}'))
    else:
        errors += validate_scaler_params(doc["params"])
    selector = doc.get("nodeSelector")
    if selector is not None:
        try:
            if not isinstance(selector, str) or len(selector) > 1024:
                raise ValueError("must be a string of at most 1024 characters")
            parse_selector(selector)
        except ValueError as e:
            errors.append(FieldError("nodeSelector", str(e)))
    taints = doc.get("skipTaints")
    if taints is not None:
        if not isinstance(taints, list) or not all(isinstance(t, str) for t in taints):
            errors.append(
                FieldError("skipTaints", 'must be a list such as ["key=value:NoSchedule"]')
            )
        else:
            for i, t in enumerate(taints):
                try:
                    parse_taint(t)
                except ValueError as e:
                    errors.append(FieldError(f"skipTaints[{i}]", str(e)))
    if "enabled" in doc and not isinstance(doc["enabled"], bool):
        errors.append(FieldError("enabled", "must be true or false"))
    if doc.get("behavior") is not None:
        try:
            parse_behavior(doc["behavior"])
        except BehaviorError as e:
            errors += [
                FieldError(f if f.startswith("behavior") else f"behavior.{f}", m)
                for f, m in e.errors
            ]
    return errors


def preview(
    current: int, proposed: int, decision: Decision, status: ClusterStatus
) -> dict[str, Any]:
    """What a scaler would do now, as `GET /api/v1/scalers/<name>/preview` and the offline
    `rightsizer scaler preview` both answer it."""
    return {
        "current": current,
        "proposed": proposed,
        "allowedNow": decision.replicas,
        "reason": decision.reason,
        "cluster": {
            "schedulableNodes": status.schedulable_nodes,
            "schedulableCores": status.schedulable_cores,
            "totalNodes": status.total_nodes,
            "totalCores": status.total_cores,
        },
    }
