"""Nodes' hour-of-day profiles, which the leader could keep from NodeMetrics: a try at giving the
extender some of the next hours that benchmarks/water_level_oracle.py shows it lacks.

Each node keeps its CPU level at every 15-minute slot of the day, the latest day's. Once a whole
day is known, the node's **forecast** is its newest level plus the largest rise its profile shows
over the next `ahead` slots (what the node did at those hours yesterday, from where it stood at
this hour); `benchmarks/water_level.py` puts it in place of the node's 1-day window for the
`ext.+profile` run. It knows nothing of pods: a node's profile is that of the pods it ran
yesterday, which the rollouts have partly moved since.
"""

from __future__ import annotations

import dataclasses

from app.core.placement.windows import NodeLevel

DAY = 86400.0


class NodeProfiles:
    def __init__(self, ahead: int = 12, slot: float = 900.0) -> None:
        self.ahead, self.slot = ahead, slot
        self.per_day = round(DAY / slot)
        self.levels: dict[str, dict[int, float]] = {}

    def index(self, t: float) -> int:
        return int((t % DAY) // self.slot)

    def record(self, node: str, t: float, level: float) -> None:
        """The node's CPU level at `t`, kept when `t` starts a slot."""
        if t % self.slot == 0:
            self.levels.setdefault(node, {})[self.index(t)] = level

    def rise(self, node: str, t: float) -> float | None:
        """The largest rise of the node's profile over the next `ahead` slots from the slot of
        `t`, None until a whole day is known."""
        known = self.levels.get(node, {})
        if len(known) < self.per_day:
            return None
        now = self.index(t)
        return max(known[(now + k) % self.per_day] - known[now] for k in range(1, self.ahead + 1))

    def forecast(self, level: NodeLevel, t: float) -> NodeLevel:
        """`level` with its 1-day CPU window replaced by the forecast (unchanged without one)."""
        rise = self.rise(level.name, t)
        if rise is None or level.cpu_now is None:
            return level
        cpu = (*level.cpu[:-1], level.cpu_now + rise)
        return dataclasses.replace(level, cpu=cpu)
