"""Usage state per workload container (the aggregate) and per pod container (its memory window).

CPU: every sample goes into the aggregate's decaying histogram, weighted by the container's CPU
request (at least min_cpu_sample_weight cores), so busy large pods count more than idle small ones.
Memory: each pod container contributes ONE sample per aggregation interval (24h): its peak. While
a window is open, a larger usage replaces the window's peak (subtract old, add new); the peak is
timestamped at the window's end so that its decay does not depend on when in the day it happened.
An OOM kill adds a peak of max(used + min bump, used * bump ratio), unless it is more than one
interval older than the last memory sample.
Beside VPA's histograms, every sample the aggregate takes is also counted, undecayed, per UTC day
(app/core/recommend/daily.py), for the strategies that read a window of history; VPA's estimate
never reads those counts.
A policy may change the settings the history is made with (UsageModel.tune): `retune` makes the
histograms decay at the new half-lives from their reference time on (the weights they hold stay, as
when VPA's recommender restarts from checkpoints with new flags) and notes, while the history from
before weighs, what it was gathered with (`Retuned`: the memory interval of its peaks, the
half-lives it decayed at).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime

from app.core.recommend.daily import DailyUsage
from app.core.recommend.histogram import DecayingHistogram, ExponentialBuckets
from app.core.recommend.settings import RecommenderSettings


def cpu_buckets(s: RecommenderSettings) -> ExponentialBuckets:
    return ExponentialBuckets(
        s.cpu_histogram_max,
        s.cpu_histogram_first_bucket,
        s.histogram_bucket_ratio,
        s.histogram_epsilon,
    )


def memory_buckets(s: RecommenderSettings) -> ExponentialBuckets:
    return ExponentialBuckets(
        s.memory_histogram_max,
        s.memory_histogram_first_bucket,
        s.histogram_bucket_ratio,
        s.histogram_epsilon,
    )


@dataclass(frozen=True)
class Retuned:
    """The history of an aggregate was gathered with other settings until `at` (its last sample
    then): `before` says which, and the note stands until `until` (VPA's memory aggregation
    window later)."""

    before: str
    at: float
    until: float

    def note(self, now: float | None) -> str | None:
        if now is None or now >= self.until:
            return None
        when = datetime.fromtimestamp(self.at, UTC).strftime("%Y-%m-%d %H:%M UTC")
        return f"history before {when} was gathered with {self.before}"


def _duration(seconds: float) -> str:
    hours = seconds / 3600
    return f"{hours:g}h" if hours >= 1 else f"{seconds:g}s"


def history_changes(old: RecommenderSettings, new: RecommenderSettings) -> list[str]:
    """What of the settings a history is made with differs (for Retuned), old values."""
    out = []
    for what, field_name in (
        ("memory peaks per", "memory_aggregation_interval_seconds"),
        ("a CPU half-life of", "cpu_half_life_seconds"),
        ("a memory half-life of", "memory_half_life_seconds"),
    ):
        before, after = getattr(old, field_name), getattr(new, field_name)
        if before != after:
            out.append(f"{what} {_duration(before)} (now {_duration(after)})")
    return out


@dataclass
class AggregateState:
    """Usage history of one container name across all pods of one workload."""

    cpu: DecayingHistogram
    memory: DecayingHistogram
    first_sample: float | None = None
    last_sample: float | None = None
    total_samples: int = 0
    # Set when restored from a checkpoint: samples up to this time are already in the histograms,
    # so a restarted recommender reading the same metrics again must not count them twice.
    restored_until: float | None = None
    # Every sample, undecayed, per UTC day (the window strategies read; VPA's estimate does not).
    daily: DailyUsage = field(
        default_factory=lambda: DailyUsage(
            cpu_buckets(RecommenderSettings()), memory_buckets(RecommenderSettings())
        )
    )
    retuned: Retuned | None = None  # the history was gathered with other settings (see above)

    @classmethod
    def empty(cls, s: RecommenderSettings) -> AggregateState:
        cpu, memory = cpu_buckets(s), memory_buckets(s)  # one layout each, shared by both
        return cls(
            DecayingHistogram(cpu, s.cpu_half_life_seconds),
            DecayingHistogram(memory, s.memory_half_life_seconds),
            daily=DailyUsage(cpu, memory),
        )

    def add_cpu(self, t: float, cores: float, weight: float) -> None:
        # The histogram and the daily counts share their bucket layout (`empty`): the bucket
        # is found once for both.
        cpu, daily = self.cpu, self.daily
        bucket = None
        if daily.cpu_buckets is cpu.buckets:
            bucket = cpu.buckets.find_bucket(cores)
        cpu.add_sample_at(cores, weight, t, bucket)
        daily.add_cpu(t, cores, bucket)
        self._counted(t, t, 1)

    def add_cpu_samples(self, times: list[float], cores: list[float], weights: list[float]) -> None:
        """add_cpu(times[i], cores[i], weights[i]) for each i, in order: the same histogram, days
        and counts, with one bucket computation per sample and one call for the batch."""
        if not times:
            return
        cpu, daily = self.cpu, self.daily
        buckets = cpu.buckets.find_buckets(cores)
        cpu.add_samples_at(weights, times, buckets)
        if daily.cpu_buckets is cpu.buckets:
            daily.add_cpus(times, cores, buckets)
        else:
            daily.add_cpus(times, cores, daily.cpu_buckets.find_buckets(cores))
        self._counted(min(times), max(times), len(times))

    def _counted(self, oldest: float, newest: float, n: int) -> None:
        """n CPU samples taken, from `oldest` to `newest`: the first and last sample's times and
        the count."""
        last = self.last_sample
        if last is None or newest > last:
            self.last_sample = newest
        first = self.first_sample
        if first is None or oldest < first:
            self.first_sample = oldest
        self.total_samples += n

    def is_empty(self) -> bool:
        return self.cpu.is_empty() and self.memory.is_empty()

    def decay_as(self, s: RecommenderSettings) -> None:
        """The histograms decay at `s`'s half-lives from now on."""
        self.cpu.half_life = s.cpu_half_life_seconds
        self.memory.half_life = s.memory_half_life_seconds

    def retune(self, old: RecommenderSettings, new: RecommenderSettings, window: float) -> None:
        """The settings changed from `old` to `new`: the histograms decay at the new half-lives,
        and what the history holds is noted for `window` seconds after its last sample (unless
        it holds nothing but a checkpoint, whose settings are not known)."""
        self.decay_as(new)
        changes = history_changes(old, new)
        fresh = self.restored_until is None or (self.last_sample or 0) > self.restored_until
        if changes and self.last_sample is not None and fresh:
            at = self.last_sample
            self.retuned = Retuned(", ".join(changes), at, at + window)


