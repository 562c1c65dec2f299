"""The usage histograms behind a recommendation, read from its checkpoint rows through the loader
the recommender restarts from, so the buckets shown are the ones its percentiles come from, as of
the checkpoint's last sample (rewritten in turn: at most RIGHTSIZER_CHECKPOINT_INTERVAL_SECONDS
old while the recommender runs).

One read model for the REST API (GET .../histogram) and the dashboard's workload page. Weights are
decayed weights relative to each histogram's reference time: only their proportions matter.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from app.core.recommend.checkpoint import load_aggregate
from app.core.recommend.histogram import DecayingHistogram, Histogram
from app.core.recommend.settings import RecommenderSettings
from app.store.checkpoints import checkpoint_from_row
from app.store.models import Checkpoint
from app.store.session import to_datetime


@dataclass(frozen=True)
class Bucket:
    start: float  # inclusive, in the histogram's unit
    end: float  # exclusive
    weight: float


@dataclass(frozen=True)
class UsageHistogram:
    unit: str  # "cores" or "bytes"
    total_weight: float
    reference_time: datetime | None
    buckets: tuple[Bucket, ...]  # the non-empty ones, lowest first


@dataclass(frozen=True)
class ContainerHistograms:
    name: str
    sample_count: int
    cpu: UsageHistogram
    memory: UsageHistogram


def buckets(h: Histogram) -> tuple[Bucket, ...]:
    """The non-empty buckets, [start, end) in the histogram's unit, with their weights."""
    out: list[Bucket] = []
    if h.is_empty():
        return ()
    last = h.buckets.num_buckets - 1
    for b in range(h.min_bucket, h.max_bucket + 1):
        w = h.weights[b]
        if w < h.buckets.epsilon:
            continue
        start = h.buckets.bucket_start(b)
        end = h.buckets.bucket_start(b + 1) if b < last else h.buckets.max_value
        out.append(Bucket(start, end, w))
    return tuple(out)


def _usage(h: DecayingHistogram, unit: str) -> UsageHistogram:
    return UsageHistogram(unit, h.total_weight, to_datetime(h.reference_time), buckets(h))


def container_histograms(row: Checkpoint, settings: RecommenderSettings) -> ContainerHistograms:
    """Raises ValueError (or TypeError) for a checkpoint the recommender could not load either."""
    agg = load_aggregate(checkpoint_from_row(row), settings)
    return ContainerHistograms(
        name=row.container,
        sample_count=row.sample_count,
        cpu=_usage(agg.cpu, "cores"),
        memory=_usage(agg.memory, "bytes"),
    )
