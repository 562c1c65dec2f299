"""The estimator chain against numbers worked out by hand."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.recommend.aggregate import AggregateState, oom_bump
from app.core.recommend.estimator import (
    amounts,
    confidence,
    confidence_factor,
    estimate,
    estimate_rows,
    plus_margins,
    pod_minimum,
)
from app.core.recommend.settings import DAY, MIB, RecommenderSettings
from app.core.recommend.trace import parse_trace, recommendations_json, replay
from app.core.resources import Resources, amount

S = RecommenderSettings()


def plus_margin(value: int, fraction: float) -> int:
    """The margin on one plain number, as VPA's: truncated to a whole amount."""
    return value + amount(value * fraction)


def with_margin(r: Resources, fraction: float) -> Resources:
    return Resources(plus_margin(r.cpu, fraction), plus_margin(r.memory, fraction))


def test_single_sample_example() -> None:
    # CPU: 0.5 core is in bucket 25, which ends at 0.51113 -> 511m, + 15% -> 587m.
    # Memory: 1e9 is in bucket 36, which ends at 1016281388 -> + 15% -> 1168723596, rounded up
    # to whole MiB (RIGHTSIZER_ROUND_MEMORY_BYTES) -> 1115Mi.
    rows = parse_trace(["timestamp,container,cpu,memory", "1700000000,app,0.5,1000000000"])
    out = recommendations_json(replay(rows))
    [c] = cast(list[dict[str, Any]], out["containers"])
    assert c["target"] == {"cpu": "587m", "memory": "1115Mi"}
    assert c["uncappedTarget"] == c["target"]
    # No history: the lower bound collapses to the pod minimum, the upper bound is unbounded
    # (int64 inside, "unknown" written out).
    assert c["lowerBound"] == {"cpu": "25m", "memory": "250Mi"}
    assert c["upperBound"] == {"cpu": "unknown", "memory": "unknown"}


@pytest.mark.parametrize(
    ("history", "upper", "lower"),
    [
        (0.5 * DAY, 3.0, (1 + 0.001 / 0.5) ** -2),
        (DAY, 2.0, (1.001) ** -2),
        (7 * DAY, 1 + 1 / 7, (1 + 0.001 / 7) ** -2),
    ],
)
def test_confidence_multipliers(history: float, upper: float, lower: float) -> None:
    agg = AggregateState.empty(S)
    samples = int(history / 60) + 1  # one a minute, so the sample count never limits confidence
    for i in range(samples):
        agg.add_cpu(1_700_000_000.0 + 60 * i, 0.2, 1.0)
    conf = confidence(agg, S)
    assert conf == pytest.approx(history / DAY)
    assert confidence_factor(conf, 1.0, 1.0) == pytest.approx(upper)
    assert confidence_factor(conf, 0.001, -2.0) == pytest.approx(lower)


def test_confidence_is_limited_by_sample_count() -> None:
    agg = AggregateState.empty(S)
    agg.add_cpu(0.0, 0.2, 1.0)
    agg.add_cpu(7 * DAY, 0.2, 1.0)  # a week apart but only 2 samples
    assert confidence(agg, S) == pytest.approx(2 / 1440)


def test_no_history_factors() -> None:
    assert confidence_factor(0.0, 1.0, 1.0) == float("inf")
    assert confidence_factor(0.0, 0.001, -2.0) == 0.0


def test_pod_minimum_for_one_and_two_containers() -> None:
    assert pod_minimum(1, S) == Resources(25, 262_144_000)
    assert pod_minimum(2, S) == Resources(12, 131_072_000)


def test_margin_adds_truncated_fraction() -> None:
    got = plus_margins(np.array([511, 1_016_281_388], dtype=np.int64), 0.15).tolist()
    assert got == [587, 1_168_723_596]