@dataclass
class PodContainerState:
    """One container of one pod: deduplicates CPU samples and keeps the open memory window."""

    aggregate: AggregateState
    settings: RecommenderSettings
    last_cpu_sample: float | None = None
    last_memory_sample: float | None = None
    window_end: float | None = None
    memory_peak: float = 0.0
    oom_peak: float = 0.0

    def add_cpu_sample(self, t: float, cores: float, request_cores: float) -> bool:
        """False when the sample is discarded: negative, duplicate or older than the last one."""
        last = self.last_cpu_sample
        if cores < 0 or (last is not None and t <= last):
            return False
        aggregate = self.aggregate
        until = aggregate.restored_until  # _already_counted, inlined: this runs for every sample
        if until is not None and t <= until:
            return False
        aggregate.add_cpu(t, cores, max(request_cores, self.settings.min_cpu_sample_weight))
        self.last_cpu_sample = t
        return True

    def add_memory_sample(self, t: float, usage: float, is_oom: bool = False) -> bool:
        if is_oom:
            until = self.aggregate.restored_until
            if usage < 0 or (until is not None and t <= until):
                return False
            self._take_peak(t, usage, True)
            return True
        if not self.add_memory_peak(t, usage):
            return False
        self.aggregate.daily.add_memory(t, usage)
        return True

    def add_memory_peak(self, t: float, usage: float) -> bool:
        """add_memory_sample of a usage sample (not an OOM kill), all but counting it in the
        aggregate's days (DailyUsage.add_memory): the caller does, when this says True."""
        until = self.aggregate.restored_until  # _already_counted, inlined: runs for every sample
        if usage < 0 or (until is not None and t <= until):
            return False
        last = self.last_memory_sample
        if last is not None and t < last:
            return False
        self._take_peak(t, usage, False)
        return True

    def _take_peak(self, t: float, usage: float, is_oom: bool) -> None:
        """The sample's part in the open memory window (a new window at its end)."""
        self.last_memory_sample = t
        window_end = self.window_end
        if window_end is None:
            window_end = self.window_end = t
        if t < window_end:
            old = max(self.memory_peak, self.oom_peak)
            if old == 0 or not usage > old:
                return
            self.aggregate.memory.subtract_sample_at(old, 1.0, window_end)
        else:
            interval = self.settings.memory_aggregation_interval_seconds
            window_end += math.floor((t - window_end) / interval) * interval + interval
            self.window_end = window_end
            self.memory_peak = self.oom_peak = 0.0
        self.aggregate.memory.add_sample_at(usage, 1.0, window_end)
        if is_oom:
            self.oom_peak = usage
        else:
            self.memory_peak = usage

    def _already_counted(self, t: float) -> bool:
        until = self.aggregate.restored_until
        return until is not None and t <= until

    def record_oom(self, t: float, memory_at_oom: float) -> bool:
        """Adds the OOM bump as a memory peak. False for an OOM more than one aggregation
        interval older than the last memory sample. VPA measured that from the end of the open
        window, which a sample just past a window's end moves a whole interval on, so an OOM
        seconds old was dropped as "too old" (kubernetes/autoscaler #8548); VPA now measures it
        from the last memory sample (RecordOOM in pkg/recommender/model/container.go, PR #9725),
        and so does this."""
        interval = self.settings.memory_aggregation_interval_seconds
        last = self.last_memory_sample
        if last is not None and t < last - interval:
            return False
        used = max(memory_at_oom, self.memory_peak)
        if self._already_counted(t):
            return False
        self.aggregate.daily.add_oom(t, used)
        return self.add_memory_sample(t, oom_bump(used, self.settings), is_oom=True)


def oom_bump(used_bytes: float, s: RecommenderSettings) -> float:
    """Memory a container needs after being OOM-killed while using used_bytes (whole bytes)."""
    return float(max(int(used_bytes + s.oom_min_bump_bytes), int(used_bytes * s.oom_bump_ratio)))
