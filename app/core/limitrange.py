"""A namespace's LimitRange objects, reduced to what sizing a pod must respect.

kube-apiserver's LimitRanger rejects a pod whose containers (type `Container`) or whose sum over
containers (type `Pod`) fall outside `min`/`max`, so the webhook must never write values outside
them: a recommendation that does not fit would turn into a failed pod creation. Several LimitRange
objects in one namespace all apply, so they are merged into the strictest bounds.

Quantities arrive as strings; the caller passes the parser (`QuantityParser`), so this module stays
free of the Kubernetes client (the webhook passes `app.kube.quantity.quantity_amount`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

RESOURCES = ("cpu", "memory")

# (resource, quantity) -> millicores for cpu, bytes for memory; raises ValueError when unreadable.
QuantityParser = Callable[[str, Any], int]


@dataclass(frozen=True)
class LimitRangeItem:
    """One `spec.limits[]` entry, in millicores / bytes. `default` is the default *limit*."""

    type: str  # "Container" | "Pod"
    min: Mapping[str, int] = field(default_factory=dict)
    max: Mapping[str, int] = field(default_factory=dict)
    default: Mapping[str, int] = field(default_factory=dict)


def _amounts(doc: Any, parse: QuantityParser) -> dict[str, int]:
    out: dict[str, int] = {}
    if not isinstance(doc, Mapping):
        return out
    for res in RESOURCES:
        if res in doc:
            try:
                out[res] = parse(res, doc[res])
            except ValueError:
                continue  # the API server validated it; a value we cannot read is no bound
    return out


def parse_limit_range(obj: Mapping[str, Any], parse: QuantityParser) -> list[LimitRangeItem]:
    """The Container and Pod items of a LimitRange object (its JSON as the API returns it)."""
    spec = obj.get("spec")
    limits = spec.get("limits") if isinstance(spec, Mapping) else None
    items = []
    for item in limits if isinstance(limits, list) else []:
        if not isinstance(item, Mapping) or item.get("type") not in ("Container", "Pod"):
            continue
        items.append(
            LimitRangeItem(
                type=str(item["type"]),
                min=_amounts(item.get("min"), parse),
                max=_amounts(item.get("max"), parse),
                default=_amounts(item.get("default"), parse),
            )
        )
    return items


def merged(items: Iterable[LimitRangeItem], type_: str) -> LimitRangeItem | None:
    """The strictest bounds of all items of `type_`: the highest min, the lowest max.

    Of several defaults the first wins, as the first LimitRange LimitRanger applies does.
    """
    lo: dict[str, int] = {}
    hi: dict[str, int] = {}
    default: dict[str, int] = {}
    found = False
    for item in items:
        if item.type != type_:
            continue
        found = True
        for res, v in item.min.items():
            lo[res] = max(lo.get(res, v), v)
        for res, v in item.max.items():
            hi[res] = min(hi.get(res, v), v)
        for res, v in item.default.items():
            default.setdefault(res, v)
    return LimitRangeItem(type_, lo, hi, default) if found else None
