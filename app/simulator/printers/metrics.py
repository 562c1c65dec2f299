"""metrics.k8s.io/v1beta1 tables: PodMetrics and NodeMetrics as metrics-server prints them
(kubernetes-sigs/metrics-server `pkg/api/table.go` addPodMetricsToTable/addNodeMetricsToTable,
`pkg/api/pod.go` and `node.go` ConvertToTable).

The columns come from the first object: Name, then one `quantity` column per resource it
reports (sorted: cpu, memory), then Window. A pod's cell is the sum over its containers,
printed as `Quantity.String()` prints a sum (the format of the first value added). No objects:
no columns and no rows at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from app.simulator.apiserver import quantity
from app.simulator.printers.common import (
    Cells,
    Column,
    Obj,
    Printer,
    default_cells,
    items,
    name,
)


def _add(total: dict[str, tuple[Decimal, str]], usage: Any) -> None:
    for resource, value in (usage or {}).items() if isinstance(usage, Mapping) else ():
        try:
            amount = quantity.parse(value)
        except ValueError:
            continue
        have, fmt = total.get(resource, (Decimal(0), quantity.quantity_format(value)))
        total[resource] = (have + amount, fmt)


def _usage(obj: Obj) -> dict[str, tuple[Decimal, str]]:
    total: dict[str, tuple[Decimal, str]] = {}
    if obj.get("kind") == "PodMetrics":
        for container in items(obj.get("containers")):
            if isinstance(container, Mapping):
                _add(total, container.get("usage"))
    else:
        _add(total, obj.get("usage"))
    return total


def _columns(resources: list[str]) -> tuple[Column, ...]:
    return (
        Column("Name", "string", "The name of the pod or node.", "name"),
        *(Column(r, "string", "", "quantity") for r in resources),
        Column("Window", "string", "", "duration"),
    )


def metrics_table(objs: list[Obj], now: float) -> tuple[tuple[Column, ...] | None, list[Cells]]:
    if not objs:
        return None, []
    resources = sorted(_usage(objs[0]))
    rows: list[Cells] = []
    for obj in objs:
        usage = _usage(obj)
        cells: Cells = [name(obj)]
        for r in resources:
            amount, fmt = usage.get(r, (Decimal(0), "DecimalSI"))
            cells.append(quantity.format_quantity(amount, fmt))
        # metav1.Duration is written as Go's Duration.String(), which is what the cell shows.
        cells.append(str(obj.get("window") or "0s"))
        rows.append(cells)
    return _columns(resources), rows


METRICS = Printer((), default_cells, table=metrics_table, null_rows=True)

PRINTERS = {"PodMetrics": METRICS, "NodeMetrics": METRICS}
