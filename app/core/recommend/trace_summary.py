"""What a usage trace holds, as `rightsizer recommend --from-csv` tells a person before its
answer: how many samples of what, over what span, at what interval, and where samples are missing.
Pure: it reads the parsed rows (app.core.recommend.trace) only.

A gap is a stretch of one pod's container with no sample that is longer than GAP_FACTOR times the
trace's usual interval (the median time between two samples of one container): a sampler that
stopped, a pod that was gone. One as long as the idle time (RIGHTSIZER_IDLE_AFTER_SECONDS) makes the
recommender forget the container's history before it, as the running service does.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise

from app.core.recommend.trace import TraceRow

GAP_FACTOR = 3  # a gap is longer than this many usual intervals
DAY = 86400.0


@dataclass(frozen=True)
class Gap:
    pod: str
    container: str
    start: float  # the last sample before it (unix seconds)
    end: float  # the first sample after it

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class TraceSummary:
    rows: int
    cpu_samples: int
    memory_samples: int
    ooms: int
    pods: int
    containers: tuple[str, ...]
    first: float  # the first and last sample's time (unix seconds)
    last: float
    interval: float | None  # the usual time between two samples of one container; None: 1 each
    gaps: tuple[Gap, ...]  # longest first

    @property
    def span_days(self) -> float:
        return (self.last - self.first) / DAY


def summarize(rows: Iterable[TraceRow]) -> TraceSummary:
    """The summary of parsed rows (at least one: parse_trace refuses an empty trace)."""
    rows = list(rows)
    times: dict[tuple[str, str], list[float]] = defaultdict(list)
    cpu = memory = ooms = 0
    for r in rows:
        if r.event == "oom":
            ooms += 1
            continue
        times[(r.pod, r.container)].append(r.time)
        cpu += r.cpu is not None
        memory += r.memory is not None
    steps = {series: _steps(t) for series, t in times.items()}
    every = [d for ds in steps.values() for d in ds]
    interval = statistics.median(every) if every else None
    gaps: list[Gap] = []
    if interval:
        for (pod, container), series in times.items():
            ordered = sorted(series)
            for before, after in pairwise(ordered):
                if after - before > GAP_FACTOR * interval:
                    gaps.append(Gap(pod, container, before, after))
    gaps.sort(key=lambda g: (-g.seconds, g.start, g.pod, g.container))
    all_times = [r.time for r in rows]
    return TraceSummary(
        rows=len(rows),
        cpu_samples=cpu,
        memory_samples=memory,
        ooms=ooms,
        pods=len({r.pod for r in rows}),
        containers=tuple(sorted({r.container for r in rows})),
        first=min(all_times),
        last=max(all_times),
        interval=interval,
        gaps=tuple(gaps),
    )


def _steps(series: list[float]) -> list[float]:
    ordered = sorted(series)
    return [b - a for a, b in pairwise(ordered) if b > a]


def duration(seconds: float) -> str:
    """A length of time as a person reads it: `45s`, `5m`, `3h20m`, `1.2 days`."""
    if seconds < 60:
        return f"{seconds:g}s"
    if seconds < 3600:
        minutes, rest = divmod(round(seconds), 60)
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if seconds < 2 * DAY:
        hours, rest = divmod(round(seconds / 60), 60)
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    return f"{seconds / DAY:.1f} days"
