"""`vpa`, the default: the VPA recommender's estimator (app/core/recommend/estimator.py) as it is.

Its estimate is exactly estimator.estimate's; this module only says how it was reached.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.core.quantity import readable
from app.core.recommend.estimator import confidence, estimate, pod_minimum
from app.core.recommend.strategies.base import Param, ParamValue, Proposal, StrategyInput
from app.core.resources import format_cpu

PARAMS: tuple[Param, ...] = ()  # VPA's numbers are the recommender settings (RIGHTSIZER_*)


@dataclass(frozen=True)
class VpaStrategy:
    name: str = "vpa"

    @property
    def params(self) -> Mapping[str, ParamValue]:
        return {}

    def propose(self, given: StrategyInput) -> Proposal:
        s = given.settings
        est = estimate(given.aggregate, given.containers, s)
        reason = (
            f"vpa: CPU p{_pct(s.target_cpu_percentile)} of usage (half-life "
            f"{_hours(s.cpu_half_life_seconds)}), memory p{_pct(s.target_memory_percentile)} of "
            f"daily peaks, each +{_pct(s.safety_margin_fraction)}%; confidence "
            f"{confidence(given.aggregate, s):.1f} days"
        )
        floor = pod_minimum(given.containers, s)
        at_floor = [
            text
            for value, minimum, text in (
                (est.target.cpu, floor.cpu, f"CPU {format_cpu(floor.cpu)}"),
                (est.target.memory, floor.memory, f"memory {readable('memory', floor.memory)}"),
            )
            if value == minimum
        ]
        if at_floor:
            reason += "; pod minimum " + ", ".join(at_floor)
        return Proposal(est, reason)


def _pct(fraction: float) -> str:
    return f"{fraction * 100:g}"


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:g}h"