@pytest.mark.parametrize(
    ("used", "needed"),
    [
        (1000 * MIB, 1200 * MIB),  # 20% (200 MiB) beats the 100 MiB minimum
        (1 * MIB, 101 * MIB),  # the 100 MiB minimum beats 20%
        (500 * MIB, 600 * MIB),  # both give 600 MiB
    ],
)
def test_oom_bump(used: float, needed: int) -> None:
    assert oom_bump(used, S) == needed


def test_estimate_orders_bounds() -> None:
    agg = AggregateState.empty(S)
    for i in range(3 * 1440):
        agg.add_cpu(60.0 * i, 0.1 + (i % 10) / 10, 0.5)
    est = estimate(agg, 1, S)
    assert est.lower_bound.cpu <= est.target.cpu <= est.upper_bound.cpu
    assert est.lower_bound.cpu > 25


def _chained(agg: AggregateState, containers: int, s: RecommenderSettings) -> tuple[Any, ...]:
    """VPA's estimator chain step by step (each percentile on its own, +margin, x confidence
    for the bounds, at least the pod minimum), the reference `estimate` is checked against."""
    conf = confidence(agg, s)
    floor = pod_minimum(containers, s)
    out = []
    for cpu_p, memory_p, multiplier, exponent in (
        (s.target_cpu_percentile, s.target_memory_percentile, None, None),
        (
            s.lower_bound_cpu_percentile,
            s.lower_bound_memory_percentile,
            s.lower_bound_confidence_multiplier,
            s.lower_bound_confidence_exponent,
        ),
        (
            s.upper_bound_cpu_percentile,
            s.upper_bound_memory_percentile,
            s.upper_bound_confidence_multiplier,
            s.upper_bound_confidence_exponent,
        ),
    ):
        r = Resources(
            amount(agg.cpu.percentile(cpu_p) * 1000.0), amount(agg.memory.percentile(memory_p))
        )
        r = with_margin(r, s.safety_margin_fraction)
        if multiplier is not None and exponent is not None:
            r = r.scaled(confidence_factor(conf, multiplier, exponent))
        out.append(r.at_least(floor))
    return tuple(out)


_FRACTION = st.floats(min_value=0.01, max_value=1.0)


@given(
    st.lists(
        st.tuples(
            st.floats(0, 30 * DAY),
            st.one_of(st.just(0.0), st.floats(0, 64)),
            st.one_of(st.just(0.0), st.floats(0, 1e11)),
        ),
        max_size=30,
    ),
    st.integers(1, 4),
    st.fixed_dictionaries(
        {
            "target_cpu_percentile": _FRACTION,
            "lower_bound_memory_percentile": _FRACTION,
            "upper_bound_cpu_percentile": _FRACTION,
            "safety_margin_fraction": st.floats(0, 2),
            "upper_bound_confidence_multiplier": st.floats(0, 2),
            "lower_bound_confidence_exponent": st.floats(-3, 3),
            "pod_min_cpu_millicores": st.floats(0, 1000),
            "pod_min_memory_mb": st.floats(0, 4096),
        }
    ),
)
def test_estimate_is_the_chain_step_by_step(
    samples: list[tuple[float, float, float]], containers: int, changed: dict[str, float]
) -> None:
    """estimate (each histogram's three percentiles in one pass, the chain on plain integers)
    gives what the chain's steps give one by one, for any history and settings."""
    s = RecommenderSettings(**changed)
    agg = AggregateState.empty(s)
    for t, cores, memory in sorted(samples):
        agg.add_cpu(t, cores, 0.5)
        agg.memory.add_sample_at(memory, 1.0, t)
    got = estimate(agg, containers, s)
    assert (got.target, got.lower_bound, got.upper_bound) == _chained(agg, containers, s)


