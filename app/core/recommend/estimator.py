"""From an aggregate's histograms to target, lower and upper bound (the VPA estimator chain).

percentile -> + safety margin -> x confidence multiplier (bounds only) -> at least the pod
minimum divided among the pod's containers. Confidence grows with history: min(days between first
and last CPU sample, CPU samples / samples per day), so a bound is wide while history is short.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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


def percentiles(agg: AggregateState, cpu_p: float, memory_p: float) -> Resources:
    return Resources(
        amount(agg.cpu.percentile(cpu_p) * 1000.0), amount(agg.memory.percentile(memory_p))
    )


def with_margin(r: Resources, fraction: float) -> Resources:
    return Resources(r.cpu + amount(r.cpu * fraction), r.memory + amount(r.memory * fraction))


def pod_minimum(containers: int, s: RecommenderSettings) -> Resources:
    """The pod-wide floor (25m, 250 MiB by default) split equally among its containers."""
    share = 1.0 / max(containers, 1)
    whole = Resources(amount(s.pod_min_cpu_millicores), amount(s.pod_min_memory_mb * MIB))
    return whole.scaled(share)


def estimate(agg: AggregateState, containers: int, s: RecommenderSettings) -> Estimate:
    floor = pod_minimum(containers, s)
    conf = confidence(agg, s)
    target = with_margin(
        percentiles(agg, s.target_cpu_percentile, s.target_memory_percentile),
        s.safety_margin_fraction,
    )
    lower = with_margin(
        percentiles(agg, s.lower_bound_cpu_percentile, s.lower_bound_memory_percentile),
        s.safety_margin_fraction,
    ).scaled(
        confidence_factor(
            conf, s.lower_bound_confidence_multiplier, s.lower_bound_confidence_exponent
        )
    )
    upper = with_margin(
        percentiles(agg, s.upper_bound_cpu_percentile, s.upper_bound_memory_percentile),
        s.safety_margin_fraction,
    ).scaled(
        confidence_factor(
            conf, s.upper_bound_confidence_multiplier, s.upper_bound_confidence_exponent
        )
    )
    return Estimate(target.at_least(floor), lower.at_least(floor), upper.at_least(floor))
