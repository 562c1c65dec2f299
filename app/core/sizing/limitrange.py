"""A namespace's LimitRange objects, reduced to what sizing a pod must respect.

kube-apiserver's LimitRanger (kubernetes/kubernetes `plugin/pkg/admission/limitranger/admission.go`)
first fills a container's missing requests and limits from the Container items' `defaultRequest`
and `default` (its mutating phase, which runs before the mutating webhooks: the webhook already
sees them), then, after all mutating webhooks, rejects a pod whose containers (type `Container`:
`min`, `max`, `maxLimitRequestRatio`, each container and init container) or whose effective sums
(type `Pod`) fall outside an item. So the webhook must never write values outside them: a
recommendation that does not fit would turn into a failed pod creation.

The API server stores a LimitRange with its defaults filled in (`SetDefaults_LimitRangeItem` in
`pkg/apis/core/v1/defaults.go`): for a Container item a missing `default` is the `max`, a missing
`defaultRequest` is the `default`, else the `min`. `defaulted()` re-derives that, so items built by
hand behave as the ones read from a cluster.

Quantities arrive as strings; the caller passes the parser (`QuantityParser`), so this module stays
free of the Kubernetes client (the webhook passes `app.core.quantity.parse_amount`). A ratio is a
plain number ("4", "1.5"), kept exact as a Fraction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from app.core.quantity import parse_quantity

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
    default_request: Mapping[str, int] = field(default_factory=dict)
    max_limit_request_ratio: Mapping[str, Fraction] = field(default_factory=dict)

    def defaulted(self) -> LimitRangeItem:
        """The item as the API server stores it (SetDefaults_LimitRangeItem; Container only)."""
        if self.type != "Container":
            return self
        default = {**self.max, **self.default}
        request = {**self.min, **default, **self.default_request}
        if default == self.default and request == self.default_request:
            return self
        return replace(self, default=default, default_request=request)


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


def _ratios(doc: Any) -> dict[str, Fraction]:
    out: dict[str, Fraction] = {}
    if not isinstance(doc, Mapping):
        return out
    for res in RESOURCES:
        if res in doc:
            try:
                value = Fraction(parse_quantity(doc[res]))
            except ValueError:
                continue
            if value > 0:
                out[res] = value
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
                default_request=_amounts(item.get("defaultRequest"), parse),
                max_limit_request_ratio=_ratios(item.get("maxLimitRequestRatio")),
            ).defaulted()
        )
    return items


def merged(items: Iterable[LimitRangeItem], type_: str) -> LimitRangeItem | None:
    """The strictest bounds of all items of `type_`: the highest min, the lowest max and ratio.

    Of several defaults the first wins, as the first LimitRange LimitRanger applies does.
    """
    lo: dict[str, int] = {}
    hi: dict[str, int] = {}
    default: dict[str, int] = {}
    default_request: dict[str, int] = {}
    ratio: dict[str, Fraction] = {}
    found = False
    for item in items:
        if item.type != type_:
            continue
        found = True
        item = item.defaulted()
        for res, v in item.min.items():
            lo[res] = max(lo.get(res, v), v)
        for res, v in item.max.items():
            hi[res] = min(hi.get(res, v), v)
        for res, r in item.max_limit_request_ratio.items():
            ratio[res] = min(ratio.get(res, r), r)
        for res, v in item.default.items():
            default.setdefault(res, v)
        for res, v in item.default_request.items():
            default_request.setdefault(res, v)
    if not found:
        return None
    return LimitRangeItem(type_, lo, hi, default, default_request, ratio)
