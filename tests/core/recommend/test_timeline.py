"""The recommendation over time: usage percentiles of a window, and the hourly points a replay of
past samples writes (app.core.recommend.timeline)."""

from __future__ import annotations

import gc
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.recommend.array_model import ArrayModel
from app.core.recommend.settings import RecommenderSettings
from app.core.recommend.taken import TakenColumns
from app.core.recommend.timeline import HOUR, Sample, UsageWindow, UsageWindows, add_all, replay
from app.core.recommendation import ContainerPolicy
from app.core.workload_key import WorkloadKey

W = WorkloadKey("shop", "Deployment", "frontend")
T0 = 1_700_000_000.0 - 1_700_000_000.0 % HOUR  # an hour boundary


def exact(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p * len(ordered)) - 1)]


@given(st.lists(st.floats(0.01, 50.0), min_size=1, max_size=200))
def test_percentiles_are_within_a_bucket_of_the_exact_ones(values: list[float]) -> None:
    w = UsageWindow(RecommenderSettings())
    for v in values:
        w.add_cpu(v)
    p = w.percentiles()
    for got, q in ((p.cpu_p50, 0.5), (p.cpu_p90, 0.9)):
        assert got is not None
        want = exact(values, q) * 1000
        assert want - 1 <= got <= max(want * 1.06, 10.0) + 1  # buckets are 5% wide up there
        assert got <= max(values) * 1000 + 1
    assert p.memory_p50 is None and p.memory_p90 is None


def test_memory_percentiles_in_bytes_and_bad_samples_ignored() -> None:
    w = UsageWindow(RecommenderSettings())
    for v in [100e6] * 5 + [400e6] * 5 + [float("nan"), -1.0]:
        w.add_memory(v)
    p = w.percentiles()
    assert p.memory_p50 == 100_000_000
    assert p.memory_p90 == 400_000_000  # never above the largest sample


def bucket_top(values: list[float], window: UsageWindow, p: float) -> float:
    """The reference: the largest value of the bucket where the count of values (in bucket
    order) reaches p of them, each value's bucket found on its own."""
    find = window.cpu.buckets.find_bucket
    by_bucket: dict[int, list[float]] = {}
    for v in values:
        by_bucket.setdefault(find(v), []).append(v)
    running = 0
    for b in sorted(by_bucket):
        running += len(by_bucket[b])
        if running >= p * len(values):
            return max(by_bucket[b])
    raise AssertionError("the count never reached p")


