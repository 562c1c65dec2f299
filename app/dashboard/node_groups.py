"""The node groups of a DaemonSet sized per node group, for its workload page (a section of its
own, `dashboard/_node_groups.html`): per container and group, the target and range, the pods the
recommender saw there and what one asked for."""

from __future__ import annotations

from dataclasses import dataclass

from app.store.models import NodeGroupRecommendation
from app.store.node_groups import node_group_rows, row_recommendation
from app.store.session import DbSession


@dataclass(frozen=True)
class GroupRow:
    container: str
    group: str  # the label's value, or <none>
    target: tuple[int, int] | None  # millicores, bytes; None while the group has too few samples
    lower: tuple[int, int] | None
    upper: tuple[int, int] | None
    pods: int | None
    current: tuple[int | None, int | None]  # a pod's requests when last seen
    sample_count: int


@dataclass(frozen=True)
class NodeGroups:
    label: str
    rows: tuple[GroupRow, ...]


def _row(r: NodeGroupRecommendation) -> GroupRow:
    rec = row_recommendation(r)
    return GroupRow(
        r.container,
        r.node_group,
        (rec.target.cpu, rec.target.memory) if rec else None,
        (rec.lower_bound.cpu, rec.lower_bound.memory) if rec else None,
        (rec.upper_bound.cpu, rec.upper_bound.memory) if rec else None,
        r.pods,
        (r.current_cpu_request, r.current_memory_request),
        r.sample_count,
    )


def node_groups(session: DbSession, namespace: str, kind: str, name: str) -> NodeGroups | None:
    """The workload's groups (None: it is not sized per node group)."""
    rows = node_group_rows(session, namespace, kind, name)
    if not rows:
        return None
    return NodeGroups(rows[0].node_label, tuple(_row(r) for r in rows))
