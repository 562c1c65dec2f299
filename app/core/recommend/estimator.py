"""From an aggregate's histograms to target, lower and upper bound (the VPA estimator chain).

percentile -> + safety margin -> x confidence multiplier (bounds only) -> at least the pod
minimum divided among the pod's containers. Confidence grows with history: min(days between first
and last CPU sample, CPU samples / samples per day), so a bound is wide while history is short.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from app.core.recommend.aggregate import AggregateState
from app.core.recommend.settings import DAY, MIB, RecommenderSettings
from app.core.resources import Resources, amount


@dataclass(frozen=True)
class Estimate:
    target: Resources
    lower_bound: Resources
    upper_bound: Resources


def confidence(agg: AggregateState, s: RecommenderSettings) -> float:
    span_days = 0.0
    if agg.first_sample is not None and agg.last_sample is not None:
        span_days = (agg.last_sample - agg.first_sample) / DAY
    return min(span_days, agg.total_samples / s.confidence_samples_per_day)


def confidence_factor(conf: float, multiplier: float, exponent: float) -> float:
    """(1 + multiplier / confidence) ^ exponent; no history makes it inf (exponent > 0) or 0."""
    base = math.inf if conf <= 0 else 1.0 + multiplier / conf
    if multiplier == 0:
        base = 1.0
    scaled: float = base**exponent
    return scaled


def with_margin(r: Resources, fraction: float) -> Resources:
    return Resources(plus_margin(r.cpu, fraction), plus_margin(r.memory, fraction))


def plus_margin(value: int, fraction: float) -> int:
    """An amount with its safety margin: the margin truncated to a whole amount, as VPA's."""
    return value + amount(value * fraction)


@lru_cache(maxsize=256)
def pod_minimum(containers: int, s: RecommenderSettings) -> Resources:
    """The pod-wide floor (25m, 250 MiB by default) split equally among its containers (kept
    for each count and settings: it is asked twice for every container of every run)."""
    share = 1.0 / max(containers, 1)
    whole = Resources(amount(s.pod_min_cpu_millicores), amount(s.pod_min_memory_mb * MIB))
    return whole.scaled(share)


def estimate(agg: AggregateState, containers: int, s: RecommenderSettings) -> Estimate:
    floor = pod_minimum(containers, s)
    conf = confidence(agg, s)
    # the three percentiles of each histogram read in one pass over its buckets
    cpu = agg.cpu.percentiles(
        (s.target_cpu_percentile, s.lower_bound_cpu_percentile, s.upper_bound_cpu_percentile)
    )
    memory = agg.memory.percentiles(
        (
            s.target_memory_percentile,
            s.lower_bound_memory_percentile,
            s.upper_bound_memory_percentile,
        )
    )
    factors = (
        None,  # the target is not scaled
        confidence_factor(
            conf, s.lower_bound_confidence_multiplier, s.lower_bound_confidence_exponent
        ),
        confidence_factor(
            conf, s.upper_bound_confidence_multiplier, s.upper_bound_confidence_exponent
        ),
    )
    margin = s.safety_margin_fraction
    # with_margin, Resources.scaled and at_least, on plain ints: one Resources per value
    target, lower, upper = (
        _bound(amount(c * 1000.0), amount(m), margin, factor, floor)
        for c, m, factor in zip(cpu, memory, factors, strict=True)
    )
    return Estimate(target, lower, upper)


def _bound(
    cpu: int, memory: int, margin: float, factor: float | None, floor: Resources
) -> Resources:
    """with_margin(Resources(cpu, memory), margin), then .scaled(factor) unless None, then
    .at_least(floor)."""
    cpu, memory = plus_margin(cpu, margin), plus_margin(memory, margin)
    if factor is not None:
        cpu, memory = amount(cpu * factor), amount(memory * factor)
    return Resources(max(cpu, floor.cpu), max(memory, floor.memory))
