"""Resource amounts as VPA keeps them: CPU in whole millicores, memory in whole bytes (int64)."""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_AMOUNT = 2**63 - 1  # int64: an unbounded estimate (no history yet) saturates here


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
        return {"cpu": format_cpu(self.cpu), "memory": format_memory(self.memory)}


def format_cpu(millicores: int) -> str:
    return f"{millicores}m"


def format_memory(bytes_: int) -> str:
    return str(bytes_)
