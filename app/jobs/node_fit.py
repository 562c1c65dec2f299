"""The recommender's node fit: each run's nodes and DaemonSet pods, from the ClusterView caches,
and the recommendations capped to fit a node they would not fit otherwise (the math:
app.core.sizing.node_fit; the workload's CappedToNode condition: app.core.conditions).

DaemonSets themselves are not capped here: each of their pods is bound to one node by the
DaemonSet controller (a required affinity on the node's name), and a DaemonSet that must differ
between small and large nodes is sized per node group (docs/policies.md, "Node groups").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from app.core.nodes import NodeView
from app.core.pods import PodView
from app.core.recommend.capping import Recommendation
from app.core.recommend.model import WorkloadKey
from app.core.sizing.fit import Placement
from app.core.sizing.node_fit import (
    cap_to_node,
    container_requests,
    daemon_use_of_pods,
    node_rooms,
    smallest_room,
)


class NodeFit:
    """One run's rooms: every node a pod may be scheduled on, less its DaemonSets' pods."""

    def __init__(self, nodes: Iterable[NodeView], pods: Iterable[PodView]) -> None:
        self.rooms = node_rooms(nodes, daemon_use_of_pods(pods))
        self.floor = smallest_room(self.rooms)
        self.capped: dict[WorkloadKey, str] = {}  # this run's: why each was capped

    def cap(
        self, w: WorkloadKey, recs: Mapping[str, Recommendation], pod: PodView | None
    ) -> Mapping[str, Recommendation]:
        """`recs` capped to fit a node `pod` (a live pod of `w`) may run on."""
        if pod is None or w.kind == "DaemonSet" or not recs:
            return recs
        out, why = cap_to_node(
            recs, container_requests(pod), Placement.of(pod.spec), self.rooms, self.floor
        )
        if why is not None:
            self.capped[w] = why
        return out
