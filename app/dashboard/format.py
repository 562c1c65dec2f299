"""Human formats for pages; exact values go in data-value attributes for tests and tooling."""

from __future__ import annotations

from datetime import UTC, datetime

MAX_AMOUNT = 2**63 - 1


def cpu(millicores: int | float | None) -> str:
    if millicores is None:
        return "-"
    if millicores >= MAX_AMOUNT:
        return "∞"
    if abs(millicores) >= 10_000:
        return f"{millicores / 1000:.1f} cores"
    return f"{millicores:.0f}m"


def memory(bytes_: int | float | None) -> str:
    if bytes_ is None:
        return "-"
    if bytes_ >= MAX_AMOUNT:
        return "∞"
    sign, n = ("-" if bytes_ < 0 else ""), abs(bytes_)
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{sign}{n / size:.2f} {unit}"
    return f"{sign}{n:.0f} B"


def cores(value: float) -> str:
    return cpu(value * 1000)


def when(unix: float) -> str:
    """A time on a chart axis, in UTC."""
    return datetime.fromtimestamp(unix, UTC).strftime("%Y-%m-%d %H:%M UTC")
