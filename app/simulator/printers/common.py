"""What every printer shares: the column model, the Name and Age columns, and the cell formats of
apimachinery's helpers (`labels.FormatLabels`, `metav1.FormatLabelSelector`,
`LabelSelectorAsSelector(...).String()`) and of `layoutContainerCells` in kubernetes/kubernetes
`pkg/printers/internalversion/printers.go`.

Column names, types, formats and priorities are kube-apiserver's (kubectl shows priority-0
columns, and the others with `-o wide`); descriptions are this package's own words.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from app.simulator.printers.duration import since, timestamp

Obj = Mapping[str, Any]
Cells = list[Any]
RowFn = Callable[[Obj, float], Cells]


@dataclass(frozen=True, slots=True)
class Column:
    """A `metav1.TableColumnDefinition`."""

    name: str
    type: str
    description: str
    format: str = ""
    priority: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


TableFn = Callable[[list[Obj], float], tuple[tuple[Column, ...] | None, list[Cells]]]


@dataclass(frozen=True, slots=True)
class Printer:
    """The columns of one kind and how one object becomes a row: the server always prints the
    wide form (pkg/printers/storage: `GenerateOptions{Wide: true}`); `conditions` gives a row's
    `metav1.TableRowCondition`s (a finished pod's `Completed`).

    A convertor whose columns depend on the objects (metrics-server's) gives `table` instead,
    which maps all objects at once to (columns, or None for none, and the rows' cells).
    `null_rows`: no objects give `rows: null` (a convertor that appends to a nil slice), not
    `[]` (the printers' list functions allocate the slice)."""

    columns: tuple[Column, ...]
    cells: RowFn
    conditions: Callable[[Obj], list[dict[str, Any]]] | None = None
    table: TableFn | None = None
    null_rows: bool = False


NAME = Column("Name", "string", "The name of the object, unique in its namespace.", "name")
AGE = Column("Age", "string", "How long ago the object was created.")
CONTAINERS = Column("Containers", "string", "The names of the template's containers.", priority=1)
IMAGES = Column("Images", "string", "The images of the template's containers.", priority=1)


def wide_selector(description: str) -> Column:
    return Column("Selector", "string", description, priority=1)


def meta(obj: Obj) -> Mapping[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, Mapping) else {}


def name(obj: Obj) -> str:
    return str(meta(obj).get("name") or "")


def age(obj: Obj, now: float) -> str:
    return since(meta(obj).get("creationTimestamp"), now)


def section(obj: Obj | None, *path: str) -> Mapping[str, Any]:
    """A nested mapping (`spec`, `status`, `spec.template.spec` ...), empty when absent."""
    cur: Any = obj
    for key in path:
        cur = cur.get(key) if isinstance(cur, Mapping) else None
    return cur if isinstance(cur, Mapping) else {}


def items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def integer(value: Any) -> int:
    """An int32/int64 field as Go holds it: unset (or not a number) is 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def format_labels(labels: Any) -> str:
    """`labels.FormatLabels`: `k=v` sorted by key, comma-joined; `<none>` when empty."""
    if not isinstance(labels, Mapping) or not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


_OPERATORS = {"In": " in ", "NotIn": " notin ", "Exists": "", "DoesNotExist": ""}


def _requirement(expr: Any) -> tuple[str, str] | None:
    """(key, text) of one matchExpression as `labels.Requirement.String()` writes it."""
    if not isinstance(expr, Mapping):
        return None
    key, op, values = expr.get("key"), expr.get("operator"), items(expr.get("values"))
    if not isinstance(key, str) or not key or op not in _OPERATORS:
        return None
    if (op in ("In", "NotIn")) != bool(values):  # In/NotIn need values, Exists none
        return None
    if op == "Exists":
        return key, key
    if op == "DoesNotExist":
        return key, f"!{key}"
    vals = [str(v) for v in values]
    joined = vals[0] if len(vals) == 1 else ",".join(sorted(vals))
    return key, f"{key}{_OPERATORS[op]}({joined})"


def selector_string(selector: Any) -> str | None:
    """`metav1.LabelSelectorAsSelector(s).String()`: requirements sorted by key, comma-joined
    (empty for no selector or an empty one); None when the selector cannot be converted."""
    if selector is None:
        return ""
    if not isinstance(selector, Mapping):
        return None
    reqs: list[tuple[str, str]] = []
    match_labels = selector.get("matchLabels") or {}
    if not isinstance(match_labels, Mapping):
        return None
    reqs += [(str(k), f"{k}={v}") for k, v in match_labels.items()]
    for expr in items(selector.get("matchExpressions")):
        req = _requirement(expr)
        if req is None:
            return None
        reqs.append(req)
    return ",".join(text for _, text in sorted(reqs, key=lambda r: r[0]))


def format_label_selector(selector: Any) -> str:
    """`metav1.FormatLabelSelector`: `<none>` when empty, `<error>` when it cannot convert."""
    text = selector_string(selector)
    if text is None:
        return "<error>"
    return text or "<none>"


def layout_containers(spec: Mapping[str, Any]) -> tuple[str, str]:
    """`layoutContainerCells` of a workload's `spec.template.spec.containers`: the containers'
    names and images, each comma-joined."""
    containers = section(spec, "template", "spec").get("containers")
    cs = [c for c in items(containers) if isinstance(c, Mapping)]
    return ",".join(str(c.get("name", "")) for c in cs), ",".join(
        str(c.get("image", "")) for c in cs
    )


def print_bool(value: Any) -> str:
    """`printBoolPtr`: `True`/`False`, `<unset>` for a nil pointer."""
    if isinstance(value, bool):
        return "True" if value else "False"
    return "<unset>"


def int_or_string(value: Any) -> str:
    """`intstr.IntOrString.String()`."""
    return str(value) if isinstance(value, int | str) and not isinstance(value, bool) else ""


def default_columns() -> tuple[Column, ...]:
    """The columns of apiserver's default table convertor (staging/src/k8s.io/apiserver/pkg/
    registry/rest/table.go), for kinds without a printer of their own (LimitRange ...)."""
    return (NAME, Column("Created At", "date", "When the object was created (UTC).", ""))


def default_cells(obj: Obj, now: float) -> Cells:
    """Name and creationTimestamp in RFC 3339 UTC (Go's zero time when unset), as the default
    convertor prints them."""
    at = timestamp(meta(obj).get("creationTimestamp"))
    created = "0001-01-01T00:00:00Z"
    if at is not None:
        created = datetime.fromtimestamp(int(at), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return [name(obj), created]


DEFAULT = Printer(default_columns(), default_cells, null_rows=True)
