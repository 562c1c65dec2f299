"""The recommender's node fit: each run's nodes and DaemonSets, from the ClusterView caches,
and the recommendations capped to fit a node they would not fit otherwise (the math:
app.core.sizing.node_fit; the workload's CappedToNode condition: app.core.conditions).

What the DaemonSets take on each node is read from their pod templates, as the webhook reads it
(app.webhook.node_fit): the same amounts, so that the updater never finds a pod sized by the
webhook below a recommendation the recommender capped otherwise, to evict it again.

DaemonSets themselves are not capped here: each of their pods is bound to one node by the
DaemonSet controller (a required affinity on the node's name), and a DaemonSet that must differ
between small and large nodes is sized per node group (docs/policies.md, "Node groups").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from app.core.nodes import NodeView
from app.core.pods import PodView
from app.core.recommendation import Recommendation
from app.core.sizing.fit import Placement
from app.core.sizing.node_fit import (
    DaemonTemplate,
    cap_to_node,
    container_requests,
    daemon_use,
    node_rooms,
    smallest_room,
)
from app.core.workload_key import WorkloadKey


class NodeFit:
    """One run's rooms: every node a pod may be scheduled on, less its DaemonSets."""

    def __init__(self, nodes: Iterable[NodeView], daemons: Iterable[DaemonTemplate]) -> None:
        listed = list(nodes)
        self.rooms = node_rooms(listed, daemon_use(listed, daemons))
        self.floor = smallest_room(self.rooms)
        self.capped: dict[WorkloadKey, str] = {}  # this run's: why each was capped

    def cap(
        self, w: WorkloadKey, recs: Mapping[str, Recommendation], pod: PodView | None
    ) -> Mapping[str, Recommendation]:
        """`recs` capped to fit a node `pod` (a live pod of `w`) may run on."""
        if pod is None or w.kind == "DaemonSet" or not recs:
            return recs
        out, why = cap_to_node(
            recs, container_requests(pod), lambda: Placement.of(pod.spec), self.rooms, self.floor
        )
        if why is not None:
            self.capped[w] = why
        return out
