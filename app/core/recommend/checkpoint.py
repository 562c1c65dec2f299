"""An aggregate's histograms in storable form, so a restart resumes instead of starting over.

Bucket weights are scaled so the heaviest bucket is 10000 and rounded (VPA's checkpoint format):
percentiles survive a round trip within one bucket while a checkpoint stays a few hundred bytes.
The per-pod memory windows are not saved: after a restart each pod opens a new window. The daily
usage counts (app/core/recommend/daily.py) travel beside the histograms; a checkpoint saved
before they existed has none, and the window strategies then start from the samples that follow.

Which checkpoints a run rewrites is decided here too (`checkpoint_budget`, `checkpoints_due`):
a new aggregate's at once, then the ones written longest ago, each about once per checkpoint
interval, as VPA's checkpoint writer rewrites its checkpoints oldest first.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from app.core.recommend.aggregate import AggregateState
from app.core.recommend.histogram import HistogramCheckpoint
from app.core.recommend.settings import RecommenderSettings

CHECKPOINT_VERSION = "v3"

K = TypeVar("K", bound=Hashable)


@dataclass
class AggregateCheckpoint:
    cpu: HistogramCheckpoint
    memory: HistogramCheckpoint
    first_sample: float | None
    last_sample: float | None
    total_samples: int
    version: str = CHECKPOINT_VERSION
    daily: list[dict[str, Any]] | None = None  # DailyUsage.save(); None: saved before it existed


def save_aggregate(agg: AggregateState) -> AggregateCheckpoint:
    return AggregateCheckpoint(
        agg.cpu.save(),
        agg.memory.save(),
        agg.first_sample,
        agg.last_sample,
        agg.total_samples,
        daily=agg.daily.save(),
    )


def load_aggregate(cp: AggregateCheckpoint, settings: RecommenderSettings) -> AggregateState:
    """Raises ValueError for a checkpoint of another version or with impossible weights."""
    if cp.version != CHECKPOINT_VERSION:
        raise ValueError(f"checkpoint version {cp.version!r}, expected {CHECKPOINT_VERSION!r}")
    if cp.total_samples < 0:
        raise ValueError(f"checkpoint has negative sample count {cp.total_samples}")
    agg = AggregateState.empty(settings)
    agg.cpu.load(cp.cpu)
    agg.memory.load(cp.memory)
    if cp.daily is not None:
        agg.daily.load(cp.daily)
    agg.first_sample, agg.last_sample, agg.total_samples = (
        cp.first_sample,
        cp.last_sample,
        cp.total_samples,
    )
    agg.restored_until = cp.last_sample
    return agg


# VPA's recommender writes at least --min-checkpoints (10) checkpoints a run, the ones written
# longest ago first (checkpoint_writer.go sorts its VPAs by CheckpointWritten), as many as fit in
# --checkpoints-timeout; at its client's 5 requests a second, a 15,000-container cluster gets
# each one rewritten about every 50 minutes. rightsizer spreads them over a set interval instead.
MIN_CHECKPOINTS_PER_RUN = 10


def checkpoint_budget(written: int, run_interval: float, checkpoint_interval: float) -> int:
    """How many of the `written` checkpoints (those written before) to rewrite in one run so
    that each is rewritten about once every `checkpoint_interval` seconds, the runs being
    `run_interval` apart: written x run_interval / checkpoint_interval, rounded up, and at least
    MIN_CHECKPOINTS_PER_RUN (VPA's --min-checkpoints). An interval no longer than the runs'
    rewrites every one each run."""
    if checkpoint_interval <= run_interval:
        return written
    share = math.ceil(written * run_interval / checkpoint_interval)
    return min(written, max(share, MIN_CHECKPOINTS_PER_RUN))


def checkpoints_due(keys: Iterable[K], written_at: Mapping[K, float], budget: int) -> set[K]:
    """The checkpoints to write this run: every key never written (no entry in `written_at`),
    and the `budget` written longest ago (equal times in the order of `keys`)."""
    due: set[K] = set()
    written: list[tuple[float, int, K]] = []
    for n, key in enumerate(keys):
        at = written_at.get(key)
        if at is None:
            due.add(key)
        else:
            written.append((at, n, key))
    due.update(key for _, _, key in heapq.nsmallest(budget, written))
    return due
