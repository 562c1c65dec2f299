"""`vpa`, the default: the VPA recommender's estimator (app/core/recommend/estimator.py) as it is.

Its estimate is exactly estimator.estimate's; this module only says how it was reached, and which
of VPA's recommender flags a policy may set for its own workloads (`PARAMS`). Each one replaces
the global setting (RIGHTSIZER_*) for that policy, as VPA's per-VPA settings (containerPolicies'
oomBumpUpRatio, oomMinBumpUp, memoryAggregationIntervalSeconds and memoryAggregationIntervalCount
in VPA 1.7, behind its PerVPAConfig gate) replace the flags; not given, the global value applies.

- Percentiles, the safety margin and the pod minimums only change how the histograms are read:
  the next run recomputes from the same history (estimator.estimate).
- The decay half-lives change the histograms' decay from the reference time on: the samples in
  them keep the weight they have there, as when VPA's recommender restarts from its checkpoints
  with a new --cpu-histogram-decay-half-life (app/core/recommend/array_model.py `ArrayModel.tune`).
- The OOM bump and the memory aggregation interval apply to the samples that follow: history
  gathered before keeps its bumps and its peaks of the old interval, which decay away (the reason
  says so while they weigh).
- memoryAggregationIntervalCount (with the interval) sets how long a container may go without a
  sample before its history is dropped: interval x count, VPA's memory aggregation window
  (RIGHTSIZER_IDLE_AFTER_SECONDS when the policy sets neither).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from app.core.quantity import readable
from app.core.recommend.aggregate import Retuned
from app.core.recommend.estimator import (
    Estimates,
    confidences,
    estimate_rows,
    percentile_settings,
    pod_minimum,
    pod_minimums,
)
from app.core.recommend.settings import DAY, RecommenderSettings
from app.core.recommend.strategies.base import (
    ROUNDING_PARAMS,
    Configured,
    Param,
    ParamError,
    ParamValue,
    Proposal,
    StrategyInput,
    setting_param,
)
from app.core.resources import format_cpu

Array = Any
INTERVAL_COUNT = "memoryAggregationIntervalCount"


def _percentile(name: str, setting: str, flag: str) -> Param:
    return setting_param(
        name, float, setting, f"VPA's --{flag}: a fraction (0.9 is the 90th)", 0, 1, True
    )


PARAMS: tuple[Param, ...] = (
    _percentile("targetCpuPercentile", "target_cpu_percentile", "target-cpu-percentile"),
    _percentile("targetMemoryPercentile", "target_memory_percentile", "target-memory-percentile"),
    _percentile(
        "lowerBoundCpuPercentile",
        "lower_bound_cpu_percentile",
        "recommendation-lower-bound-cpu-percentile",
    ),
    _percentile(
        "lowerBoundMemoryPercentile",
        "lower_bound_memory_percentile",
        "recommendation-lower-bound-memory-percentile",
    ),
    _percentile(
        "upperBoundCpuPercentile",
        "upper_bound_cpu_percentile",
        "recommendation-upper-bound-cpu-percentile",
    ),
    _percentile(
        "upperBoundMemoryPercentile",
        "upper_bound_memory_percentile",
        "recommendation-upper-bound-memory-percentile",
    ),
    setting_param(
        "safetyMarginFraction",
        float,
        "safety_margin_fraction",
        "VPA's --recommendation-margin-fraction: added to the target and both bounds",
        0,
    ),
    setting_param(
        "podMinCpuMillicores",
        float,
        "pod_min_cpu_millicores",
        "VPA's --pod-recommendation-min-cpu-millicores: the pod's floor, split among containers",
        0,
    ),
    setting_param(
        "podMinMemoryMb",
        float,
        "pod_min_memory_mb",
        "VPA's --pod-recommendation-min-memory-mb: the pod's floor in MiB, split likewise",
        0,
    ),
    setting_param(
        "oomBumpUpRatio",
        float,
        "oom_bump_ratio",
        "VPA's --oom-bump-up-ratio (containerPolicies' oomBumpUpRatio): after an OOM kill, "
        "memory needed is at least memory used x this",
        1,
    ),
    setting_param(
        "oomMinBumpUpBytes",
        float,
        "oom_min_bump_bytes",
        "VPA's --oom-min-bump-up-bytes (oomMinBumpUp): ... and at least memory used + this",
        0,
    ),
    setting_param(
        "memoryAggregationIntervalSeconds",
        int,
        "memory_aggregation_interval_seconds",
        "VPA's --memory-aggregation-interval (memoryAggregationIntervalSeconds): one memory "
        "peak per pod container per interval",
        1,
    ),
    Param(
        INTERVAL_COUNT,
        int,
        None,
        "VPA's --memory-aggregation-interval-count (memoryAggregationIntervalCount): history "
        "is dropped after interval x count without a sample",
        1,
        inherits="RIGHTSIZER_IDLE_AFTER_SECONDS",
    ),
    setting_param(
        "cpuHistogramDecayHalfLifeSeconds",
        float,
        "cpu_half_life_seconds",
        "VPA's --cpu-histogram-decay-half-life: a CPU sample loses half its weight in this time",
        0,
        exclusive_minimum=True,
    ),
    setting_param(
        "memoryHistogramDecayHalfLifeSeconds",
        float,
        "memory_half_life_seconds",
        "VPA's --memory-histogram-decay-half-life: likewise for a memory peak",
        0,
        exclusive_minimum=True,
    ),
    *ROUNDING_PARAMS,
)


def check(values: Mapping[str, ParamValue]) -> list[ParamError]:
    """Percentiles given together must be in order, lower <= target <= upper: a target outside
    its bounds would have the updater act on every pod at every run."""
    errors = []
    for res in ("Cpu", "Memory"):
        lower = values.get(f"lowerBound{res}Percentile")
        target = values.get(f"target{res}Percentile")
        upper = values.get(f"upperBound{res}Percentile")
        if target is not None and lower is not None and float(target) < float(lower):
            errors.append(
                ParamError(
                    f"target{res}Percentile",
                    f"must be at least lowerBound{res}Percentile ({lower}), got {target}",
                )
            )
        if target is not None and upper is not None and float(target) > float(upper):
            errors.append(
                ParamError(
                    f"target{res}Percentile",
                    f"must be at most upperBound{res}Percentile ({upper}), got {target}",
                )
            )
        if target is None and lower is not None and upper is not None and lower > upper:
            errors.append(
                ParamError(
                    f"lowerBound{res}Percentile",
                    f"must be at most upperBound{res}Percentile ({upper}), got {lower}",
                )
            )
    return errors


def confidence_wordings(
    first: Array, last: Array, count: Array, s: RecommenderSettings
) -> list[str]:
    """VPA's confidence of each row as what it is: the lesser of the history's span in days and
    its CPU samples counted as days at `confidence_samples_per_day` (one a minute). A 30-day
    trace of a sample every 5 minutes is 6 days' worth, not 30, and says so."""
    first, last = np.asarray(first, dtype=np.float64), np.asarray(last, dtype=np.float64)
    span = last - first
    days = np.where(np.isnan(span), 0.0, span / DAY).tolist()
    per_day = f"{s.confidence_samples_per_day:g}"
    conf = confidences(first, last, count, s).tolist()
    texts = [
        f"confidence {c:.1f} days: {n} CPU samples over {d:.1f} days, {per_day} samples "
        "counting as a day"
        for c, n, d in zip(conf, np.asarray(count).tolist(), days, strict=True)
    ]
    intervals = {
        what: seconds
        for what, seconds in (
            ("CPU", s.confidence_interval_cpu_seconds),
            ("memory", s.confidence_interval_memory_seconds),
        )
        if seconds != DAY
    }
    if intervals:  # VPA's --confidence-interval-cpu/-memory: both counts in that interval
        each = [
            (what, seconds, confidences(first, last, count, s, seconds).tolist())
            for what, seconds in intervals.items()
        ]
        texts = [
            text
            + "; "
            + ", ".join(
                f"{what} bounds: confidence {values[i]:.2f} intervals of {_hours(seconds)}"
                for what, seconds, values in each
            )
            for i, text in enumerate(texts)
        ]
    return texts


