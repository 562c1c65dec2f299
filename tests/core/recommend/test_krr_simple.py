"""`krr-simple` against what Robusta KRR documents for its simple strategy.

KRR's README ("Algorithm"): "For CPU, we set a request at the 95th percentile with no limit.
Meaning, in 95% of the cases, your CPU request will be sufficient." and "For memory, we take the
maximum value over the past week and add a 15% buffer." Its settings (strategies/simple.py):
cpu_percentile 95, memory_buffer_percentage 15, points_required 100 ("Not enough data"),
history_duration 336 hours, use_oomkill_data off with oom_memory_buffer_percentage 25; its runner
rounds CPU up to 1m and memory up to 1 MiB, at least --cpu-min 10m and --mem-min 100 MiB; the
memory limit is the request, CPU gets no limit. Its description's example:
`krr simple --cpu_percentile=90 --memory_buffer_percentage=15 --history_duration=24`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.recommend.array_model import ArrayModel
from app.core.recommend.settings import DAY, MIB
from app.core.recommend.strategies import configure
from app.core.recommendation import Recommendation
from app.core.workload_key import WorkloadKey

W = WorkloadKey("shop", "Deployment", "web")
T0 = 1_700_006_400.0  # a UTC midnight


def model_of(cpu: Sequence[float], memory: Sequence[float], step: float = 60.0) -> ArrayModel:
    m = ArrayModel()
    for i, (c, mem) in enumerate(zip(cpu, memory, strict=True)):
        m.add_cpu(W, "web-1", "app", T0 + i * step, c, 0.5)
        m.add_memory(W, "web-1", "app", T0 + i * step, mem)
    return m


def krr(m: ArrayModel, **params: object) -> Recommendation | None:
    return m.recommend(W, None, configure("krr-simple", params)).get("app")


def test_cpu_request_is_the_95th_percentile_sufficient_95_percent_of_the_time() -> None:
    cpu = [0.1 + (i % 100) / 100 for i in range(1000)]  # 0.10 .. 1.09 cores, evenly
    m = model_of(cpu, [500 * MIB] * 1000)
    rec = krr(m)
    assert rec is not None
    request = rec.target.cpu / 1000
    assert sum(c > request for c in cpu) / len(cpu) <= 0.05
    exact = sorted(cpu)[949]  # the 95th percentile of the samples
    assert exact <= request <= exact * 1.05 + 0.001  # the end of its 5% bucket, whole millicores
    assert "CPU p95 of 1000 samples" in rec.reason and "no limit" in rec.reason


def test_memory_request_is_the_maximum_plus_15_percent_in_whole_mib() -> None:
    memory = [400 * MIB + i * 1000 for i in range(200)]
    m = model_of([0.2] * 200, memory)
    rec = krr(m)
    assert rec is not None
    assert rec.target.memory == math.ceil(max(memory) * 1.15 / MIB) * MIB
    assert "memory max" in rec.reason and "+ 15%" in rec.reason
    assert "limit = request" in rec.reason


def test_fewer_than_points_required_gives_no_recommendation() -> None:
    assert krr(model_of([0.2] * 99, [300 * MIB] * 99)) is None
    assert krr(model_of([0.2] * 100, [300 * MIB] * 100)) is not None
    assert krr(model_of([0.2] * 10, [300 * MIB] * 10), pointsRequired=10) is not None


def test_the_minimums_are_10m_and_100_mib() -> None:
    rec = krr(model_of([0.001] * 200, [1 * MIB] * 200))
    assert rec is not None
    # 1m of CPU is in the histogram's first bucket, which ends at 10m: the minimum itself
    assert (rec.target.cpu, rec.target.memory) == (10, 100 * MIB)
    assert "(--mem-min)" in rec.reason
    rec = krr(model_of([0.001] * 200, [1 * MIB] * 200), cpuMin=50, memMin=0)
    assert rec is not None
    assert (rec.target.cpu, rec.target.memory) == (50, 2 * MIB)  # 1.15 MiB rounded up to MiB
    assert "50m, no limit (--cpu-min)" in rec.reason


def test_the_description_example_reads_only_the_last_24_hours() -> None:
    """`--cpu_percentile=90 --memory_buffer_percentage=15 --history_duration=24`."""
    day = int(DAY / 300)
    cpu = [4.0] * day + [0.5] * day  # a busy first day, a quiet second one
    memory = [4096 * MIB] * day + [512 * MIB] * day
    m = model_of(cpu, memory, step=300)
    rec = krr(m, cpuPercentile=90, memoryBufferPercentage=15, historyDuration=24)
    assert rec is not None
    assert 500 <= rec.target.cpu <= 525
    assert rec.target.memory == math.ceil(512 * 1.15) * MIB
    whole = krr(m)  # the default 336 hours see the busy day
    assert whole is not None and whole.target.memory == math.ceil(4096 * 1.15) * MIB


def test_oom_kill_data_is_used_only_when_asked() -> None:
    m = model_of([0.2] * 200, [300 * MIB] * 200)
    m.record_oom(W, "web-1", "app", T0 + 200 * 60, 1024 * MIB)
    off = krr(m)
    on = krr(m, useOomkillData=True)
    assert off is not None and on is not None
    assert off.target.memory == math.ceil(300 * 1.15) * MIB
    assert on.target.memory == 1280 * MIB  # 1 GiB at the kill + 25%
    assert "OOM kill" in on.reason


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(min_value=0.0, max_value=8.0), min_size=100, max_size=400),
    st.floats(min_value=1, max_value=100),
    st.floats(min_value=1, max_value=100),
)
def test_a_higher_percentile_never_lowers_cpu_and_a_bigger_buffer_never_lowers_memory(
    cpu: list[float], p: float, q: float
) -> None:
    memory = [100 * MIB + c * 100 * MIB for c in cpu]
    m = model_of(cpu, memory)
    lo, hi = sorted((p, q))
    a, b = (
        krr(m, cpuPercentile=lo, memoryBufferPercentage=lo),
        krr(m, cpuPercentile=hi, memoryBufferPercentage=hi),
    )
    assert a is not None and b is not None
    assert a.target.cpu <= b.target.cpu
    assert a.target.memory <= b.target.memory
    assert b.target.memory >= max(memory) * (1 + hi / 100)
    # bounds always hold the target, so the updater's range includes it
    assert b.lower_bound.cpu <= b.target.cpu <= b.upper_bound.cpu
    assert b.lower_bound.memory <= b.target.memory <= b.upper_bound.memory
