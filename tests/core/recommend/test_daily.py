"""Undecayed usage per UTC day: counts per bucket, windows of whole days, checkpoints."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.recommend.aggregate import AggregateState
from app.core.recommend.checkpoint import load_aggregate, save_aggregate
from app.core.recommend.daily import RETAINED_DAYS, BucketCounts, DailyUsage
from app.core.recommend.settings import DAY, MIB, RecommenderSettings
from tests.core.recommend.test_aggregate import Pod, W

S = RecommenderSettings()
T0 = 1_700_006_400.0  # a UTC midnight
assert T0 % DAY == 0


def usage() -> DailyUsage:
    return AggregateState.empty(S).daily


def test_a_window_is_whole_days_up_to_the_newest_sample() -> None:
    d = usage()
    d.add_memory(T0 + 100, 900 * MIB)  # day 0
    d.add_memory(T0 + DAY + 100, 300 * MIB)  # day 1
    d.add_memory(T0 + 2 * DAY - 1, 200 * MIB)  # still day 1
    one = d.window(1)
    assert (one.days, one.memory.count, one.memory.maximum) == (1, 2, 300 * MIB)
    assert one.memory.mean == 250 * MIB
    both = d.window(2)
    assert (both.days, both.memory.count, both.memory.maximum) == (2, 3, 900 * MIB)


def test_days_older_than_the_retained_ones_are_dropped_and_ignored() -> None:
    d = usage()
    d.add_cpu(T0, 5.0)
    d.add_cpu(T0 + RETAINED_DAYS * DAY, 0.5)  # 14 days later: day 0 falls out
    assert sorted(d.days) == [math.floor(T0 / DAY) + RETAINED_DAYS]
    d.add_cpu(T0 + 10, 7.0)  # a late sample of a dropped day is ignored
    w = d.window(RETAINED_DAYS)
    assert (w.cpu.count, w.cpu.maximum) == (1, 0.5)


def test_percentile_is_the_end_of_the_bucket_reached_like_vpa() -> None:
    d = usage()
    for i in range(1, 101):
        d.add_cpu(T0 + i, i / 100)  # 0.01 .. 1.00 cores
    dist = d.window(1).cpu
    b = dist.buckets.find_bucket(0.95)
    assert dist.percentile(0.95) == dist.buckets.bucket_start(b + 1)
    assert 0.95 <= dist.percentile(0.95) <= 0.95 * 1.05 + 0.01


@given(
    st.lists(st.floats(min_value=0, max_value=64, allow_nan=False), min_size=1, max_size=300),
    st.floats(min_value=0.01, max_value=1.0),
)
def test_percentile_is_within_one_bucket_of_the_exact_one(values: list[float], p: float) -> None:
    d = usage()
    for i, v in enumerate(values):
        d.add_cpu(T0 + i, v)
    dist = d.window(1).cpu
    exact = sorted(values)[max(math.ceil(p * len(values)) - 1, 0)]
    got = dist.percentile(p)
    assert got >= exact
    b = dist.buckets.find_bucket(exact)
    assert got <= dist.buckets.bucket_start(b + 1)
    assert dist.count == len(values) and dist.maximum == max(values)
    assert dist.total == pytest.approx(sum(values))


def test_the_aggregate_counts_every_accepted_sample_and_no_discarded_one() -> None:
    p = Pod()
    assert p.add_cpu_sample(T0, 0.5, 1.0)
    assert not p.add_cpu_sample(T0, 0.7, 1.0)  # duplicate
    assert p.add_memory_sample(T0, 100 * MIB)
    assert p.add_memory_sample(T0 + 60, 50 * MIB)  # every memory sample, not only the peak
    assert not p.add_memory_sample(T0 + 30, 999 * MIB)  # older than the last one
    assert p.record_oom(T0 + 90, 300 * MIB)
    w = p.m.daily[p.m.rows[W]["app"]].window(1)
    assert (w.cpu.count, w.memory.count) == (1, 2)
    assert (w.memory.maximum, w.oom_max) == (100 * MIB, 300 * MIB)


def test_checkpoint_round_trip_keeps_the_days() -> None:
    p = Pod()
    for i in range(300):
        p.add_cpu_sample(T0 + 600 * i, 0.1 + (i % 7) / 10, 0.5)
        p.add_memory_sample(T0 + 600 * i, (100 + i) * MIB)
    days = p.m.daily[p.m.rows[W]["app"]]
    restored = load_aggregate(p.m.save(W, "app"), S)
    assert restored.daily.save() == days.save()
    assert restored.daily.window(3) == days.window(3)


def test_a_checkpoint_without_days_loads_with_none() -> None:
    cp = save_aggregate(AggregateState.empty(S))
    cp.daily = None  # saved before daily usage existed
    assert load_aggregate(cp, S).daily.window(14).memory.count == 0


@pytest.mark.parametrize(
    ("daily", "message"),
    [
        ({"day": 1}, "must be a list"),
        ([{"day": "x"}], "whole 'day'"),
        ([{"day": 1, "cpu": [3, -1]}], "negative"),
        ([{"day": 1, "cpu": [3, 2**32]}], "out of range"),
        ([{"day": 1, "cpu": [-3, 1]}], "negative bucket"),
        ([{"day": 1, "cpu": [3, True]}], "whole numbers"),
        ([{"day": 1, "cpu": [3, 1.0]}], "whole numbers"),
        ([{"day": 1, "memory": "3"}], "whole numbers"),
        ([{"day": 1, "memory": [175, 1, 1]}], "beyond the histogram"),
        ([{"day": 1, "memoryMax": -1}], "memoryMax"),
    ],
)
def test_a_malformed_checkpoint_is_refused(daily: object, message: str) -> None:
    cp = save_aggregate(AggregateState.empty(S))
    cp.daily = daily  # type: ignore[assignment]
    with pytest.raises(ValueError, match=message):
        load_aggregate(cp, S)


def test_bucket_counts_grow_both_ways() -> None:
    c = BucketCounts()
    for b in (10, 7, 12, 10):
        c.add(b)
    assert list(c.items()) == [(7, 1), (10, 2), (12, 1)]
    assert BucketCounts.from_json(c.to_json(), "x").to_json() == c.to_json()


def test_recent_memory_weighs_a_day_by_its_age_in_half_lives() -> None:
    d = usage()
    d.add_memory(T0 + 100, 900 * MIB)  # day 0: one day old, weighs half
    d.add_memory(T0 + DAY + 100, 300 * MIB)  # day 1, the newest: weighs 1
    d.add_memory(T0 + 2 * DAY - 1, 200 * MIB)
    half = d.recent_memory(2, 1.0)
    assert half.count == 2.5
    assert half.mean == (0.5 * 900 + 300 + 200) / 2.5 * MIB
    assert half.maximum == 900 * MIB
    first = dict(half.counts)[d.memory_buckets.find_bucket(900 * MIB)]
    assert first == 0.5
    assert d.recent_memory(1, 1.0).count == 2  # the window still counts whole days
    flat = d.recent_memory(2, math.inf)  # no decay: the plain window
    plain = d.window(2).memory
    assert (flat.count, flat.total, flat.counts) == (plain.count, plain.total, plain.counts)
