"""From an aggregate's histograms to target, lower and upper bound (the VPA estimator chain).

percentile -> + safety margin -> x confidence multiplier (bounds only) -> at least the pod
minimum divided among the pod's containers. Confidence grows with history: min(time between first
and last CPU sample, CPU samples at one a minute), each in confidence intervals (a day by default),
so a bound is wide while history is short.
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


def confidence(agg: AggregateState, s: RecommenderSettings, interval: float = DAY) -> float:
    """VPA's getConfidence (vertical-pod-autoscaler/pkg/recommender/logic/estimator.go): the
    lesser of the history's span and its CPU samples, both counted in `interval`s (VPA's
    --confidence-interval-cpu or -memory, a day by default), samples at
    `confidence_samples_per_day` a day (one a minute, VPA's rate): VPA divides both the span and
    the sample count by the interval (kubernetes/autoscaler #7843)."""
    span = 0.0
    if agg.first_sample is not None and agg.last_sample is not None:
        span = agg.last_sample - agg.first_sample
    per_interval = s.confidence_samples_per_day * interval / DAY
    return min(span / interval, agg.total_samples / per_interval)


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
    cpu_conf = confidence(agg, s, s.confidence_interval_cpu_seconds)
    memory_conf = (
        cpu_conf
        if s.confidence_interval_memory_seconds == s.confidence_interval_cpu_seconds
        else confidence(agg, s, s.confidence_interval_memory_seconds)
    )
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
        tuple(
            confidence_factor(
                conf, s.lower_bound_confidence_multiplier, s.lower_bound_confidence_exponent
            )
            for conf in (cpu_conf, memory_conf)
        ),
        tuple(
            confidence_factor(
                conf, s.upper_bound_confidence_multiplier, s.upper_bound_confidence_exponent
            )
            for conf in (cpu_conf, memory_conf)
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
    cpu: int,
    memory: int,
    margin: float,
    factors: tuple[float, ...] | None,
    floor: Resources,
) -> Resources:
    """with_margin(Resources(cpu, memory), margin), then each scaled by its confidence factor
    (CPU's, memory's) unless None, then .at_least(floor)."""
    cpu, memory = plus_margin(cpu, margin), plus_margin(memory, margin)
    if factors is not None:
        cpu, memory = amount(cpu * factors[0]), amount(memory * factors[1])
    return Resources(max(cpu, floor.cpu), max(memory, floor.memory))
