"""From an aggregate's histograms to target, lower and upper bound (the VPA estimator chain).

percentile -> + safety margin -> x confidence multiplier (bounds only) -> at least the pod
minimum divided among the pod's containers. Confidence grows with history: min(time between first
and last CPU sample, CPU samples at one a minute), each in confidence intervals (a day by default),
so a bound is wide while history is short.

The chain runs on columns, many rows at once (`estimate_rows`: the recommender's every workload
container in one pass, issue 43); `estimate` is the same chain on one row. Amounts are int64
(Go's int64 of VPA's ResourceAmount); each step is the same IEEE operation as on Python numbers,
so the columns give VPA's numbers to the bit (tests/core/recommend/test_estimator.py checks them
against the chain step by step on plain numbers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from app.core.recommend.aggregate import AggregateState
from app.core.recommend.settings import DAY, MIB, RecommenderSettings
from app.core.resources import MAX_AMOUNT, Resources, amount

Array = Any
_MAX_FLOAT = float(MAX_AMOUNT)  # 2**63: no float lies between it and MAX_AMOUNT


@dataclass(frozen=True)
class Estimate:
    target: Resources
    lower_bound: Resources
    upper_bound: Resources


@dataclass(frozen=True)
class Estimates:
    """Estimates of many rows as columns: `cpu` (millicores) and `memory` (bytes), int64 arrays
    of rows x (target, lower bound, upper bound)."""

    cpu: Array
    memory: Array

    def at(self, i: int) -> Estimate:
        c, m = self.cpu[i].tolist(), self.memory[i].tolist()
        return Estimate(Resources(c[0], m[0]), Resources(c[1], m[1]), Resources(c[2], m[2]))


def amounts(values: Array) -> Array:
    """`amount` of each value, as int64: truncated like Go's float-to-int conversion; negative
    and NaN give 0, overflow saturates."""
    x = np.asarray(values, dtype=np.float64)
    out = np.zeros(x.shape, dtype=np.int64)
    with np.errstate(invalid="ignore"):
        big = x >= _MAX_FLOAT
        fits = (x > 0) & ~big
    out[fits] = x[fits].astype(np.int64)  # truncation toward zero, as int() of a positive float
    out[big] = MAX_AMOUNT
    return out


def confidences(
    first: Array, last: Array, count: Array, s: RecommenderSettings, interval: float = DAY
) -> Array:
    """VPA's getConfidence (vertical-pod-autoscaler/pkg/recommender/logic/estimator.go) of each
    row (its first and last CPU sample's time, NaN when none, and its CPU sample count): the
    lesser of the history's span and its CPU samples, both counted in `interval`s (VPA's
    --confidence-interval-cpu or -memory, a day by default), samples at
    `confidence_samples_per_day` a day (one a minute, VPA's rate): VPA divides both the span and
    the sample count by the interval (kubernetes/autoscaler #7843)."""
    span = np.asarray(last, dtype=np.float64) - np.asarray(first, dtype=np.float64)
    span = np.where(np.isnan(span), 0.0, span)  # no sample: no span
    per_interval = s.confidence_samples_per_day * interval / DAY
    return np.minimum(span / interval, np.asarray(count, dtype=np.int64) / per_interval)


def confidence(agg: AggregateState, s: RecommenderSettings, interval: float = DAY) -> float:
    """`confidences` of one aggregate."""
    first = math.nan if agg.first_sample is None else agg.first_sample
    last = math.nan if agg.last_sample is None else agg.last_sample
    return float(confidences([first], [last], [agg.total_samples], s, interval)[0])


def confidence_factor(conf: float, multiplier: float, exponent: float) -> float:
    """(1 + multiplier / confidence) ^ exponent; no history makes it inf (exponent > 0) or 0."""
    base = math.inf if conf <= 0 else 1.0 + multiplier / conf
    if multiplier == 0:
        base = 1.0
    scaled: float = base**exponent
    return scaled


def confidence_factors(conf: Array, multiplier: float, exponent: float) -> Array:
    """`confidence_factor` of each confidence; the power is Python's (C's pow), as on one
    number: numpy's own may use other (SIMD) code, not always equal to the last bit."""
    if multiplier == 0:
        return np.ones(len(conf))
    with np.errstate(divide="ignore"):
        base = np.where(conf <= 0, math.inf, 1.0 + multiplier / conf)
    return np.array([b**exponent for b in base.tolist()], dtype=np.float64)


def plus_margins(values: Array, fraction: float) -> Array:
    """Amounts (int64) with their safety margin: the margin truncated to a whole amount, as
    VPA's."""
    return values + amounts(values * fraction)


@lru_cache(maxsize=256)
def pod_minimum(containers: int, s: RecommenderSettings) -> Resources:
    """The pod-wide floor (25m, 250 MiB by default) split equally among its containers (kept
    for each count and settings)."""
    share = 1.0 / max(containers, 1)
    whole = Resources(amount(s.pod_min_cpu_millicores), amount(s.pod_min_memory_mb * MIB))
    return whole.scaled(share)


def pod_minimums(containers: Array, s: RecommenderSettings) -> tuple[Array, Array]:
    """`pod_minimum` of each row's container count: CPU and memory, int64."""
    counts, inverse = np.unique(np.asarray(containers, dtype=np.int64), return_inverse=True)
    floors = [pod_minimum(int(n), s) for n in counts.tolist()]
    cpu = np.array([f.cpu for f in floors], dtype=np.int64)
    memory = np.array([f.memory for f in floors], dtype=np.int64)
    return cpu[inverse.reshape(-1)], memory[inverse.reshape(-1)]


def percentile_settings(s: RecommenderSettings) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The percentiles the chain reads, CPU's and memory's: target, lower and upper bound."""
    return (
        (s.target_cpu_percentile, s.lower_bound_cpu_percentile, s.upper_bound_cpu_percentile),
        (
            s.target_memory_percentile,
            s.lower_bound_memory_percentile,
            s.upper_bound_memory_percentile,
        ),
    )


def estimate_rows(
    cpu: Array,
    memory: Array,
    first: Array,
    last: Array,
    count: Array,
    containers: Array,
    s: RecommenderSettings,
) -> Estimates:
    """The chain on many rows: `cpu` (cores) and `memory` (bytes) are rows x the
    `percentile_settings` percentiles (target, lower, upper), `first`, `last` and `count` each
    row's CPU samples (NaN: none), `containers` the containers in its pods."""
    floor_cpu, floor_memory = pod_minimums(containers, s)
    cpu_conf = confidences(first, last, count, s, s.confidence_interval_cpu_seconds)
    memory_conf = (
        cpu_conf
        if s.confidence_interval_memory_seconds == s.confidence_interval_cpu_seconds
        else confidences(first, last, count, s, s.confidence_interval_memory_seconds)
    )
    margin = s.safety_margin_fraction
    cpu_out = plus_margins(amounts(np.asarray(cpu, dtype=np.float64) * 1000.0), margin)
    memory_out = plus_margins(amounts(memory), margin)
    for col, multiplier, exponent in (
        (1, s.lower_bound_confidence_multiplier, s.lower_bound_confidence_exponent),
        (2, s.upper_bound_confidence_multiplier, s.upper_bound_confidence_exponent),
    ):  # the target (column 0) is not scaled; 0 x inf (no history, no amount) is NaN: 0
        cpu_factors = confidence_factors(cpu_conf, multiplier, exponent)
        memory_factors = confidence_factors(memory_conf, multiplier, exponent)
        with np.errstate(invalid="ignore"):
            cpu_out[:, col] = amounts(cpu_out[:, col] * cpu_factors)
            memory_out[:, col] = amounts(memory_out[:, col] * memory_factors)
    return Estimates(
        np.maximum(cpu_out, floor_cpu[:, None]), np.maximum(memory_out, floor_memory[:, None])
    )


def estimate(agg: AggregateState, containers: int, s: RecommenderSettings) -> Estimate:
    """`estimate_rows` of one aggregate."""
    cpu_ps, memory_ps = percentile_settings(s)
    first = math.nan if agg.first_sample is None else agg.first_sample
    last = math.nan if agg.last_sample is None else agg.last_sample
    return estimate_rows(
        np.array([agg.cpu.percentiles(cpu_ps)], dtype=np.float64),
        np.array([agg.memory.percentiles(memory_ps)], dtype=np.float64),
        [first],
        [last],
        [agg.total_samples],
        [containers],
        s,
    ).at(0)
