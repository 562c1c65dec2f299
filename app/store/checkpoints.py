"""Checkpoint rows: the recommender's histograms as saved, and read back into the model.

The recommender restores from them at start; the histogram views (REST and dashboard) read them
through the same `checkpoint_from_row`, so the buckets shown are the ones recommendations use.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from sqlalchemy import select

from app.core.gcpause import without_cyclic_gc
from app.core.recommend.array_model import ArrayModel
from app.core.recommend.checkpoint import AggregateCheckpoint
from app.core.recommend.histogram import HistogramCheckpoint
from app.core.workload_key import WorkloadKey
from app.store.clusters import cluster_key
from app.store.models import Checkpoint
from app.store.session import DbSession, to_datetime, to_unix

log = logging.getLogger(__name__)


def checkpoint_values(cp: AggregateCheckpoint, now: datetime) -> dict[str, Any]:
    """The columns of a checkpoint row holding `cp`, stamped `now` (for Core statements: the
    recommender writes thousands a run, app.store.recommendations)."""
    return {
        "cpu_buckets": {str(k): v for k, v in sorted(cp.cpu.bucket_weights.items())},
        "cpu_total_weight": cp.cpu.total_weight,
        "cpu_reference_time": to_datetime(cp.cpu.reference_time),
        "memory_buckets": {str(k): v for k, v in sorted(cp.memory.bucket_weights.items())},
        "memory_total_weight": cp.memory.total_weight,
        "memory_reference_time": to_datetime(cp.memory.reference_time),
        "sample_count": cp.total_samples,
        "first_sample_at": to_datetime(cp.first_sample),
        "last_sample_at": to_datetime(cp.last_sample),
        "version": cp.version,
        "daily": cp.daily,
        "updated_at": now,
    }


def checkpoint_from_row(row: Checkpoint) -> AggregateCheckpoint:
    return AggregateCheckpoint(
        cpu=HistogramCheckpoint(
            {int(k): int(v) for k, v in row.cpu_buckets.items()},
            row.cpu_total_weight,
            to_unix(row.cpu_reference_time),
        ),
        memory=HistogramCheckpoint(
            {int(k): int(v) for k, v in row.memory_buckets.items()},
            row.memory_total_weight,
            to_unix(row.memory_reference_time),
        ),
        first_sample=to_unix(row.first_sample_at),
        last_sample=to_unix(row.last_sample_at),
        total_samples=row.sample_count,
        version=row.version,
        daily=row.daily,
    )


def load_checkpoints(session: DbSession, model: ArrayModel) -> tuple[int, int]:
    """Restores every checkpoint of this cluster into `model`; a bad one is logged and kept,
    not deleted. The cyclic collector is paused meanwhile (app.core.gcpause: half of a
    15,000-checkpoint restore went to its full collections)."""
    loaded = skipped = 0
    with without_cyclic_gc():
        mine = Checkpoint.cluster_id == cluster_key(session)
        for row in session.scalars(select(Checkpoint).where(mine)):
            w = WorkloadKey(row.namespace, row.kind, row.name)
            try:
                model.restore(w, row.container, checkpoint_from_row(row))
            except (ValueError, TypeError, AttributeError) as e:
                log.warning("skipping checkpoint of %s container %s: %s", w, row.container, e)
                skipped += 1
                continue
            loaded += 1
    return loaded, skipped


def checkpoint_rows(session: DbSession, namespace: str, kind: str, name: str) -> list[Checkpoint]:
    """The checkpoints of one workload's containers, by container name."""
    q = (
        select(Checkpoint)
        .where(
            Checkpoint.cluster_id == cluster_key(session),
            Checkpoint.namespace == namespace,
            Checkpoint.kind == kind,
            Checkpoint.name == name,
        )
        .order_by(Checkpoint.container)
    )
    return list(session.scalars(q))