@dataclass(frozen=True)
class Rows:
    """Workload containers' histories as the `vpa` strategy reads them, in columns: `cpu` and
    `memory` are rows x estimator.percentile_settings' percentiles (cores, bytes), `first` and
    `last` each row's first and last CPU sample's time (NaN: none), `count` its CPU samples,
    `containers` the containers in its pods, `retuned` what its history was gathered with."""

    cpu: Array
    memory: Array
    first: Array
    last: Array
    count: Array
    containers: Array
    retuned: Sequence[Retuned | None]


@dataclass(frozen=True)
class VpaStrategy(Configured):
    name: str = "vpa"
    SPEC: ClassVar[tuple[Param, ...]] = PARAMS

    def propose(self, given: StrategyInput) -> Proposal:
        agg, s = given.aggregate, given.settings
        cpu_ps, memory_ps = percentile_settings(s)
        rows = Rows(
            np.array([agg.cpu.percentiles(cpu_ps)], dtype=np.float64),
            np.array([agg.memory.percentiles(memory_ps)], dtype=np.float64),
            np.array([math.nan if agg.first_sample is None else agg.first_sample]),
            np.array([math.nan if agg.last_sample is None else agg.last_sample]),
            np.array([agg.total_samples], dtype=np.int64),
            np.array([given.containers], dtype=np.int64),
            [agg.retuned],
        )
        est, [reason] = propose_rows(rows, s)
        return Proposal(est.at(0), reason)


