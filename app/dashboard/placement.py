"""The Nodes page's view of the scheduler extender: the score it gives each node now and how far
apart the nodes' levels are over each of its windows (docs/placement.md).

Read from the node levels the leader saves (app.store.node_levels) with the placement settings,
through app.core.placement.current.current_scores, the function the extender's own table is built
from: the page shows what `prioritize` answers, not a second computation of it. None when no
levels are saved (no leader yet, no metrics-server).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.placement.current import CurrentScores, current_scores
from app.core.placement.table import MAX_PRIORITY
from app.settings import settings
from app.store.extensions import db
from app.store.node_levels import load_node_levels

WINDOW_NAMES = {"15m": "15 minutes", "1h": "1 hour", "1d": "1 day"}


@dataclass(frozen=True)
class WindowSpread:
    """One window's spread of the nodes' levels: the most minus the least used node."""

    window: str  # "15 minutes"
    cpu: float  # fractions of allocatable
    memory: float


@dataclass(frozen=True)
class ExtenderView:
    scores: CurrentScores
    spreads: tuple[WindowSpread, ...]
    max_priority: int = MAX_PRIORITY

    def score_of(self, node: str) -> tuple[int, bool] | None:
        """(score, filtered) of `node`; None when the extender has no levels for it."""
        for n in self.scores.nodes:
            if n.name == node:
                return n.score, n.filtered
        return None


def spreads_of(scores: CurrentScores) -> tuple[WindowSpread, ...]:
    """Pure: per window, max - min of the nodes' CPU and memory levels (0 with one node); with
    levels ahead, one more row: the largest such spread over the hours ahead (a forecast)."""
    out = []
    for i, window in enumerate(scores.windows):
        cpu = [n.cpu[i] for n in scores.nodes]
        memory = [n.memory[i] for n in scores.nodes]
        out.append(
            WindowSpread(
                WINDOW_NAMES.get(window, window),
                max(cpu) - min(cpu) if cpu else 0.0,
                max(memory) - min(memory) if memory else 0.0,
            )
        )
    if scores.hours and scores.nodes:
        out.append(
            WindowSpread(
                f"next {scores.hours} hours (forecast)",
                _widest([n.cpu_ahead for n in scores.nodes]),
                _widest([n.memory_ahead for n in scores.nodes]),
            )
        )
    return tuple(out)


def _widest(levels: list[tuple[float, ...]]) -> float:
    """The largest max - min over the nodes, among the hours of `levels` (one tuple a node)."""
    return float(max(max(hour) - min(hour) for hour in zip(*levels, strict=True)))


def extender_view() -> ExtenderView | None:
    levels = load_node_levels(db.session)
    if not levels:
        return None
    scores = current_scores(levels, settings().placement.options())
    if not scores.nodes:
        return None
    return ExtenderView(scores, spreads_of(scores))
