"""An aggregate's histograms in storable form, so a restart resumes instead of starting over.

Bucket weights are scaled so the heaviest bucket is 10000 and rounded (VPA's checkpoint format):
percentiles survive a round trip within one bucket while a checkpoint stays a few hundred bytes.
The per-pod memory windows are not saved: after a restart each pod opens a new window. The daily
usage counts (app/core/recommend/daily.py) travel beside the histograms; a checkpoint saved
before they existed has none, and the window strategies then start from the samples that follow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.recommend.aggregate import AggregateState
from app.core.recommend.histogram import HistogramCheckpoint
from app.core.recommend.settings import RecommenderSettings

CHECKPOINT_VERSION = "v3"


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
