"""How the pages write numbers: one unit style per column. Requests and recommendations are
Kubernetes quantities (app.core.quantity.readable: 203m, 2, 363Mi; "unknown" for an unbounded
bound), savings are cores and GiB with two decimals (the unit in the column's header), money is
app.core.savings.Prices.money. Exact values go in data-value attributes for tests and tooling."""

from __future__ import annotations

from datetime import UTC, datetime

from app.core.quantity import readable

NOT_SEEN = "\u2013"  # no value: nothing seen yet (an en dash, not "unknown": nothing was estimated)


def cpu(millicores: int | float | None) -> str:
    """A CPU amount as a quantity: 203m, 1500m, 2."""
    return NOT_SEEN if millicores is None else readable("cpu", millicores)


def memory(bytes_: int | float | None) -> str:
    """A memory amount as a quantity, rounded up to a whole unit: 363Mi, 2Gi."""
    return NOT_SEEN if bytes_ is None else readable("memory", bytes_)


def bound(resource: str, value: int) -> str:
    """A bound of the recommendation: "unknown" when it is unbounded (no history yet)."""
    return readable(resource, value)


def cores(millicores: int | float | None) -> str:
    """Millicores as cores, two decimals: 1.25, -0.26 (savings columns)."""
    return NOT_SEEN if millicores is None else f"{millicores / 1000:,.2f}"


def gib(bytes_: int | float | None) -> str:
    """Bytes as GiB, two decimals: 0.90 (savings columns)."""
    return NOT_SEEN if bytes_ is None else f"{bytes_ / 2**30:,.2f}"


def cores_value(value: float) -> str:
    """A histogram bucket edge in cores, as a CPU quantity."""
    return cpu(value * 1000)


def when(unix: float) -> str:
    """A time on a chart axis, in UTC."""
    return datetime.fromtimestamp(unix, UTC).strftime("%Y-%m-%d %H:%M UTC")


def short_when(unix: float) -> str:
    return datetime.fromtimestamp(unix, UTC).strftime("%m-%d %H:%M")
