"""An informer's nodes as NodeViews, each node parsed once while its cached object stays.

The recommender (each run's node fit), the updater and the webhook read every node's view; at
5,000 nodes parsing them all again (labels sorted, taints, quantities) took tens of
milliseconds each time. A watch event replaces a cached object and never changes it in place
(app.kube.informer), so an object that is still the cached one has the view it had.
"""

from __future__ import annotations

from typing import Any, Protocol

from app.core.nodes import NodeView


class _Nodes(Protocol):
    def items(self) -> list[Any]: ...


class NodeViews:
    """`views()`: NodeView.parse of each node `informer` holds now, in its order."""

    def __init__(self, informer: _Nodes) -> None:
        self.informer = informer
        # by the object's id: the object (its id is its own while it is held here) and its view
        self._known: dict[int, tuple[Any, NodeView]] = {}

    def views(self) -> list[NodeView]:
        known: dict[int, tuple[Any, NodeView]] = {}
        last = self._known
        for node in self.informer.items():
            entry = last.get(id(node))
            if entry is None or entry[0] is not node:
                entry = (node, NodeView.parse(node))
            known[id(node)] = entry
        self._known = known  # the nodes gone or replaced let go (one assignment: thread safe)
        return [view for _, view in known.values()]
