"""`krr-simple`: the simple strategy of Robusta KRR, re-derived from robusta-dev/krr.

Sources: robusta_krr/strategies/simple.py (SimpleStrategySettings, calculate_cpu_proposal,
calculate_memory_proposal), robusta_krr/core/abstract/strategies.py (history_duration),
robusta_krr/core/integrations/prometheus/metrics/{cpu,memory}.py (the Prometheus queries) and
robusta_krr/core/runner.py (_round_value, the --cpu-min/--mem-min minimums):

- CPU request: the `cpuPercentile` (95) percentile of the CPU samples of the last
  `historyDuration` hours (336), KRR's `quantile_over_time(round(p / 100, 2), ...)`; no limit.
- Memory request: the largest memory sample of that window + `memoryBufferPercentage` (15) %;
  with `useOomkillData`, at least the memory at the largest OOM kill +
  `oomMemoryBufferPercentage` (25) %. The limit is the request.
- Fewer than `pointsRequired` (100) samples of a resource in the window: no recommendation ("Not
  enough data"; none at all: "No data").
- Rounded up to whole millicores and whole MiB, then at least `cpuMin` millicores (10) and
  `memMin` MiB (100).

Differences, all from reading rightsizer's aggregate instead of Prometheus: the window is whole
UTC days (historyDuration rounded up to days, at most 14, what the aggregate keeps), the percentile
is the end of its histogram bucket (at most 5% above the exact one), and the samples of all pods
are pooled (KRR takes each pod's percentile and then the largest). Limits are advice shown in the
reason: the webhook sizes limits by the policy's controlledValues. KRR's `timeframe_duration`
(the query step) has no equivalent (every sample counts) and `allow_hpa` is rightsizer's own HPA
handling (resources an HPA scales are left alone).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from app.core.quantity import readable
from app.core.recommend.daily import RETAINED_DAYS, Distribution
from app.core.recommend.estimator import estimate
from app.core.recommend.settings import MIB
from app.core.recommend.strategies.base import (
    ROUNDING_PARAMS,
    Configured,
    Param,
    Proposal,
    StrategyInput,
    with_bounds_around,
)
from app.core.resources import Resources, amount, format_cpu

PARAMS = (
    Param(
        "cpuPercentile",
        float,
        95.0,
        "The percentile of CPU samples for the CPU request",
        0,
        100,
        exclusive_minimum=True,
    ),
    Param(
        "memoryBufferPercentage",
        float,
        15.0,
        "Percent added to the peak memory for the memory request (and limit)",
        0,
        exclusive_minimum=True,
    ),
    Param(
        "pointsRequired",
        int,
        100,
        "Samples a resource needs in the window before it is recommended",
        1,
    ),
    Param(
        "historyDuration",
        float,
        float(RETAINED_DAYS * 24),
        "Hours of history to read (rounded up to whole days)",
        1,
        RETAINED_DAYS * 24,
    ),
    Param(
        "useOomkillData",
        bool,
        False,
        "Raise memory to the memory at the largest OOM kill in the window + the OOM buffer",
    ),
    Param(
        "oomMemoryBufferPercentage",
        float,
        25.0,
        "Percent added to the memory at an OOM kill (with useOomkillData)",
        0,
    ),
    Param("cpuMin", int, 10, "Smallest CPU request in millicores (KRR's --cpu-min)", 0),
    Param("memMin", int, 100, "Smallest memory request in MiB (KRR's --mem-min)", 0),
    *ROUNDING_PARAMS,
)


@dataclass(frozen=True)
class KrrSimpleStrategy(Configured):
    name: str = "krr-simple"
    SPEC: ClassVar[tuple[Param, ...]] = PARAMS

    def propose(self, given: StrategyInput) -> Proposal:
        days = math.ceil(self.number("historyDuration") / 24)
        window = given.aggregate.daily.window(days)
        missing = [
            text
            for text in (
                _not_enough("CPU", window.cpu, int(self.number("pointsRequired"))),
                _not_enough("memory", window.memory, int(self.number("pointsRequired"))),
            )
            if text
        ]
        if missing:
            return Proposal(None, f"krr-simple: {'; '.join(missing)} in {days} days")
        cpu, cpu_text = self._cpu(window.cpu)
        memory, memory_text = self._memory(window.memory, window.oom_max)
        target = Resources(cpu, memory)
        vpa = estimate(given.aggregate, given.containers, given.settings)
        reason = f"krr-simple over {window.days} days: {cpu_text}; {memory_text}"
        return Proposal(with_bounds_around(target, vpa), reason)

    def _cpu(self, dist: Distribution) -> tuple[int, str]:
        p = round(self.number("cpuPercentile") / 100, 2)  # as KRR's query writes it
        exact = dist.percentile(p) * 1000.0
        value = max(_ceil(exact), int(self.number("cpuMin")))
        text = f"CPU p{p * 100:g} of {dist.count} samples = {format_cpu(value)}, no limit"
        if value > _ceil(exact):
            text += " (--cpu-min)"
        return value, text

    def _memory(self, dist: Distribution, oom: float) -> tuple[int, str]:
        buffer = self.number("memoryBufferPercentage")
        proposal = dist.maximum * (1 + buffer / 100)
        text = f"memory max {readable('memory', dist.maximum)} + {buffer:g}%"
        if self.params["useOomkillData"] and oom > 0:
            oom_buffer = self.number("oomMemoryBufferPercentage")
            if oom * (1 + oom_buffer / 100) > proposal:
                proposal = oom * (1 + oom_buffer / 100)
                text = f"memory at OOM kill {readable('memory', oom)} + {oom_buffer:g}%"
        rounded = _ceil(proposal / MIB) * MIB
        value = max(rounded, int(self.number("memMin")) * MIB)
        text += f" = {readable('memory', value)}, limit = request"
        if value > rounded:
            text += " (--mem-min)"
        return value, text


def _ceil(x: float) -> int:
    return amount(math.ceil(x)) if math.isfinite(x) else amount(x)


def _not_enough(what: str, dist: Distribution, required: int) -> str | None:
    if dist.count == 0:
        return f"no {what} data"
    if dist.count < required:
        return f"not enough {what} data ({dist.count} of {required} samples)"
    return None
