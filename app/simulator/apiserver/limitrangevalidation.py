"""A LimitRange and a Lease as kube-apiserver validates them (422), re-derived from
kubernetes/kubernetes pkg/apis/core/validation/validation.go ValidateLimitRange (each resource's
min <= defaultRequest <= default <= max, min <= max, maxLimitRequestRatio >= 1; a Pod limit has
no defaults) and pkg/apis/coordination/validation/validation.go ValidateLeaseSpec. Pure."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from app.simulator.apiserver import quantity
from app.simulator.apiserver.errors import FieldError

_SECTIONS = ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")


def _values(limit: dict[str, Any], section: str) -> dict[str, tuple[Decimal, str]]:
    out = {}
    values = limit.get(section)
    for name, raw in (values if isinstance(values, dict) else {}).items():
        try:
            out[name] = (quantity.parse(raw), quantity.canonical(raw))
        except ValueError:
            continue  # the decoder refuses it first
    return out


def limit_range_errors(obj: dict[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    limits = (obj.get("spec") or {}).get("limits")
    for i, limit in enumerate(limits if isinstance(limits, list) else []):
        if not isinstance(limit, dict):
            continue
        path = f"spec.limits[{i}]"
        if limit.get("type") == "Pod":
            for section in ("default", "defaultRequest"):
                if limit.get(section):
                    errs.append(
                        FieldError(
                            f"{path}.{section}",
                            "FieldValueForbidden",
                            "may not be specified when `type` is 'Pod'",
                        )
                    )
        v = {s: _values(limit, s) for s in _SECTIONS}
        for k in sorted(set().union(*(set(x) for x in v.values()))):
            errs += _resource_errors(path, k, *(v[s].get(k) for s in _SECTIONS))
    return errs


Q = tuple[Decimal, str] | None


def _resource_errors(path: str, k: str, mx: Q, mn: Q, df: Q, dr: Q, ratio: Q) -> list[FieldError]:
    errs = []

    def add(section: str, value: str, message: str) -> None:
        errs.append(FieldError(f"{path}.{section}[{k}]", "FieldValueInvalid", message, value))

    if mn and mx and mn[0] > mx[0]:
        add("min", mn[1], f"min value {mn[1]} is greater than max value {mx[1]}")
    if dr and mn and mn[0] > dr[0]:
        add(
            "defaultRequest",
            dr[1],
            f"min value {mn[1]} is greater than default request value {dr[1]}",
        )
    if dr and mx and dr[0] > mx[0]:
        add(
            "defaultRequest",
            dr[1],
            f"default request value {dr[1]} is greater than max value {mx[1]}",
        )
    if dr and df and dr[0] > df[0]:
        add(
            "defaultRequest",
            dr[1],
            f"default request value {dr[1]} is greater than default limit value {df[1]}",
        )
    if df and mn and mn[0] > df[0]:
        add("default", mn[1], f"min value {mn[1]} is greater than default value {df[1]}")
    if df and mx and df[0] > mx[0]:
        add("default", mx[1], f"default value {df[1]} is greater than max value {mx[1]}")
    if ratio and ratio[0] < 1:
        add("maxLimitRequestRatio", ratio[1], f"ratio {ratio[1]} is less than 1")
    return errs


def lease_errors(obj: dict[str, Any]) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errs = []
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        errs.append(
            FieldError(
                "spec.leaseDurationSeconds", "FieldValueInvalid", "must be greater than 0", duration
            )
        )
    transitions = spec.get("leaseTransitions")
    if isinstance(transitions, int) and transitions < 0:
        errs.append(
            FieldError(
                "spec.leaseTransitions",
                "FieldValueInvalid",
                "must be greater than or equal to 0",
                transitions,
            )
        )
    return errs
