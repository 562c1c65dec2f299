"""The estimator chain against numbers worked out by hand."""

from __future__ import annotations

import pytest

from app.core.recommend.aggregate import AggregateState, oom_bump
from app.core.recommend.estimator import (
    confidence,
    confidence_factor,
    estimate,
    pod_minimum,
    with_margin,
)
from app.core.recommend.settings import DAY, MIB, RecommenderSettings
from app.core.recommend.trace import parse_trace, recommendations_json, replay
from app.core.resources import Resources

S = RecommenderSettings()


def test_single_sample_example() -> None:
    # CPU: 0.5 core is in bucket 25, which ends at 0.51113 -> 511m, + 15% -> 587m.
    # Memory: 1e9 is in bucket 36, which ends at 1016281388 -> + 15% -> 1168723596, rounded up
    # to whole MiB (RIGHTSIZER_ROUND_MEMORY_BYTES) -> 1115Mi.
    rows = parse_trace(["timestamp,container,cpu,memory", "1700000000,app,0.5,1000000000"])
    out = recommendations_json(replay(rows))
    [c] = out["containers"]  # type: ignore[misc]
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
    assert with_margin(Resources(511, 1_016_281_388), 0.15) == Resources(587, 1_168_723_596)


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