def propose_rows(rows: Rows, s: RecommenderSettings) -> tuple[Estimates, list[str]]:
    """`VpaStrategy.propose` of many rows at once, with the settings `s` (a policy's
    parameters already in them): their estimates (estimator.estimate_rows) and reasons."""
    est = estimate_rows(
        rows.cpu, rows.memory, rows.first, rows.last, rows.count, rows.containers, s
    )
    floor_cpu, floor_memory = pod_minimums(rows.containers, s)
    at_cpu = (est.cpu[:, 0] == floor_cpu).tolist()
    at_memory = (est.memory[:, 0] == floor_memory).tolist()
    summary = _summary(s)
    last = np.asarray(rows.last).tolist()
    containers = np.asarray(rows.containers).tolist()
    reasons = []
    for i, wording in enumerate(confidence_wordings(rows.first, rows.last, rows.count, s)):
        reason = f"{summary}; {wording}"
        if at_cpu[i] or at_memory[i]:
            reason += _at_floor(containers[i], s, at_cpu[i], at_memory[i])
        retuned = rows.retuned[i]
        note = retuned.note(None if math.isnan(last[i]) else last[i]) if retuned else None
        if note:
            reason += "; " + note
        reasons.append(reason)
    return est, reasons


@lru_cache(maxsize=256)
def _at_floor(containers: int, s: RecommenderSettings, cpu: bool, memory: bool) -> str:
    """What the reason says of targets at the pod minimum (the same for every container of
    as many containers, written once)."""
    floor = pod_minimum(containers, s)
    at_floor = []
    if cpu:
        at_floor.append(f"CPU {format_cpu(floor.cpu)}")
    if memory:
        at_floor.append(f"memory {readable('memory', floor.memory)}")
    return "; pod minimum " + ", ".join(at_floor)


@lru_cache(maxsize=64)
def _summary(s: RecommenderSettings) -> str:
    """What the reason says of the settings, the same for every container estimated with them
    (written once for each settings)."""
    return (
        f"vpa: CPU p{_pct(s.target_cpu_percentile)} of usage (half-life "
        f"{_hours(s.cpu_half_life_seconds)}), memory p{_pct(s.target_memory_percentile)} of "
        f"{_peaks(s.memory_aggregation_interval_seconds)}, each "
        f"+{_pct(s.safety_margin_fraction)}%"
    )


def _pct(fraction: float) -> str:
    return f"{fraction * 100:g}"


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:g}h"


def _peaks(interval: float) -> str:
    """What a memory sample of the histogram is: the peak of one aggregation interval."""
    return "daily peaks" if interval == 86400 else f"peaks per {_hours(interval)}"
