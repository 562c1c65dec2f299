"""The node groups of DaemonSets sized per node group, in the recommendations API.

A grouped DaemonSet (app.core.node_groups) is listed as any workload, with its DaemonSet-wide
recommendation per container, plus `nodeGroupLabel` (the node label that groups its pods) and, per
container, `nodeGroups`: one entry per group (`nodeGroup`: the label's value, `<none>` for nodes
without it) with the group's target and bounds (absent while the group has too few samples for
its strategy), how many of its pods the recommender saw and a pod's requests then, the samples
the recommendation rests on and how it was reached.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from app.core.resources import known_quantities
from app.store.models import NodeGroupRecommendation
from app.store.node_groups import row_recommendation


def _time(d: Any) -> str | None:
    return None if d is None else str(d.strftime("%Y-%m-%dT%H:%M:%SZ"))


def group_document(row: NodeGroupRecommendation) -> dict[str, Any]:
    doc: dict[str, Any] = {"nodeGroup": row.node_group}
    rec = row_recommendation(row)
    if rec is not None:
        doc["target"] = rec.target.as_quantities()
        doc["lowerBound"] = rec.lower_bound.as_quantities()
        doc["upperBound"] = rec.upper_bound.as_quantities()
        doc["uncappedTarget"] = rec.uncapped_target.as_quantities()
    if row.pods is not None:
        doc["pods"] = row.pods
    current = known_quantities(row.current_cpu_request, row.current_memory_request)
    if current:
        doc["currentRequests"] = current
    doc["sampleCount"] = row.sample_count
    doc["firstSampleTime"] = _time(row.first_sample_at)
    doc["lastSampleTime"] = _time(row.last_sample_at)
    doc["updateTime"] = _time(row.updated_at)
    if row.reason:
        doc["reason"] = row.reason
    return doc


def with_node_groups(
    docs: list[dict[str, Any]], rows: Iterable[NodeGroupRecommendation]
) -> list[dict[str, Any]]:
    """The workload documents, each grouped DaemonSet with its `nodeGroupLabel` and each of its
    containers with its `nodeGroups` (rows sorted by workload, container and group)."""
    by_workload: dict[tuple[str, str, str], dict[str, Any]] = {
        (d["namespace"], d["kind"], d["name"]): d for d in docs
    }
    for row in rows:
        doc = by_workload.get((row.namespace, row.kind, row.name))
        if doc is None:
            continue  # the DaemonSet-wide recommendation is gone (the workload is collected)
        doc["nodeGroupLabel"] = row.node_label
        container = next((c for c in doc["containers"] if c["name"] == row.container), None)
        if container is not None:
            container.setdefault("nodeGroups", []).append(group_document(row))
    return docs
