"""Per node group recommendations of DaemonSets (app.core.node_groups) in the database.

The recommender writes every group of every grouped DaemonSet at each run, in one transaction,
and deletes the rows it no longer has (a group idle for the memory window, a DaemonSet whose
policy dropped or changed its `nodeGroupLabel`, one that is gone): the table holds exactly the
groups of the last run, a few rows per DaemonSet. Each row keeps the group's histograms, in the
JSON of a VPA checkpoint (`HistogramCheckpoint.to_json`), so a restart resumes the groups too.
The webhook and the updater read the recommendations (`node_group_targets`, in their snapshot),
the API and the dashboard the rows (`node_group_rows`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select

from app.core.node_groups import NodeGroupRecommendations
from app.core.recommend.checkpoint import AggregateCheckpoint
from app.core.recommend.histogram import HistogramCheckpoint
from app.core.recommend.node_groups import NodeGroupModels
from app.core.recommendation import Recommendation
from app.core.resources import Resources
from app.core.workload_key import WorkloadKey
from app.store.clusters import cluster_key
from app.store.models import NodeGroupRecommendation as Row
from app.store.session import DbSession, to_datetime, to_unix

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class NodeGroupResult:
    """What the recommender computed for one container of a DaemonSet in one node group."""

    workload: WorkloadKey
    container: str
    label: str
    group: str
    recommendation: Recommendation | None  # None: not enough of the group's samples yet
    checkpoint: AggregateCheckpoint
    pods: int | None = None  # live pods of the group seen in this run (None: none seen)
    cpu_request: int | None = None  # a pod's (the most common), millicores
    memory_request: int | None = None  # bytes


def checkpoint_json(cp: AggregateCheckpoint) -> dict[str, Any]:
    return {
        "cpu": cp.cpu.to_json(),
        "memory": cp.memory.to_json(),
        "firstSample": cp.first_sample,
        "lastSample": cp.last_sample,
        "totalSamples": cp.total_samples,
        "version": cp.version,
        "daily": cp.daily,
    }


def checkpoint_from_json(doc: Mapping[str, Any]) -> AggregateCheckpoint:
    """Raises ValueError (or TypeError) for a document that is not one."""
    first, last = doc.get("firstSample"), doc.get("lastSample")
    return AggregateCheckpoint(
        cpu=HistogramCheckpoint.from_json(dict(doc["cpu"])),
        memory=HistogramCheckpoint.from_json(dict(doc["memory"])),
        first_sample=None if first is None else float(first),
        last_sample=None if last is None else float(last),
        total_samples=int(doc.get("totalSamples", 0)),
        version=str(doc.get("version")),
        daily=doc.get("daily"),
    )


def _key(w: WorkloadKey, container: str, group: str) -> tuple[str, str, str, str, str]:
    return (w.namespace, w.kind, w.name, container, group)


def _fill(row: Row, r: NodeGroupResult, now: datetime) -> None:
    row.node_label = r.label
    rec = r.recommendation
    amounts: tuple[Resources | None, ...] = (
        (rec.target, rec.lower_bound, rec.upper_bound, rec.uncapped_target)
        if rec is not None
        else (None, None, None, None)
    )
    target, lower, upper, uncapped = amounts
    row.target_cpu, row.target_memory = _pair(target)
    row.lower_bound_cpu, row.lower_bound_memory = _pair(lower)
    row.upper_bound_cpu, row.upper_bound_memory = _pair(upper)
    row.uncapped_target_cpu, row.uncapped_target_memory = _pair(uncapped)
    row.reason = (rec.reason or None) if rec is not None else None
    if r.pods is not None:  # else: keep what the last run that saw the group's pods found
        row.pods, row.current_cpu_request = r.pods, r.cpu_request
        row.current_memory_request = r.memory_request
    cp = r.checkpoint
    row.sample_count = cp.total_samples
    row.first_sample_at = to_datetime(cp.first_sample)
    row.last_sample_at = to_datetime(cp.last_sample)
    row.checkpoint = checkpoint_json(cp)
    row.updated_at = now


def _pair(r: Resources | None) -> tuple[int | None, int | None]:
    return (None, None) if r is None else (r.cpu, r.memory)


def save_node_groups(session: DbSession, results: Iterable[NodeGroupResult], now: datetime) -> int:
    """Makes this cluster's rows exactly `results` (one transaction); the number of rows
    written."""
    wanted = {_key(r.workload, r.container, r.group): r for r in results}
    try:
        cluster = cluster_key(session)
        existing = {
            _key(WorkloadKey(row.namespace, row.kind, row.name), row.container, row.node_group): row
            for row in session.scalars(select(Row).where(Row.cluster_id == cluster))
        }
        for key, row in existing.items():
            if key not in wanted:
                session.delete(row)
        for key, r in wanted.items():
            row = existing.get(key) or Row(
                cluster_id=cluster,
                namespace=key[0],
                kind=key[1],
                name=key[2],
                container=key[3],
                node_group=key[4],
            )
            _fill(row, r, now)
            session.add(row)
        session.commit()
    except Exception:
        session.rollback()
        raise
    return len(wanted)


def load_node_groups(session: DbSession, groups: NodeGroupModels) -> tuple[int, int]:
    """Restores every group's histograms of this cluster into `groups`; a bad row is logged and
    kept."""
    loaded = skipped = 0
    for row in session.scalars(select(Row).where(Row.cluster_id == cluster_key(session))):
        w = WorkloadKey(row.namespace, row.kind, row.name)
        try:
            groups.restore(
                (row.node_label, row.node_group),
                w,
                row.container,
                checkpoint_from_json(row.checkpoint),
            )
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            log.warning(
                "skipping node group %s=%s of %s container %s: %s",
                row.node_label,
                row.node_group,
                w,
                row.container,
                e,
            )
            skipped += 1
            continue
        loaded += 1
    return loaded, skipped


def row_recommendation(row: Row) -> Recommendation | None:
    """The row's recommendation, None while the group has none."""
    if row.target_cpu is None or row.target_memory is None:
        return None
    return Recommendation(
        Resources(row.target_cpu, row.target_memory),
        Resources(row.lower_bound_cpu or 0, row.lower_bound_memory or 0),
        Resources(row.upper_bound_cpu or 0, row.upper_bound_memory or 0),
        Resources(row.uncapped_target_cpu or 0, row.uncapped_target_memory or 0),
        row.reason or "",
    )


