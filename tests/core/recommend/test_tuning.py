"""A policy's `vpa` parameters tune its workload's history (ArrayModel.tune): the half-lives from
the histogram's reference time on, as VPA restarted from checkpoints with new flags; the memory
interval and OOM bump for the samples that follow, said in the reason while the old history
weighs; the idle time as VPA's memory aggregation window, interval x count."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.core.recommend.array_model import ArrayModel
from app.core.recommend.settings import RecommenderSettings
from app.core.recommend.strategies import VPA, Tuning, configure, tuning
from app.core.workload_key import WorkloadKey

A = WorkloadKey("shop", "Deployment", "a")
B = WorkloadKey("shop", "Deployment", "b")
T0 = 1_700_000_000.0
HOUR = 3600.0


def feed(m: ArrayModel, w: WorkloadKey, start: float, hours: float, cpu: float = 0.5) -> None:
    for i in range(int(hours * 60)):
        t = start + 60 * i
        m.add_cpu(w, "p-1", "app", t, cpu, 1.0)
        m.add_memory(w, "p-1", "app", t, 3e8 + 1e6 * (i % 7))


def test_without_parameters_nothing_is_tuned() -> None:
    m = ArrayModel()
    assert not m.tune(A, VPA)
    assert not m.tune(A, configure("krr-simple", {"cpuPercentile": 90}))
    assert m.tunings == {}


@given(
    st.fixed_dictionaries(
        {},
        optional={
            "target_cpu_percentile": st.floats(0.01, 1.0),
            "memory_aggregation_interval_seconds": st.sampled_from([3600.0, 86400.0, 7 * 86400.0]),
            "cpu_half_life_seconds": st.floats(1.0, 1e7),
            "round_memory_bytes": st.sampled_from([1.0, 1024.0, 2.0**20]),
            "pod_min_cpu_millicores": st.floats(0, 1000),
        },
    ),
    st.floats(1.0, 1e8),
)
def test_the_default_strategy_replaces_no_setting(
    changed: dict[str, Any], idle_after: float
) -> None:
    """ArrayModel.recommend takes the model's own settings for VPA without asking `tuning`:
    what tuning gives for VPA is those settings and idle time, whatever they are."""
    s = RecommenderSettings(**changed)
    assert tuning(VPA, s, idle_after) == Tuning(s, idle_after)


def test_the_idle_time_is_interval_times_count() -> None:
    base = RecommenderSettings()
    t = tuning(configure("vpa", {"memoryAggregationIntervalCount": 2}), base, 8 * 86400)
    assert t.idle_after == 2 * 86400
    t = tuning(configure("vpa", {"memoryAggregationIntervalSeconds": 3600}), base, 8 * 86400)
    assert t.idle_after == 8 * 3600  # the count of the global idle time: 8 days / 24 h
    t = tuning(configure("vpa", {"targetCpuPercentile": 0.5}), base, 5 * 86400)
    assert t.idle_after == 5 * 86400  # neither: RIGHTSIZER_IDLE_AFTER_SECONDS


def test_a_workload_expires_after_its_own_window() -> None:
    m = ArrayModel()
    m.tune(
        A,
        configure(
            "vpa", {"memoryAggregationIntervalSeconds": 3600, "memoryAggregationIntervalCount": 2}
        ),
    )
    feed(m, A, T0, 1)
    feed(m, B, T0, 1)
    assert m.expire_idle(T0 + 3 * HOUR) == 1  # a's 2 hours have passed, b's 8 days have not
    assert set(m.rows) == {B}
    assert A not in m.tunings  # forgotten with its history; its policy tunes it again


def test_the_first_samples_of_a_new_workload_are_taken_as_its_policy_says() -> None:
    m = ArrayModel()
    m.strategy_of = lambda w: (
        configure("vpa", {"cpuHistogramDecayHalfLifeSeconds": 600}) if w == A else VPA
    )
    feed(m, A, T0, 0.1)
    feed(m, B, T0, 0.1)
    assert m.cpu.hl[m.rows[A]["app"]] == 600
    assert m.cpu.hl[m.rows[B]["app"]] == 86400
    assert m.tuning(A).settings.cpu_half_life_seconds == 600


def test_a_new_half_life_is_what_vpa_restarted_with_the_new_flag_would_have() -> None:
    """VPA's recommender restarted with --cpu-histogram-decay-half-life=6h loads its checkpoint
    into a histogram decaying at 6h from the checkpoint's reference time on: tuning in place
    gives the same weights."""
    m = ArrayModel()
    feed(m, A, T0, 30)
    six_hours = configure(
        "vpa",
        {
            "cpuHistogramDecayHalfLifeSeconds": 6 * HOUR,
            "memoryHistogramDecayHalfLifeSeconds": 6 * HOUR,
        },
    )
    saved = m.save(A, "app")
    m.tune(A, six_hours)
    after = ArrayModel()
    after.tune(A, six_hours)  # the restarted VPA's flags
    after.restore(A, "app", saved)
    after.restored[after.rows[A]["app"]] = math.nan  # the restarted VPA takes the new samples
    feed(m, A, T0 + 30 * HOUR, 30, cpu=2.0)
    feed(after, A, T0 + 30 * HOUR, 30, cpu=2.0)
    ps = (0.5, 0.9, 0.95)
    mine, theirs = m.rows[A]["app"], after.rows[A]["app"]
    assert m.cpu.percentiles([mine], ps).tolist() == after.cpu.percentiles([theirs], ps).tolist()
    assert m.cpu.hl[mine] == 6 * HOUR
    # and the new half-life forgets faster than the old one would have
    untuned = ArrayModel()
    feed(untuned, A, T0, 30)
    feed(untuned, A, T0 + 30 * HOUR, 30, cpu=2.0)
    old = untuned.rows[A]["app"]
    at = m.cpu.buckets.find_bucket(0.5)
    share = m.cpu.weights[mine, at] / m.cpu.total[mine]
    assert share < untuned.cpu.weights[old, at] / untuned.cpu.total[old]


def test_a_new_interval_is_said_in_the_reason_while_the_old_history_is_in_the_window() -> None:
    m = ArrayModel()
    feed(m, A, T0, 48)
    twelve = configure("vpa", {"memoryAggregationIntervalSeconds": 43200})
    assert m.tune(A, twelve)
    assert m.interval[m.pods[(A, "p-1", "app")]] == 43200
    feed(m, A, T0 + 48 * HOUR, 1)
    reason = m.recommend(A, None, twelve)["app"].reason
    assert "memory p90 of peaks per 12h, each +15%" in reason
    assert (
        "history before 2023-11-16 22:12 UTC was gathered with memory peaks per 24h (now 12h)"
        in reason
    )
    # 12h x 8 later (the window, with the global count), the note is gone
    feed(m, A, T0 + 49 * HOUR + 4 * 86400, 1)
    assert "gathered with" not in m.recommend(A, None, twelve)["app"].reason


def test_percentiles_change_nothing_in_the_history_and_say_nothing() -> None:
    m = ArrayModel()
    feed(m, A, T0, 24)
    p95 = configure("vpa", {"targetCpuPercentile": 0.95})
    row = m.rows[A]["app"]
    before = m.cpu.weights[row].copy()
    m.tune(A, p95)
    assert (m.cpu.weights[row] == before).all()
    assert row not in m.retuned
    assert "vpa: CPU p95 of usage" in m.recommend(A, None, p95)["app"].reason


def test_a_checkpoint_restored_and_tuned_says_nothing_of_settings_it_cannot_know() -> None:
    m = ArrayModel()
    feed(m, A, T0, 24)
    restored = ArrayModel()
    restored.restore(A, "app", m.save(A, "app"))
    restored.tune(A, configure("vpa", {"memoryAggregationIntervalSeconds": 3600}))
    assert restored.rows[A]["app"] not in restored.retuned
