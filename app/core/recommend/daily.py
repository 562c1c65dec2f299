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

from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from app.core.recommend.daily_rows import CPU, MEMORY, NO_DAY, DailyRows
from app.core.recommend.histogram import ExponentialBuckets

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
    """The last RETAINED_DAYS days of one workload container: one row of a UsageRows (the
    model's, or one of its own), read and written as one DayUsage per UTC day."""

    def __init__(
        self,
        cpu_buckets: ExponentialBuckets,
        memory_buckets: ExponentialBuckets,
        retained: int = RETAINED_DAYS,
        rows: UsageRows | None = None,
        row: int = 0,
    ) -> None:
        self.cpu_buckets, self.memory_buckets, self.retained = cpu_buckets, memory_buckets, retained
        if rows is None:
            rows = UsageRows(cpu_buckets, memory_buckets, retained)
        self.rows, self.row = rows, row

    @property
    def newest(self) -> int | None:
        newest = int(self.rows.newest[self.row])
        return None if newest == NO_DAY else newest

    @property
    def days(self) -> dict[int, DayUsage]:
        """The days kept, oldest first."""
        out: dict[int, DayUsage] = {}
        for d, (cpu, memory), counts, sums, maxima, oom in self._kept():
            day = DayUsage(d, BucketCounts(*cpu), BucketCounts(*memory))
            day.cpu_count, day.memory_count = counts
            day.cpu_sum, day.memory_sum = sums
            day.cpu_max, day.memory_max = maxima
            day.oom_max = oom
            out[d] = day
        return out

    def _kept(
        self,
    ) -> list[tuple[int, Any, list[int], list[float], list[float], float]]:
        """Each day kept, oldest first: its day, (offset, counts) of CPU and memory, the sample
        counts, sums and maxima (CPU, memory), the OOM maximum."""
        rows, row = self.rows, self.row
        kept = rows.kept(row)
        if not kept:
            return []
        cells = rows.row_counts(row, kept)
        days, oom = rows.day[row].tolist(), rows.oom[row].tolist()
        count, sums, maxima = (
            rows.count[row].tolist(),
            rows.sum[row].tolist(),
            rows.max[row].tolist(),
        )
        return [
            (days[s], (cells[s, CPU], cells[s, MEMORY]), count[s], sums[s], maxima[s], oom[s])
            for s in kept
        ]

    def add_cpu(self, t: float, cores: float, bucket: int | None = None) -> None:
        """`bucket`, when given, is cpu_buckets.find_bucket(cores) already computed."""
        if bucket is None:
            bucket = self.cpu_buckets.find_bucket(cores)
        self.rows.add_one(self.row, t, cores, bucket, CPU)

    def add_memory(self, t: float, bytes_: float) -> None:
        self.rows.add_one(self.row, t, bytes_, self.memory_buckets.find_bucket(bytes_), MEMORY)

    def add_oom(self, t: float, bytes_: float) -> None:
        self.rows.add_oom(self.row, t, bytes_)

    def window(self, days: int) -> UsageWindow:
        """The last `days` days (at most the retained ones) up to the newest sample's day."""
        newest = self.newest
        if newest is None:
            chosen: list[DayUsage] = []
        else:
            first = newest - min(days, self.retained) + 1
            chosen = [u for d, u in self.days.items() if d >= first]
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
        newest = self.newest or 0
        window = [] if self.newest is None else list(self.days.items())
        first = newest - min(days, self.retained) + 1
        merged: dict[int, float] = {}
        count = total = maximum = 0.0
        for d, u in window:
            if d < first:
                continue
            w = 2.0 ** (-(newest - d) / half_life_days)
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
        """[day.to_json() for day in days.values()], from the arrays directly."""
        return [
            {
                "day": d,
                "cpu": [cpu[0], *cpu[1]],
                "memory": [memory[0], *memory[1]],
                "cpuSum": sums[0],
                "memorySum": sums[1],
                "cpuMax": maxima[0],
                "memoryMax": maxima[1],
                "oomMax": oom,
            }
            for d, (cpu, memory), _, sums, maxima, oom in self._kept()
        ]

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
                if counts.offset + len(counts.counts) > buckets.num_buckets:
                    raise ValueError(f"day {d.day}: {what} buckets beyond the histogram's")
        by_day = {d.day: d for d in days}  # the last of a day stands
        self.rows.clear(self.row)
        newest = max(by_day, default=None)
        for d in sorted(by_day.values(), key=lambda u: u.day):
            if newest is not None and d.day <= newest - self.retained:
                continue
            self.rows.load_day(
                self.row,
                d.day,
                (
                    (d.cpu.offset, d.cpu.counts.tolist()),
                    (d.memory.offset, d.memory.counts.tolist()),
                ),
                (d.cpu_sum, d.memory_sum),
                (d.cpu_max, d.memory_max),
                d.oom_max,
            )


class UsageRows(DailyRows):
    """The per-day usage of many workload containers (daily_rows.py); `rows[row]` reads and
    writes one of them as a DailyUsage."""

    def __init__(
        self,
        cpu_buckets: ExponentialBuckets,
        memory_buckets: ExponentialBuckets,
        retained: int = RETAINED_DAYS,
        size: int = 1,
    ) -> None:
        super().__init__(max(cpu_buckets.num_buckets, memory_buckets.num_buckets), retained, size)
        self.cpu_buckets, self.memory_buckets = cpu_buckets, memory_buckets

    def __getitem__(self, row: int) -> DailyUsage:
        return DailyUsage(self.cpu_buckets, self.memory_buckets, self.retained, self, row)
