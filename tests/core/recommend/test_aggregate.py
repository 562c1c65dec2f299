"""Per-pod-container aggregation in the model (ArrayModel): CPU deduplication and weights, memory
peaks per window, OOMs."""

from __future__ import annotations

import pytest

from app.core.recommend.array_model import ArrayModel
from app.core.recommend.histogram import Histogram
from app.core.recommend.settings import DAY, MIB, RecommenderSettings
from app.core.workload_key import WorkloadKey

S = RecommenderSettings()
T0 = 1_700_000_000.0
W = WorkloadKey("shop", "Deployment", "web")


class Pod:
    """One pod container of one workload container in a model, and what its row holds."""

    def __init__(self, model: ArrayModel | None = None) -> None:
        self.m = model or ArrayModel(S)

    def add_cpu_sample(self, t: float, cores: float, request: float) -> bool:
        return self.m.add_cpu(W, "p-1", "app", t, cores, request)

    def add_memory_sample(self, t: float, usage: float) -> bool:
        return self.m.add_memory(W, "p-1", "app", t, usage)

    def record_oom(self, t: float, usage: float) -> bool:
        return self.m.record_oom(W, "p-1", "app", t, usage)

    @property
    def _pc(self) -> int:
        return self.m.pods[W, "p-1", "app"]

    @property
    def _row(self) -> int:
        return self.m.rows[W]["app"]

    @property
    def window_end(self) -> float:
        return float(self.m.window_end[self._pc])

    @property
    def memory_peak(self) -> float:
        return float(self.m.peak[self._pc])

    @property
    def oom_peak(self) -> float:
        return float(self.m.oom_peak[self._pc])

    @property
    def cpu(self) -> Histogram:
        return self.m.cpu.histogram(self._row)

    @property
    def memory(self) -> Histogram:
        return self.m.memory.histogram(self._row)

    @property
    def total_samples(self) -> int:
        return self.m.span(self._row)[0]


def pod() -> Pod:
    return Pod()


def test_cpu_sample_weight_is_request_with_a_floor() -> None:
    p = pod()
    assert p.add_cpu_sample(T0, 0.5, 2.0)
    assert p.add_cpu_sample(T0 + 60, 0.05, 0.0)  # no request: weight 0.1
    h = p.cpu
    ratio = h.weights[h.buckets.find_bucket(0.5)] / h.weights[h.buckets.find_bucket(0.05)]
    assert ratio == pytest.approx(2.0 / (0.1 * 2 ** (60 / DAY)))
    assert p.m.span(p.m.rows[W]["app"]) == (2, T0, T0 + 60)


def test_cpu_duplicates_and_old_samples_are_discarded() -> None:
    p = pod()
    assert p.add_cpu_sample(T0, 0.5, 1.0)
    assert not p.add_cpu_sample(T0, 0.7, 1.0)
    assert not p.add_cpu_sample(T0 - 60, 0.7, 1.0)
    assert not p.add_cpu_sample(T0 + 60, -0.1, 1.0)
    assert p.total_samples == 1


def memory_peaks(p: Pod) -> float:
    row = p.m.rows[W]["app"]
    return float(p.m.memory.total[row] / 2 ** ((p.window_end - p.m.memory.ref[row]) / DAY))


def test_one_memory_peak_per_window() -> None:
    p = pod()
    p.add_memory_sample(T0, 100 * MIB)
    p.add_memory_sample(T0 + 3600, 300 * MIB)  # same window: replaces the peak
    p.add_memory_sample(T0 + 7200, 200 * MIB)  # lower: ignored
    assert p.window_end == T0 + DAY
    assert memory_peaks(p) == pytest.approx(1.0)
    assert p.memory_peak == 300 * MIB
    h = p.memory
    assert h.percentile(1.0) == h.buckets.bucket_start(h.buckets.find_bucket(300 * MIB) + 1)


def test_new_window_adds_a_second_peak() -> None:
    p = pod()
    p.add_memory_sample(T0, 100 * MIB)
    p.add_memory_sample(T0 + DAY, 50 * MIB)  # exactly at the window end: next window
    assert p.window_end == T0 + 2 * DAY
    p.add_memory_sample(T0 + 5.5 * DAY, 50 * MIB)  # windows stay aligned to the first sample
    assert p.window_end == T0 + 6 * DAY
    nonzero = [w for w in p.memory.weights if w > 0]
    assert len(nonzero) == 2  # 100 MiB bucket and 50 MiB bucket (two peaks share it)


def test_oom_adds_a_bumped_peak() -> None:
    p = pod()
    p.add_memory_sample(T0, 400 * MIB)
    assert p.record_oom(T0 + 60, 500 * MIB)  # memory at OOM (the limit) 500 MiB -> 600 MiB
    assert p.oom_peak == 600 * MIB
    assert p.memory_peak == 400 * MIB
    h = p.memory
    assert h.percentile(1.0) == h.buckets.bucket_start(h.buckets.find_bucket(600 * MIB) + 1)


def test_oom_uses_the_window_peak_when_larger() -> None:
    p = pod()
    p.add_memory_sample(T0, 900 * MIB)
    p.record_oom(T0 + 60, 100 * MIB)
    assert p.oom_peak == 1080 * MIB  # max(900 + 100, 900 * 1.2)


def test_old_oom_is_ignored() -> None:
    p = pod()
    p.add_memory_sample(T0, 100 * MIB)
    p.add_memory_sample(T0 + 3 * DAY, 100 * MIB)  # window now ends at T0 + 4 days
    assert not p.record_oom(T0 + DAY, 100 * MIB)
    assert p.record_oom(T0 + 3 * DAY + 10, 100 * MIB)


def test_a_fresh_oom_just_before_a_window_ends_is_kept() -> None:
    """kubernetes/autoscaler #8548: a sample just past a window's end moves the window a whole
    interval on; an OOM seconds before that sample, read after it (as the recommender reads OOM
    events after the metrics), is fresh and counts (VPA's RecordOOM since PR #9725)."""
    p = pod()
    p.add_memory_sample(T0, 100 * MIB)  # the windows end at T0 + k days
    p.add_memory_sample(T0 + DAY + 30, 100 * MIB)  # the next window: it ends at T0 + 2 days
    assert p.window_end == T0 + 2 * DAY
    assert p.record_oom(T0 + DAY - 30, 500 * MIB)  # 1 minute before the last sample
    assert p.oom_peak == 600 * MIB
    h = p.memory
    assert h.percentile(1.0) == h.buckets.bucket_start(h.buckets.find_bucket(600 * MIB) + 1)
    old = pod()  # more than one interval before the last memory sample: still too old
    old.add_memory_sample(T0, 100 * MIB)
    old.add_memory_sample(T0 + DAY + 30, 100 * MIB)
    assert not old.record_oom(T0 + 29, 500 * MIB)


def test_restored_aggregate_does_not_count_old_samples_twice() -> None:
    p = pod()
    p.add_cpu_sample(T0, 0.5, 1.0)
    p.add_memory_sample(T0, 100 * MIB)
    restored = ArrayModel(S)  # a restarted recommender: no per-pod state
    restored.restore(W, "app", p.m.save(W, "app"))
    fresh = Pod(restored)
    assert not fresh.add_cpu_sample(T0, 0.5, 1.0)  # the same PodMetrics read again
    assert not fresh.add_memory_sample(T0, 100 * MIB)
    assert not fresh.record_oom(T0, 200 * MIB)
    assert fresh.add_cpu_sample(T0 + 60, 0.5, 1.0)
    assert fresh.total_samples == 2