def node_group_targets(session: DbSession) -> dict[WorkloadKey, NodeGroupRecommendations]:
    """Per grouped DaemonSet, its groups' recommendations (one query), for the webhook and the
    updater."""
    labels: dict[WorkloadKey, str] = {}
    groups: dict[WorkloadKey, dict[str, dict[str, Recommendation]]] = {}
    history: dict[WorkloadKey, dict[str, float]] = {}
    mine = Row.cluster_id == cluster_key(session)
    for row in session.scalars(select(Row).where(mine, Row.target_cpu.is_not(None))):
        rec = row_recommendation(row)
        if rec is None:
            continue
        w = WorkloadKey(row.namespace, row.kind, row.name)
        labels.setdefault(w, row.node_label)
        groups.setdefault(w, {}).setdefault(row.node_group, {})[row.container] = rec
        seconds = _seconds(row.first_sample_at, row.last_sample_at)
        shortest = history.setdefault(w, {})
        shortest[row.node_group] = min(shortest.get(row.node_group, seconds), seconds)
    return {w: NodeGroupRecommendations(labels[w], groups[w], history[w]) for w in labels}


def _seconds(first: datetime | None, last: datetime | None) -> float:
    """The seconds between a row's first and last sample (0 without both)."""
    a, b = to_unix(first), to_unix(last)
    return 0.0 if a is None or b is None else b - a


def node_group_rows(
    session: DbSession,
    namespace: str | None = None,
    kind: str | None = None,
    name: str | None = None,
) -> list[Row]:
    """This cluster's rows, by workload, container and group (of one workload, kind or
    namespace if given)."""
    q = select(Row).where(Row.cluster_id == cluster_key(session))
    for col, value in ((Row.namespace, namespace), (Row.kind, kind), (Row.name, name)):
        if value is not None:
            q = q.where(col == value)
    return list(
        session.scalars(
            q.order_by(Row.namespace, Row.kind, Row.name, Row.container, Row.node_group)
        )
    )
