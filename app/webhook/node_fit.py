"""The webhook's node fit: a new pod's recommendations capped to fit the largest node it may run
on, less the DaemonSets there (app.core.sizing.node_fit), from this process's node and DaemonSet
informers (app.webhook.sources). The recommender caps what it saves the same way; here the pod's
own placement (its nodeSelector, affinity and tolerations as created) and the nodes of now
decide. A DaemonSet's pod is capped at the node it is for (the DaemonSet controller's node
affinity, app.core.node_groups.target_node_name; its node group's recommendation when the policy
sizes per node group), less the other DaemonSets there.

The rooms are rebuilt from the informers when they changed, at most every REBUILD_EVERY seconds
(node status updates change the node list's version all the time), at once while none is known.
In a process's first seconds a review waits up to FIRST_WAIT for the caches' first listing, as
for node groups; after that, nothing is capped while no node is known. The capped
recommendations are kept per recommendations object, placement and rooms (a few hundred
entries), so the pods of one template share one object, and the patch cache
(app.core.sizing.patch_cache) still answers them from one entry.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from app.core.node_groups import target_node_name
from app.core.nodes import NodeView
from app.core.recommendation import Recommendation
from app.core.sizing.fit import NodeRoom, Placement
from app.core.sizing.node_fit import (
    Amounts,
    DaemonTemplate,
    cap_to_node,
    daemon_room,
    daemon_use,
    node_rooms,
    smallest_room,
    spec_requests,
)

REBUILD_EVERY = 10.0  # seconds
FIRST_WAIT = 1.0  # seconds a review waits for the caches' first listing, in their first seconds
MEMO_SIZE = 512
Recs = Mapping[str, Recommendation]


class Nodes(Protocol):
    @property
    def version(self) -> str: ...

    def views(self) -> list[NodeView]: ...

    def wait_listed(self, timeout: float) -> bool: ...


class Daemons(Protocol):
    @property
    def version(self) -> str: ...

    def templates(self) -> list[DaemonTemplate]: ...

    def wait_listed(self, timeout: float) -> bool: ...


class NodeFit:
    """`cap(pod, recommendations)` -> (the recommendations to size the pod from, why they were
    capped or None)."""

    def __init__(
        self, nodes: Nodes, daemons: Daemons, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.nodes, self.daemons, self.clock = nodes, daemons, clock
        self._lock = threading.Lock()
        self._built: tuple[str, str] | None = None  # the versions the rooms were built from
        self._built_at = 0.0
        self._rooms: list[NodeRoom] = []
        self._views: dict[str, NodeView] = {}
        self._use: dict[str, dict[tuple[str, str], Amounts]] = {}
        self._floor: Amounts | None = None
        self._memo: dict[Any, tuple[Recs, Recs, str | None]] = {}

    def rooms(self) -> tuple[list[NodeRoom], Amounts | None, tuple[str, str] | None]:
        if not self._rooms:  # a process's first reviews: its caches may not have listed yet
            self.nodes.wait_listed(FIRST_WAIT)
            self.daemons.wait_listed(FIRST_WAIT)
        versions = (self.nodes.version, self.daemons.version)
        now = self.clock()
        due = self._built is None or not self._rooms or now - self._built_at >= REBUILD_EVERY
        if versions != self._built and due:
            with self._lock:
                if versions != self._built:
                    nodes = self.nodes.views()
                    use = daemon_use(nodes, self.daemons.templates())
                    rooms = node_rooms(nodes, use)
                    self._rooms, self._floor = rooms, smallest_room(rooms)
                    self._views, self._use = {n.name: n for n in nodes}, use
                    self._built, self._built_at = versions, now
                    self._memo = {}
        return self._rooms, self._floor, self._built

    def cap(
        self, pod: Mapping[str, Any], recs: Recs, daemonset: tuple[str, str] | None = None
    ) -> tuple[Recs, str | None]:
        """`daemonset`: (namespace, name) of the DaemonSet whose pod this is."""
        if not recs:
            return recs, None
        rooms, floor, built = self.rooms()
        spec = pod.get("spec")
        if not isinstance(spec, Mapping):
            return recs, None
        placement = Placement.of(spec)
        if daemonset is not None:  # its node alone, less the other DaemonSets there
            view = self._views.get(target_node_name(pod) or "")
            room = daemon_room(view, self._use, daemonset) if view is not None else None
            rooms, floor, placement = ([room] if room else []), None, Placement()
        if not rooms:
            return recs, None
        requests = spec_requests(spec)
        try:
            shape = json.dumps(
                [sorted(requests.items()), [spec.get(k) for k in PLACEMENT_FIELDS]],
                sort_keys=True,
            )
        except (TypeError, ValueError):
            shape = None
        key = (id(recs), built, shape, daemonset)
        found = self._memo.get(key) if shape is not None else None
        if found is not None and found[0] is recs:
            return found[1], found[2]
        out, why = cap_to_node(recs, requests, placement, rooms, floor)
        if shape is not None:
            if len(self._memo) >= MEMO_SIZE:
                self._memo = {}
            self._memo[key] = (recs, out, why)  # keeps `recs` alive: its id names no other
        return out, why


PLACEMENT_FIELDS = ("nodeSelector", "affinity", "tolerations")
