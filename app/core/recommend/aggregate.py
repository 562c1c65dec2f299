"""One workload container's history as one object (AggregateState), and the rules the model
shares with it: the bucket layouts, the OOM bump, the note of a retuned history.

The recommender's model keeps every workload container's history as rows of arrays
(array_model.py, ArrayModel); an AggregateState is one such history read back from a checkpoint
(checkpoint.load_aggregate: the histogram API and dashboard) or built directly (the strategies'
tests), read by the estimator and the strategies through the same attributes as a row's view.

CPU: every sample goes into the decaying histogram, weighted by the container's CPU request (at
least min_cpu_sample_weight cores), so busy large pods count more than idle small ones. Memory:
each pod container contributes ONE sample per aggregation interval (24h): its peak (the model's
memory windows). An OOM kill adds a peak of max(used + min bump, used * bump ratio) (`oom_bump`).
Beside VPA's histograms, every sample is also counted, undecayed, per UTC day
(app/core/recommend/daily.py), for the strategies that read a window of history.
A policy may change the settings the history is made with (ArrayModel.tune): the rows then decay
at the new half-lives and note, while the history from before weighs, what it was gathered with
(`Retuned`: the memory interval of its peaks, the half-lives it decayed at).
"""

from __future__ import annotations

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


def oom_bump(used_bytes: float, s: RecommenderSettings) -> float:
    """Memory a container needs after being OOM-killed while using used_bytes (whole bytes)."""
    return float(max(int(used_bytes + s.oom_min_bump_bytes), int(used_bytes * s.oom_bump_ratio)))
