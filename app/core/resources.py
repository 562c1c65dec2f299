"""Resource amounts as VPA keeps them: CPU in whole millicores, memory in whole bytes (int64)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.core.quantity import MAX_AMOUNT, UNKNOWN, format_quantity

__all__ = [
    "MAX_AMOUNT",
    "Resources",
    "amount",
    "format_cpu",
    "format_memory",
    "known_quantities",
]


def amount(value: float) -> int:
    """Truncates like Go's float-to-int conversion; negative and NaN give 0, overflow saturates."""
    if math.isnan(value) or value <= 0:
        return 0
    if value >= MAX_AMOUNT:
        return MAX_AMOUNT
    return int(value)


@dataclass(frozen=True)
class Resources:
    cpu: int  # millicores
    memory: int  # bytes

    def scaled(self, factor: float) -> Resources:
        return Resources(amount(self.cpu * factor), amount(self.memory * factor))

    def at_least(self, floor: Resources) -> Resources:
        return Resources(max(self.cpu, floor.cpu), max(self.memory, floor.memory))

    def as_quantities(self) -> dict[str, str]:
        """Kubernetes quantities, exact; "unknown" for an unbounded amount (saturated at int64:
        an upper bound without history), which no quantity can say."""
        return {
            r: UNKNOWN if v >= MAX_AMOUNT else format_quantity(r, v)
            for r, v in (("cpu", self.cpu), ("memory", self.memory))
        }


def known_quantities(cpu: int | None, memory: int | None) -> dict[str, str]:
    """The exact quantities of the amounts that are known (a container's requests as last seen):
    {"cpu": "500m", "memory": "1Gi"}, without the key of a None amount, {} if neither is known."""
    known = {"cpu": cpu, "memory": memory}
    return {r: format_quantity(r, v) for r, v in known.items() if v is not None}


def format_cpu(millicores: int) -> str:
    """Kubernetes' canonical text, exact: 1500 -> "1500m", 2000 -> "2"."""
    return format_quantity("cpu", millicores)


def format_memory(bytes_: int) -> str:
    """Kubernetes' canonical text, exact: 379584512 -> "362Mi", 1000 -> "1k"."""
    return format_quantity("memory", bytes_)
