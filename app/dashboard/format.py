"""How the pages write numbers: one unit style per column. Requests and recommendations are
written as a person reads them (`read_cpu`, `read_memory`: 203m below a core, then 15.06 cores;
363Mi below a GiB, then 61.19 GiB), with the exact Kubernetes quantity (app.core.quantity.readable:
15062m, 62659Mi; "unknown" for an unbounded bound) in the element's title (`cpu_html`,
`memory_html`). Savings are cores and GiB with two decimals (the unit in the column's header),
money is app.core.savings.Prices.money. Exact values go in data-value attributes for tests and
tooling."""

from __future__ import annotations

from datetime import UTC, datetime

from markupsafe import Markup

from app.core.quantity import UNKNOWN, readable

NOT_SEEN = "\u2013"  # no value: nothing seen yet (an en dash, not "unknown": nothing was estimated)


def cpu(millicores: int | float | None) -> str:
    """A CPU amount as a quantity: 203m, 1500m, 2."""
    return NOT_SEEN if millicores is None else readable("cpu", millicores)


def memory(bytes_: int | float | None) -> str:
    """A memory amount as a quantity, rounded up to a whole unit: 363Mi, 2Gi."""
    return NOT_SEEN if bytes_ is None else readable("memory", bytes_)


def _decimals(value: float) -> str:
    """Two decimals at most, trailing zeros dropped: 15.06, 1.5, 2."""
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def read_cpu(millicores: int | float | None) -> str:
    """A CPU amount as a person reads it: millicores below one core (250m), cores from one on
    (1 core, 15.06 cores: rounded to two decimals; the exact quantity is `cpu`)."""
    exact = cpu(millicores)
    if millicores is None or exact == UNKNOWN or abs(millicores) < 1000:
        return exact
    shown = _decimals(millicores / 1000)
    return f"{shown} core" if shown == "1" else f"{shown} cores"


def read_memory(bytes_: int | float | None) -> str:
    """A memory amount as a person reads it: the quantity below one GiB (363Mi), GiB from one on
    (61.19 GiB: rounded to two decimals; the exact quantity is `memory`)."""
    exact = memory(bytes_)
    if bytes_ is None or exact == UNKNOWN or abs(bytes_) < 2**30:
        return exact
    return f"{_decimals(bytes_ / 2**30)} GiB"


def _with_title(shown: str, exact: str) -> Markup:
    if shown == exact:
        return Markup("{}").format(shown)
    return Markup('<span class="quantity" title="{}">{}</span>').format(exact, shown)


def cpu_html(millicores: int | float | None) -> Markup:
    """`read_cpu`, with the exact quantity in a title (a tooltip) where they differ."""
    return _with_title(read_cpu(millicores), cpu(millicores))


def memory_html(bytes_: int | float | None) -> Markup:
    """`read_memory`, with the exact quantity in a title (a tooltip) where they differ."""
    return _with_title(read_memory(bytes_), memory(bytes_))


def bound(resource: str, value: int) -> str:
    """A bound of the recommendation, exact (for a tooltip): "unknown" when it is unbounded (no
    history yet). Cells show it with `cpu_html` / `memory_html`."""
    return readable(resource, value)


def cores(millicores: int | float | None) -> str:
    """Millicores as cores, two decimals: 1.25, -0.26 (savings columns)."""
    return NOT_SEEN if millicores is None else f"{millicores / 1000:,.2f}"


def gib(bytes_: int | float | None) -> str:
    """Bytes as GiB, two decimals: 0.90 (savings columns)."""
    return NOT_SEEN if bytes_ is None else f"{bytes_ / 2**30:,.2f}"


def cores_value(value: float) -> str:
    """A histogram bucket edge in cores, as a person reads a CPU amount."""
    return read_cpu(value * 1000)


def when(unix: float) -> str:
    """A time on a chart axis, in UTC."""
    return datetime.fromtimestamp(unix, UTC).strftime("%Y-%m-%d %H:%M UTC")
