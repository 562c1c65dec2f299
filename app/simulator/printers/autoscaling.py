"""autoscaling printers: v2 horizontal pod autoscalers and the v1 Scale subresource, re-derived
from kubernetes/kubernetes `pkg/printers/internalversion/printers.go`
(printHorizontalPodAutoscaler, formatHPAMetrics, printScale and their columns)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.simulator.apiserver import quantity
from app.simulator.printers.common import (
    AGE,
    NAME,
    Cells,
    Column,
    Obj,
    Printer,
    age,
    integer,
    items,
    name,
    section,
)

_UNKNOWN = "<unknown>"
_SHOWN = 2  # formatHPAMetrics lists two metrics, then "+ N more..."


def _qty(value: Any) -> str:
    """`(*resource.Quantity).String()`: canonical form, `<nil>` for an unset one."""
    if value is None:
        return "<nil>"
    try:
        return quantity.canonical(value)
    except ValueError:
        return str(value)


def _status_source(statuses: list[Any], i: int, key: str) -> Mapping[str, Any] | None:
    """`statuses[i].<key>` when the status list is that long and the source is set."""
    if i >= len(statuses) or not isinstance(statuses[i], Mapping):
        return None
    found = statuses[i].get(key)
    return found if isinstance(found, Mapping) else None


def _value_metric(spec: Mapping[str, Any], current: Mapping[str, Any] | None) -> str:
    """External and Object metrics: an average value target, or a plain value target."""
    target = section(spec, "target")
    now = section(current, "current") if current is not None else None
    if target.get("averageValue") is not None:
        shown = _UNKNOWN
        if now is not None and now.get("averageValue") is not None:
            shown = _qty(now["averageValue"])
        return f"{shown}/{_qty(target['averageValue'])} (avg)"
    shown = _qty(now.get("value")) if now is not None else _UNKNOWN
    return f"{shown}/{_qty(target.get('value'))}"


def _resource_metric(spec: Mapping[str, Any], current: Mapping[str, Any] | None) -> str:
    """Resource and ContainerResource metrics: `cpu: 40%/80%` or `memory: 1Gi/2Gi`."""
    target, res = section(spec, "target"), str(spec.get("name") or "")
    now = section(current, "current") if current is not None else None
    if target.get("averageValue") is not None:
        shown = _qty(now.get("averageValue")) if now is not None else _UNKNOWN
        return f"{res}: {shown}/{_qty(target['averageValue'])}"
    shown = _UNKNOWN
    if now is not None and now.get("averageUtilization") is not None:
        shown = f"{integer(now['averageUtilization'])}%"
    goal = "<auto>"
    if target.get("averageUtilization") is not None:
        goal = f"{integer(target['averageUtilization'])}%"
    return f"{res}: {shown}/{goal}"


_SOURCES = {
    "External": ("external", _value_metric),
    "Object": ("object", _value_metric),
    "Resource": ("resource", _resource_metric),
    "ContainerResource": ("containerResource", _resource_metric),
}


def _metric(spec: Mapping[str, Any], statuses: list[Any], i: int) -> str:
    kind = spec.get("type")
    if kind == "Pods":
        now = _status_source(statuses, i, "pods")
        shown = _qty(section(now, "current").get("averageValue")) if now is not None else _UNKNOWN
        return f"{shown}/{_qty(section(spec, 'pods', 'target').get('averageValue'))}"
    if kind not in _SOURCES:
        return "<unknown type>"
    key, fmt = _SOURCES[str(kind)]
    return fmt(section(spec, key), _status_source(statuses, i, key))


def format_metrics(specs: list[Any], statuses: list[Any]) -> str:
    """formatHPAMetrics: each metric's current/target, two of them at most."""
    if not specs:
        return "<none>"
    shown = [_metric(s if isinstance(s, Mapping) else {}, statuses, i) for i, s in enumerate(specs)]
    if len(shown) > _SHOWN:
        return f"{', '.join(shown[:_SHOWN])} + {len(shown) - _SHOWN} more..."
    return ", ".join(shown)


def hpa_cells(hpa: Obj, now: float) -> Cells:
    spec, status = section(hpa, "spec"), section(hpa, "status")
    ref = section(spec, "scaleTargetRef")
    min_replicas = spec.get("minReplicas")
    return [
        name(hpa),
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        format_metrics(items(spec.get("metrics")), items(status.get("currentMetrics"))),
        "<unset>" if min_replicas is None else str(integer(min_replicas)),
        integer(spec.get("maxReplicas")),
        integer(status.get("currentReplicas")),
        age(hpa, now),
    ]


HPAS = Printer(
    (
        NAME,
        Column("Reference", "string", "The scaled object (kind/name)."),
        Column("Targets", "string", "Each metric's current value against its target."),
        Column("MinPods", "string", "The lower replica bound."),
        Column("MaxPods", "string", "The upper replica bound."),
        Column("Replicas", "string", "The replicas the autoscaler last saw."),
        AGE,
    ),
    hpa_cells,
)


def scale_cells(scale: Obj, now: float) -> Cells:
    """printScale: the autoscaling/v1 Scale of a workload (`kubectl get --subresource=scale`)."""
    return [
        name(scale),
        integer(section(scale, "spec").get("replicas")),
        integer(section(scale, "status").get("replicas")),
        age(scale, now),
    ]


SCALES = Printer(
    (
        Column("Name", "string", NAME.description),  # no "name" format here, as upstream
        Column("Desired", "integer", "The replicas the spec asks for."),
        Column("Available", "integer", "The replicas the workload has."),
        AGE,
    ),
    scale_cells,
)

PRINTERS = {"HorizontalPodAutoscaler": HPAS, "Scale": SCALES}
