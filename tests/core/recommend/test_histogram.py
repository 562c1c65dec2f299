"""Histogram math against values worked out by hand from the bucket formula."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.recommend.aggregate import cpu_buckets, memory_buckets
from app.core.recommend.histogram import (
    DecayingHistogram,
    ExponentialBuckets,
    Histogram,
    HistogramCheckpoint,
)
from app.core.recommend.settings import DAY, RecommenderSettings

S = RecommenderSettings()
CPU = cpu_buckets(S)
MEM = memory_buckets(S)


def test_default_histograms_have_176_buckets() -> None:
    # ceil(log(1000 * 0.05 / 0.01 + 1) / log(1.05)) = ceil(174.57) = 175, plus the bucket at 0.
    assert CPU.num_buckets == 176
    assert MEM.num_buckets == 176


@pytest.mark.parametrize(
    ("bucket", "cpu_start", "memory_start"),
    [
        (0, 0.0, 0.0),
        (1, 0.01, 1e7),
        (2, 0.0205, 2.05e7),  # 0.01 + 0.01 * 1.05
        (10, 0.12577893, 1.2577893e8),  # 0.2 * (1.05^10 - 1)
        (26, 0.51113454, 5.1113454e8),
        (175, 1021.1094089, 1.0211094089e12),
    ],
)
def test_bucket_starts(bucket: int, cpu_start: float, memory_start: float) -> None:
    assert CPU.bucket_start(bucket) == pytest.approx(cpu_start, rel=1e-7)
    assert MEM.bucket_start(bucket) == pytest.approx(memory_start, rel=1e-7)


@pytest.mark.parametrize(
    ("value", "bucket"),
    [(0.0, 0), (0.0099, 0), (0.01, 1), (0.0204, 1), (0.0206, 2), (0.5, 25), (5000.0, 175)],
)
def test_find_bucket(value: float, bucket: int) -> None:
    assert CPU.find_bucket(value) == bucket


@given(st.floats(min_value=0, max_value=2e12, allow_nan=False), st.sampled_from([CPU, MEM]))
def test_find_bucket_is_the_formula(value: float, buckets: ExponentialBuckets) -> None:
    """The constants find_bucket keeps give the bucket of the formula as written, bit for bit."""
    if value < buckets.first_bucket_size:
        expected = 0
    else:
        expected = int(
            math.log(value * (buckets.ratio - 1) / buckets.first_bucket_size + 1)
            / math.log(buckets.ratio)
        )
    assert buckets.find_bucket(value) == min(expected, buckets.num_buckets - 1)


def test_buckets_compare_by_their_options_alone() -> None:
    assert cpu_buckets(S) == CPU and hash(cpu_buckets(S)) == hash(CPU)
    assert "_scale" not in repr(CPU)


def test_percentile_is_the_end_of_the_bucket() -> None:
    h = Histogram(CPU)
    h.add_sample(0.5, 1.0)  # bucket 25 = [0.4868, 0.5111)
    assert h.percentile(0.9) == pytest.approx(0.51113454, rel=1e-7)
    assert h.percentile(0.0) == pytest.approx(0.51113454, rel=1e-7)


def test_percentile_walks_cumulative_weight() -> None:
    h = Histogram(CPU)
    h.add_sample(0.015, 3.0)  # bucket 1, ends at 0.0205
    h.add_sample(0.5, 1.0)  # bucket 25, ends at 0.5111
    assert h.percentile(0.75) == pytest.approx(0.0205)  # 3 of 4 reached in bucket 1
    assert h.percentile(0.76) == pytest.approx(0.51113454)


def test_last_bucket_percentile_is_its_start() -> None:
    h = Histogram(CPU)
    h.add_sample(1e6, 1.0)
    assert h.percentile(0.5) == pytest.approx(1021.1094089)


def test_empty_histogram() -> None:
    h = Histogram(CPU)
    assert h.is_empty()
    assert h.percentile(0.9) == 0.0
    h.add_sample(1.0, 1e-5)  # below epsilon: still empty
    assert h.is_empty()


def test_subtract_restores_empty() -> None:
    h = Histogram(MEM)
    h.add_sample(1e9, 1.0)
    h.subtract_sample(1e9, 1.0)
    assert h.is_empty()
    assert h.total_weight == 0.0


def test_negative_weight_is_rejected() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        Histogram(CPU).add_sample(1.0, -1.0)


def test_decay_halves_weight_every_half_life() -> None:
    h = DecayingHistogram(CPU, DAY)
    t0 = 1_700_000_000.0
    h.add_sample_at(0.015, 1.0, t0)
    h.add_sample_at(0.5, 1.0, t0 + DAY)  # counts twice as much as the day-old sample
    assert h.weights[25] / h.weights[1] == pytest.approx(2.0)
    assert h.percentile(0.33) == pytest.approx(0.0205)
    assert h.percentile(0.34) == pytest.approx(0.51113454)
    h.add_sample_at(0.5, 1.0, t0 + 3 * DAY)  # weight 8 relative to the first
    assert (h.weights[25]) / h.weights[1] == pytest.approx(10.0)


def test_decay_renormalises_without_changing_ratios() -> None:
    h = DecayingHistogram(CPU, DAY)
    t0 = 1_700_000_000.0
    h.add_sample_at(0.015, 1.0, t0)
    ref = h.reference_time
    h.add_sample_at(0.5, 2.0**-150, t0 + 150 * DAY)  # forces a shift of the reference
    assert h.reference_time != ref
    assert h.reference_time is not None and h.reference_time % DAY == 0
    assert h.weights[25] / h.weights[1] == pytest.approx(1.0)


def test_buckets_validate_options() -> None:
    with pytest.raises(ValueError):
        ExponentialBuckets(1000.0, 0.01, ratio=1.0)


def test_checkpoint_scales_heaviest_bucket_to_10000() -> None:
    h = Histogram(CPU)
    h.add_sample(0.1, 4.0)
    h.add_sample(1.0, 1.0)
    cp = h.save()
    assert max(cp.bucket_weights.values()) == 10000
    assert cp.bucket_weights[CPU.find_bucket(1.0)] == 2500
    assert cp.total_weight == pytest.approx(5.0)


def test_checkpoint_round_trip_keeps_percentiles_within_a_bucket() -> None:
    rng = random.Random(7)
    h = DecayingHistogram(MEM, DAY)
    t = 1_700_000_000.0
    for i in range(5000):
        h.add_sample_at(rng.lognormvariate(20, 1.5), rng.uniform(0.1, 4), t + 60 * i)
    cp = HistogramCheckpoint.from_json(h.save().to_json())
    restored = DecayingHistogram(MEM, DAY)
    restored.load(cp)
    assert restored.reference_time == h.reference_time
    assert restored.total_weight == pytest.approx(h.total_weight)
    for p in (0.01, 0.1, 0.5, 0.9, 0.95, 0.99):
        a, b = (
            MEM.find_bucket(h.percentile(p) * 0.999),
            MEM.find_bucket(restored.percentile(p) * 0.999),
        )
        assert abs(a - b) <= 1, p


@pytest.mark.parametrize(
    ("cp", "message"),
    [
        (HistogramCheckpoint({3: 10}, -1.0), "negative total"),
        (HistogramCheckpoint({176: 10}, 1.0), "outside"),
        (HistogramCheckpoint({-1: 10}, 1.0), "outside"),
    ],
)
def test_bad_checkpoints_are_rejected(cp: HistogramCheckpoint, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Histogram(CPU).load(cp)


def test_empty_checkpoint_loads_nothing() -> None:
    h = Histogram(CPU)
    h.load(HistogramCheckpoint({}, 0.0))
    assert h.is_empty()


def _walked(h: Histogram, p: float) -> float:
    """VPA's histogram.Percentile as written: bucket by bucket from the lightest with weight,
    stopping at the heaviest (the reference Histogram.percentiles is checked against)."""
    if h.weights[h.min_bucket] < h.buckets.epsilon:
        return 0.0
    threshold, running, b = p * h.total_weight, 0.0, h.min_bucket
    while b < h.max_bucket:
        running += h.weights[b]
        if running >= threshold:
            break
        b += 1
    return h.buckets.bucket_start(b + 1 if b < h.buckets.num_buckets - 1 else b)


# thresholds a running weight meets exactly (halves, quarters of whole weights) and any other
_FRACTIONS = st.one_of(
    st.sampled_from([0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 1.0, math.nan]),
    st.floats(min_value=-0.5, max_value=1.5, allow_nan=False),
)
_VALUES = st.one_of(
    st.sampled_from([0.0, 0.01, 0.015, 0.5, 0.51, 3.0, 1e6]),
    st.floats(min_value=0, max_value=2e3, allow_nan=False),
)
# whole half-lives from the reference keep whole weights whole (ties again), and any other time
_TIMES = st.one_of(
    st.sampled_from([0.0, S.cpu_half_life_seconds, 2 * S.cpu_half_life_seconds]),
    st.floats(0, 30 * DAY),
)
_OPERATIONS = st.lists(
    st.one_of(
        st.tuples(
            st.just("add"),
            _VALUES,
            st.one_of(st.sampled_from([1.0, 2.0, 3.0]), st.floats(0, 1e3, allow_nan=False)),
            _TIMES,
        ),
        st.tuples(st.just("subtract"), _VALUES, st.sampled_from([1.0, 0.5]), _TIMES),
        st.tuples(st.just("scale"), st.sampled_from([0.0, 0.5, 2.0]), st.just(0.0), st.just(0.0)),
    ),
    max_size=40,
)


@settings(max_examples=400)  # a tie takes about a hundred examples to come up
@given(_OPERATIONS, st.lists(_FRACTIONS, max_size=5))
def test_percentiles_are_the_walks_of_each(ops: list[tuple[Any, ...]], ps: list[float]) -> None:
    """Histogram.percentiles (one running sum, thresholds found by bisection) gives what the
    walk gives for each fraction, on histograms made by any sequence of samples added and
    taken out, decays and rescales, ties of the running weight with a threshold included."""
    h = DecayingHistogram(CPU, S.cpu_half_life_seconds)
    for op, value, weight, t in ops:
        if op == "add":
            h.add_sample_at(value, weight, t)
        elif op == "subtract":
            h.subtract_sample_at(value, weight, t)
        else:
            h.scale(value)
    expected = [_walked(h, p) for p in ps]
    assert h.percentiles(ps) == expected
    assert [h.percentile(p) for p in ps] == expected


@pytest.mark.parametrize("odd", [math.nan, -1.0])
def test_percentiles_of_odd_weights_are_the_walks(odd: float) -> None:
    """A NaN or negative weight among the walked buckets (no operation makes one; a weight set
    by hand does) and a NaN fraction are read as the walk reads them."""
    h = Histogram(CPU)
    for value, weight in ((0.015, 3.0), (0.1, 1.0), (0.5, 2.0), (1.0, 1.0)):
        h.add_sample(value, weight)
    h.weights[CPU.find_bucket(0.1)] = odd
    ps = [0.1, 0.5, 0.9, math.nan]
    assert h.percentiles(ps) == [_walked(h, p) for p in ps]
    assert math.isnan(h.total_weight) or h.percentile(0.9) == _walked(h, 0.9)


@given(
    st.lists(
        st.tuples(st.sampled_from([0.01, 0.015, 0.1, 0.5, 3.0]), st.sampled_from([1.0, 2.0, 4.0])),
        max_size=8,
    ),
    st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=1, max_size=4),
)
def test_percentiles_at_ties_are_the_walks(
    samples: list[tuple[float, float]], ps: list[float]
) -> None:
    """Whole weights and quarter fractions: a running weight equal to a threshold stops the walk
    at that bucket, and Histogram.percentiles there too."""
    h = Histogram(CPU)
    for value, weight in samples:
        h.add_sample(value, weight)
    assert h.percentiles(ps) == [_walked(h, p) for p in ps]