@given(
    st.lists(
        st.tuples(
            st.lists(
                st.tuples(st.floats(0, 30 * DAY), st.floats(0, 64), st.floats(0, 1e11)),
                max_size=8,
            ),
            st.integers(1, 4),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_rows_estimated_together_are_each_the_chain(
    rows: list[tuple[list[tuple[float, float, float]], int]],
) -> None:
    """estimate_rows of many aggregates at once (different histories, container counts) gives
    each one what the chain gives it alone."""
    aggs = []
    for samples, _ in rows:
        agg = AggregateState.empty(S)
        for t, cores, memory in sorted(samples):
            agg.add_cpu(t, cores, 0.5)
            agg.memory.add_sample_at(memory, 1.0, t)
        aggs.append(agg)
    cpu_ps = (S.target_cpu_percentile, S.lower_bound_cpu_percentile, S.upper_bound_cpu_percentile)
    memory_ps = (
        S.target_memory_percentile,
        S.lower_bound_memory_percentile,
        S.upper_bound_memory_percentile,
    )
    got = estimate_rows(
        np.array([a.cpu.percentiles(cpu_ps) for a in aggs]),
        np.array([a.memory.percentiles(memory_ps) for a in aggs]),
        np.array([np.nan if a.first_sample is None else a.first_sample for a in aggs]),
        np.array([np.nan if a.last_sample is None else a.last_sample for a in aggs]),
        np.array([a.total_samples for a in aggs]),
        np.array([n for _, n in rows]),
        S,
    )
    for i, (agg, (_, containers)) in enumerate(zip(aggs, rows, strict=True)):
        e = got.at(i)
        assert (e.target, e.lower_bound, e.upper_bound) == _chained(agg, containers, S)


@given(st.lists(st.one_of(st.floats(), st.floats(-10, 1e19)), max_size=20))
def test_amounts_are_amount_of_each_value(values: list[float]) -> None:
    assert amounts(np.array(values, dtype=np.float64)).tolist() == [amount(v) for v in values]


def _nine_samples_two_minutes_apart() -> AggregateState:
    agg = AggregateState.empty(S)
    for i in range(9):
        agg.add_cpu(1_700_000_000.0 + 120 * i, 1.0, 1.0)
    return agg


def test_a_custom_confidence_interval_divides_both_the_span_and_the_sample_count() -> None:
    """VPA's TestConfidenceMultiplierWithCustomInterval (pkg/recommender/logic/estimator_test.go,
    kubernetes/autoscaler #7843): 9 samples 2 minutes apart and an 18-minute interval give a
    confidence of min(16 / 18, 9 / 18) = 0.5, so 3.14 cores x (1 + 0.1 / 0.5)^2 = 4.5216 (4521m
    as VPA truncates it). Scaling only the sample count would leave the span in days (0.011):
    3.14 x (1 + 0.1 / 0.011)^2, about 314 cores."""
    agg = _nine_samples_two_minutes_apart()
    s = RecommenderSettings(
        confidence_interval_cpu_seconds=18 * 60, confidence_interval_memory_seconds=18 * 60
    )
    conf = confidence(agg, s, s.confidence_interval_cpu_seconds)
    assert conf == pytest.approx(0.5)
    assert amount(3140 * confidence_factor(conf, 0.1, 2.0)) == 4521
    assert amount(3.14e9 * confidence_factor(conf, 0.1, 2.0)) == pytest.approx(4.5216e9, abs=1)
    assert confidence(agg, S) == pytest.approx(9 / 1440)  # the default interval: a day


def test_the_cpu_and_memory_bounds_each_use_their_own_interval() -> None:
    agg = _nine_samples_two_minutes_apart()
    agg.memory.add_sample_at(1e9, 1.0, 1_700_000_000.0)
    day = estimate(agg, 1, S)
    short_memory = estimate(agg, 1, RecommenderSettings(confidence_interval_memory_seconds=18 * 60))
    assert short_memory.upper_bound.cpu == day.upper_bound.cpu  # CPU: still a day
    # memory: confidence 0.5 instead of 9/1440, so a far narrower upper bound
    assert short_memory.upper_bound.memory < day.upper_bound.memory / 50
    expected = plus_margin(amount(agg.memory.percentile(0.95)), 0.15) * (1 + 1 / 0.5)
    assert short_memory.upper_bound.memory == amount(expected)
