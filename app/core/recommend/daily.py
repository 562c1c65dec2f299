"""Usage per UTC day, undecayed, for the strategies that read a window of history.

VPA's histograms decay (a day-old sample weighs half) and keep one memory peak per day; KRR's
simple strategy instead takes a percentile and a maximum over all samples of the last 336 hours,
and rightsizer's `balanced` strategy weighs how often memory went above a level. Both read this:
for each of the last RETAINED_DAYS days (UTC), how many samples fell in each histogram bucket (the
aggregate's own bucket layout, so a percentile is exact to one bucket, 5%), their sum, the largest
sample, and the largest memory at an OOM kill. A day holds a few dozen counts per resource; days
older than RETAINED_DAYS before the newest sample are dropped, and samples older than that are
ignored.

A window is whole days: the last `days` days up to the day of the newest sample.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from app.core.recommend.histogram import ExponentialBuckets
from app.core.recommend.settings import DAY

RETAINED_DAYS = 14  # KRR's default history: 336 hours


class BucketCounts:
    """Sample counts of consecutive buckets, from `offset` on (compact: 4-byte unsigned integers,
    far more than a day of samples)."""

    __slots__ = ("counts", "offset")

    def __init__(self, offset: int = 0, counts: list[int] | None = None) -> None:
        self.offset = offset
        self.counts = array("I", counts or [])

    def add(self, bucket: int, n: int = 1) -> None:
        if not self.counts:
            self.offset = bucket
            self.counts.append(n)
            return
        if bucket < self.offset:
            self.counts[0:0] = array("I", [0] * (self.offset - bucket))
            self.offset = bucket
        i = bucket - self.offset
        if i >= len(self.counts):
            self.counts.extend([0] * (i - len(self.counts) + 1))
        self.counts[i] += n

    def items(self) -> Iterator[tuple[int, int]]:
        for i, n in enumerate(self.counts):
            if n:
                yield self.offset + i, n

    def to_json(self) -> list[int]:
        return [self.offset, *self.counts]

    @classmethod
    def from_json(cls, data: Any, where: str) -> BucketCounts:
        # Checked at C speed (a restart reads about 1.4 million of these numbers for 15,000
        # containers): the set of the values' exact types (bool is not int), then the array's own
        # range check of each count.
        if not isinstance(data, list) or not set(map(type, data)) <= {int}:
            raise ValueError(f"{where} must be a list of whole numbers")
        if not data:
            return cls()
        try:
            if data[0] < 0:
                raise OverflowError
            counts = array("I", data[1:])
        except OverflowError:
            raise ValueError(f"{where} has a negative bucket or a count out of range") from None
        out = cls(data[0])
        out.counts = counts
        return out


@dataclass(slots=True)
class DayUsage:
    """One UTC day of one workload container: CPU in cores, memory in bytes."""

    day: int  # days since the epoch
    cpu: BucketCounts = field(default_factory=BucketCounts)
    memory: BucketCounts = field(default_factory=BucketCounts)
    cpu_count: int = 0
    memory_count: int = 0
    cpu_sum: float = 0.0
    memory_sum: float = 0.0
    cpu_max: float = 0.0
    memory_max: float = 0.0
    oom_max: float = 0.0  # memory at the largest OOM kill of the day (0: none)

    def to_json(self) -> dict[str, Any]:
        return {
            "day": self.day,
            "cpu": self.cpu.to_json(),
            "memory": self.memory.to_json(),
            "cpuSum": self.cpu_sum,
            "memorySum": self.memory_sum,
            "cpuMax": self.cpu_max,
            "memoryMax": self.memory_max,
            "oomMax": self.oom_max,
        }

    @classmethod
    def from_json(cls, data: Any) -> DayUsage:
        day_number = data.get("day") if isinstance(data, dict) else None
        if not isinstance(day_number, int) or isinstance(day_number, bool):
            raise ValueError("a day of usage must be an object with a whole 'day'")
        day = cls(
            data["day"],
            BucketCounts.from_json(data.get("cpu", []), "cpu"),
            BucketCounts.from_json(data.get("memory", []), "memory"),
        )
        for key, attr in (
            ("cpuSum", "cpu_sum"),
            ("memorySum", "memory_sum"),
            ("cpuMax", "cpu_max"),
            ("memoryMax", "memory_max"),
            ("oomMax", "oom_max"),
        ):
            value = data.get(key, 0.0)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ValueError(f"{key} must be a number of at least 0")
            setattr(day, attr, float(value))
        day.cpu_count = sum(day.cpu.counts)
        day.memory_count = sum(day.memory.counts)
        return day


@dataclass(frozen=True)
class Distribution:
    """Samples of one resource over a window: counts per bucket (ascending), sum, maximum."""

    buckets: ExponentialBuckets
    counts: tuple[tuple[int, float], ...]  # (bucket, samples), ascending, no zero
    count: float  # samples (weighted ones, from `DailyUsage.recent_memory`, may be fractions)
    total: float
    maximum: float

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0

    def bucket_end(self, bucket: int) -> float:
        """Where a bucket ends (the last one has no end: its start)."""
        if bucket < self.buckets.num_buckets - 1:
            return self.buckets.bucket_start(bucket + 1)
        return self.buckets.bucket_start(bucket)

    def percentile(self, p: float) -> float:
        """The END of the bucket where the running count first reaches p * count (as VPA's
        histograms answer), so at most one bucket (5%) above the exact percentile; 0 if empty."""
        threshold = p * self.count
        running = 0.0
        for bucket, n in self.counts:
            running += n
            if running >= threshold:
                return self.bucket_end(bucket)
        return self.bucket_end(self.counts[-1][0]) if self.counts else 0.0

    def above(self, level: float) -> float:
        """Samples that may be above `level`: those in every bucket ending after it."""
        return sum((n for bucket, n in self.counts if self.bucket_end(bucket) > level), 0.0)


@dataclass(frozen=True)
class UsageWindow:
    """The last `days` days of usage (fewer when there is less history)."""

    days: int  # days with any sample
    cpu: Distribution
    memory: Distribution
    oom_max: float  # memory at the largest OOM kill in the window (0: none)


class DailyUsage:
    """The last RETAINED_DAYS days of one workload container, one DayUsage per UTC day."""

    def __init__(
        self,
        cpu_buckets: ExponentialBuckets,
        memory_buckets: ExponentialBuckets,
        retained: int = RETAINED_DAYS,
    ) -> None:
        self.cpu_buckets, self.memory_buckets, self.retained = cpu_buckets, memory_buckets, retained
        self.days: dict[int, DayUsage] = {}
        self.newest: int | None = None

    def _day(self, t: float) -> DayUsage | None:
        """The day of time t, created if needed; None when it is older than the retained days."""
        d = math.floor(t / DAY)
        if self.newest is not None and d <= self.newest - self.retained:
            return None
        usage = self.days.get(d)
        if usage is None:
            usage = self.days[d] = DayUsage(d)
            if self.newest is None or d > self.newest:
                self.newest = d
                for old in [k for k in self.days if k <= d - self.retained]:
                    del self.days[old]
        return usage

    def add_cpu(self, t: float, cores: float, bucket: int | None = None) -> None:
        """`bucket`, when given, is cpu_buckets.find_bucket(cores) already computed."""
        day = self._day(t)
        if day is not None:
            day.cpu.add(self.cpu_buckets.find_bucket(cores) if bucket is None else bucket)
            day.cpu_count += 1
            day.cpu_sum += cores
            day.cpu_max = max(day.cpu_max, cores)

    def add_memory(self, t: float, bytes_: float) -> None:
        day = self._day(t)
        if day is not None:
            day.memory.add(self.memory_buckets.find_bucket(bytes_))
            day.memory_count += 1
            day.memory_sum += bytes_
            day.memory_max = max(day.memory_max, bytes_)

    def add_cpus(self, times: list[float], cores: list[float], buckets: list[int]) -> None:
        """add_cpu(times[i], cores[i], buckets[i]) for each i, in order: the day found once for
        each run of samples of the same day (_day would answer the same in between: only a new
        day drops others), its sums kept in locals meanwhile."""
        self._add_many(times, cores, buckets, True)

    def add_memories(self, times: list[float], bytes_: list[float]) -> None:
        """add_memory(times[i], bytes_[i]) for each i, in order (as add_cpus)."""
        self._add_many(times, bytes_, self.memory_buckets.find_buckets(bytes_), False)

    def _add_many(
        self, times: list[float], values: list[float], buckets: list[int], cpu: bool
    ) -> None:
        floor, day_length = math.floor, DAY
        last_d: int | None = None
        day: DayUsage | None = None
        counts = BucketCounts()
        count, total, top = 0, 0.0, 0.0
        for t, value, b in zip(times, values, buckets, strict=True):
            d = floor(t / day_length)
            if d != last_d:
                if day is not None:
                    _flush(day, cpu, count, total, top)
                last_d, day = d, self._day(t)
                if day is None:
                    continue
                counts = day.cpu if cpu else day.memory
                if cpu:
                    count, total, top = day.cpu_count, day.cpu_sum, day.cpu_max
                else:
                    count, total, top = day.memory_count, day.memory_sum, day.memory_max
            elif day is None:
                continue
            i = b - counts.offset
            if 0 <= i < len(counts.counts):
                counts.counts[i] += 1
            else:
                counts.add(b)
            count += 1
            total += value
            top = max(top, value)
        if day is not None:
            _flush(day, cpu, count, total, top)

    def add_oom(self, t: float, bytes_: float) -> None:
        day = self._day(t)
        if day is not None:
            day.oom_max = max(day.oom_max, bytes_)

    def window(self, days: int) -> UsageWindow:
        """The last `days` days (at most the retained ones) up to the newest sample's day."""
        if self.newest is None:
            chosen: list[DayUsage] = []
        else:
            first = self.newest - min(days, self.retained) + 1
            chosen = [u for d, u in sorted(self.days.items()) if d >= first]
        return UsageWindow(
            len(chosen),
            self._distribution(self.cpu_buckets, [(u.cpu, u.cpu_sum, u.cpu_max) for u in chosen]),
            self._distribution(
                self.memory_buckets, [(u.memory, u.memory_sum, u.memory_max) for u in chosen]
            ),
            max((u.oom_max for u in chosen), default=0.0),
        )

    @staticmethod
    def _distribution(
        buckets: ExponentialBuckets, days: list[tuple[BucketCounts, float, float]]
    ) -> Distribution:
        merged: dict[int, int] = {}
        for counts, _, _ in days:
            for bucket, n in counts.items():
                merged[bucket] = merged.get(bucket, 0) + n
        return Distribution(
            buckets,
            tuple(sorted(merged.items())),
            sum(merged.values()),
            sum(s for _, s, _ in days),
            max((m for _, _, m in days), default=0.0),
        )

    def recent_memory(self, days: int, half_life_days: float) -> Distribution:
        """The memory samples of the last `days` days, a day's samples weighing 2^(-age /
        half_life_days), age in days before the newest day (the newest weighs 1): counts, sum
        and count are weighted, the maximum is the window's."""
        window = [] if self.newest is None else sorted(self.days.items())
        first = (self.newest or 0) - min(days, self.retained) + 1
        merged: dict[int, float] = {}
        count = total = maximum = 0.0
        for d, u in window:
            if d < first:
                continue
            w = 2.0 ** (-((self.newest or 0) - d) / half_life_days)
            for bucket, n in u.memory.items():
                merged[bucket] = merged.get(bucket, 0.0) + w * n
            count += w * u.memory_count
            total += w * u.memory_sum
            maximum = max(maximum, u.memory_max)
        return Distribution(
            self.memory_buckets, tuple(sorted(merged.items())), count, total, maximum
        )

    # Checkpoints ---------------------------------------------------------------------------------
    def save(self) -> list[dict[str, Any]]:
        return [u.to_json() for _, u in sorted(self.days.items())]

    def load(self, data: Any) -> None:
        """Replaces the days with those saved; raises ValueError for a malformed list."""
        if not isinstance(data, list):
            raise ValueError("daily usage must be a list of days")
        days = [DayUsage.from_json(d) for d in data]
        for d in days:
            for what, counts, buckets in (
                ("cpu", d.cpu, self.cpu_buckets),
                ("memory", d.memory, self.memory_buckets),
            ):
                if counts.counts and counts.offset + len(counts.counts) > buckets.num_buckets:
                    raise ValueError(f"day {d.day}: {what} buckets beyond the histogram's")
        self.days = {d.day: d for d in days}
        self.newest = max(self.days, default=None)
        if self.newest is not None:
            for old in [k for k in self.days if k <= self.newest - self.retained]:
                del self.days[old]


def _flush(day: DayUsage, cpu: bool, count: int, total: float, top: float) -> None:
    if cpu:
        day.cpu_count, day.cpu_sum, day.cpu_max = count, total, top
    else:
        day.memory_count, day.memory_sum, day.memory_max = count, total, top
