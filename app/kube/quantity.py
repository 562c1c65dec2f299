"""Kubernetes quantities -> rightsizer amounts (millicores, bytes), with the client's own parser.

A quantity above int64 (kube-apiserver accepts and stores "8Ei", 2^63 bytes) saturates at
`MAX_AMOUNT`, as `resource.Quantity`'s `Value()`/`MilliValue()` do (apimachinery
`pkg/api/resource`, `scaledValue`: an overflowing result saturates at the int64 bound): such a
limit means "unbounded", and a pod carrying one must still be sized, not refused.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, InvalidOperation
from typing import Any

from kubernetes.utils import parse_quantity

from app.core.resources import MAX_AMOUNT


def quantity_amount(resource: str, text: Any) -> int:
    """cpu -> millicores, anything else -> whole units (bytes), rounded up as Kubernetes does."""
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise ValueError("must be a quantity string such as '250m' or '512Mi'")
    try:
        value = parse_quantity(text)
    except (ValueError, InvalidOperation):
        raise ValueError(f"{text!r} is not a Kubernetes quantity") from None
    if not value.is_finite():  # "NaN" and "Infinity" parse, but compare and convert with errors
        raise ValueError(f"{text!r} is not a Kubernetes quantity")
    if value < 0:
        raise ValueError(f"{text!r} must not be negative")
    scaled = value * 1000 if resource == "cpu" else value
    if scaled >= MAX_AMOUNT:  # compared before converting: "1e999999" stays cheap
        return MAX_AMOUNT
    return int(scaled.to_integral_value(rounding=ROUND_CEILING))


def quantity_float(text: Any) -> float:
    """A quantity as a float in base units (cores, bytes): metrics need the precision of `n`."""
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise ValueError(f"{text!r} is not a quantity")
    try:
        value = float(parse_quantity(text))
    except (ValueError, InvalidOperation):
        raise ValueError(f"{text!r} is not a Kubernetes quantity") from None
    if value < 0:
        raise ValueError(f"{text!r} must not be negative")
    return value