@given(
    st.lists(st.floats(0.0, 200.0), min_size=1, max_size=300),
    st.integers(1, 5),
    st.sampled_from([0.5, 0.9, 1.0]),
)
def test_a_percentile_is_the_largest_sample_of_its_bucket(
    values: list[float], parts: int, p: float
) -> None:
    """Added one by one or in slices, the counts answer as the reference does."""
    one, windows = UsageWindow(RecommenderSettings()), UsageWindows(RecommenderSettings())
    for v in values:
        one.add_cpu(v)
    step = max(1, len(values) // parts)
    for i in range(0, len(values), step):
        windows.add_taken(TakenColumns.of_lists({(W, "app"): (values[i : i + step], [])}))
    many = windows.window((W, "app"))
    want = bucket_top(values, one, p)
    assert one.cpu.percentiles((p, 0.5)) == [want, bucket_top(values, one, 0.5)]
    assert many.cpu.percentiles((p,)) == [want]
    assert one.cpu.total == many.cpu.total == len(values)


def test_windows_share_their_layouts_and_hold_nothing_the_collector_walks() -> None:
    """A run starts thousands of windows: they share one bucket layout per settings, and their
    counts (dicts of plain numbers) are not tracked by the cyclic garbage collector, which walks
    whatever a run leaves behind."""
    a, b = UsageWindow(RecommenderSettings()), UsageWindow(RecommenderSettings())
    other = UsageWindow(RecommenderSettings(histogram_bucket_ratio=1.1))
    assert a.cpu.buckets is b.cpu.buckets and a.memory.buckets is b.memory.buckets
    assert other.cpu.buckets.ratio == 1.1 and a.cpu.buckets.ratio == 1.05
    add_all([a.cpu], [0, 0, 0], [0.1, 0.2, 5.0])  # counted as add_taken counts
    a.add_memory(3e8)
    for counts in (a.cpu, a.memory):
        assert counts.total and not gc.is_tracked(counts.counts)
        assert not gc.is_tracked(counts.tops)


def test_windows_hand_over_and_restart() -> None:
    ws = UsageWindows(RecommenderSettings())
    ws.window((W, "web")).add_cpu(0.2)
    assert ws.peek((W, "web")) is not None and ws.peek((W, "api")) is None
    ws.reset([(W, "web")])
    assert ws.peek((W, "web")) is None


def samples(hours: int, step: float = 300.0, growth: float = 0.0) -> list[Sample]:
    """Two pods, a sample each every `step`: CPU about 0.2 cores (plus `growth` cores a day),
    memory about 150 MB."""
    out = []
    for i in range(int(hours * HOUR / step)):
        t = T0 + 60 + i * step
        cpu = 0.2 + (i % 12) / 100 + growth * (t - T0) / (24 * HOUR)
        for pod in ("frontend-a", "frontend-b"):
            out.append(Sample(t, W, pod, "web", cpu_cores=cpu, request_cores=1.0))
            out.append(Sample(t, W, pod, "web", memory_bytes=150e6 + (i % 6) * 1e6))
    return out


def test_a_replay_writes_a_point_at_every_hour_boundary_it_crosses() -> None:
    replayed = ArrayModel()
    fed, points = replay(replayed, samples(8 * 24, growth=0.05))
    assert fed == 4 * 12 * 8 * 24  # every sample: 2 pods x cpu and memory, 12 an hour
    assert [p.time for p in points] == [T0 + h * HOUR for h in range(1, 8 * 24)]
    assert {(p.workload, p.container) for p in points} == {(W, "web")}
    # each point holds the recommendation at its time, and this hour's usage
    assert points[0].target.cpu < points[-1].target.cpu  # it followed the growth
    first, last = points[0].usage, points[-1].usage
    assert first.cpu_p50 is not None and 200 <= first.cpu_p50 <= 320
    assert last.cpu_p50 is not None and 590 <= last.cpu_p50 <= 720  # 8 days x 50m later
    assert last.cpu_p90 is not None and last.cpu_p50 <= last.cpu_p90 <= 720
    assert last.memory_p90 is not None and 150e6 <= last.memory_p90 <= 155e6
    # the model ends as if the samples had been fed directly
    direct = ArrayModel()
    for s in samples(8 * 24, growth=0.05):
        if s.cpu_cores is not None:
            direct.add_cpu(s.workload, s.pod, s.container, s.time, s.cpu_cores, s.request_cores)
        else:
            assert s.memory_bytes is not None
            direct.add_memory(s.workload, s.pod, s.container, s.time, s.memory_bytes)
    assert replayed.recommend(W) == direct.recommend(W)


def test_a_replay_applies_the_policies_and_skips_quiet_hours() -> None:
    quiet = [s for s in samples(5) if not T0 + 2 * HOUR <= s.time < T0 + 3 * HOUR]
    capped = [ContainerPolicy("web", max_allowed={"cpu": 150})]
    _, points = replay(ArrayModel(), quiet, lambda w: capped)
    assert [p.time for p in points] == [T0 + HOUR, T0 + 2 * HOUR, T0 + 4 * HOUR]
    assert {p.target.cpu for p in points} == {150}


def test_no_samples_no_points() -> None:
    assert replay(ArrayModel(), []) == (0, [])


@pytest.mark.parametrize("step", [HOUR, 2 * HOUR])
def test_the_step_sets_the_spacing(step: float) -> None:
    _, points = replay(ArrayModel(), samples(6), step=step)
    assert [p.time for p in points] == [T0 + step * k for k in range(1, int(6 * HOUR / step))]


_usage = st.one_of(
    st.floats(0.0, 64.0),
    st.floats(0.0, 1e11),
    st.sampled_from([0.0, -1.0, math.nan, math.inf, 1e-12, 0.01, 0.0100000001]),
)


@given(
    st.dictionaries(
        st.sampled_from(["app", "side", "db", "proxy"]),
        st.tuples(st.lists(_usage, max_size=12), st.lists(_usage, max_size=12)),
        max_size=4,
    ),
    st.integers(0, 2),
)
def test_taken_values_are_counted_as_one_by_one(
    taken: dict[str, tuple[list[float], list[float]]], earlier: int
) -> None:
    """add_taken (every window at once) leaves each window's counts, tops and total as adding
    each value alone does, also on windows that held samples before; a key without values
    starts its window empty."""
    settings = RecommenderSettings()
    keys = {(W, c): v for c, v in taken.items()}
    at_once, one_by_one = UsageWindows(settings), UsageWindows(settings)
    for _ in range(earlier):  # windows holding samples already
        at_once.add_taken(TakenColumns.of_lists(keys))
        for key, (cores, bytes_) in keys.items():
            for v in cores:
                one_by_one.window(key).add_cpu(v)
            for v in bytes_:
                one_by_one.window(key).add_memory(v)
    fed = at_once.add_taken(TakenColumns.of_lists(keys))
    for key, (cores, bytes_) in keys.items():
        window = one_by_one.window(key)
        for v in cores:
            window.add_cpu(v)
        for v in bytes_:
            window.add_memory(v)
    assert fed == sum(len(c) + len(b) for c, b in keys.values())
    assert set(at_once.windows) == set(one_by_one.windows) == set(keys)
    for key in keys:
        a, b = at_once.windows[key], one_by_one.windows[key]
        for x, y in ((a.cpu, b.cpu), (a.memory, b.memory)):
            assert (x.counts, x.tops, x.total) == (y.counts, y.tops, y.total)
