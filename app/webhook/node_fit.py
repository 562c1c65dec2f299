"""The webhook's node fit: a new pod's recommendations capped to fit the largest node it may run
on, less the DaemonSets there (app.core.sizing.node_fit), from this process's node and DaemonSet
informers (app.webhook.sources). The recommender caps what it saves the same way; here the pod's
own placement (its nodeSelector, affinity and tolerations as created) and the nodes of now
decide.

The rooms are rebuilt from the informers when they changed, at most every REBUILD_EVERY seconds
(node status updates change the node list's version all the time), never while a review waits
on anything but that computation. The capped recommendations are kept per recommendations object,
placement and rooms (a few hundred entries), so the pods of one template share one object, and
the patch cache (app.core.sizing.patch_cache) still answers them from one entry.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from app.core.nodes import NodeView
from app.core.recommend.capping import Recommendation
from app.core.sizing.fit import NodeRoom, Placement
from app.core.sizing.node_fit import (
    Amounts,
    DaemonTemplate,
    cap_to_node,
    daemon_use,
    node_rooms,
    smallest_room,
    spec_requests,
)

REBUILD_EVERY = 10.0  # seconds
MEMO_SIZE = 512
Recs = Mapping[str, Recommendation]


class Nodes(Protocol):
    @property
    def version(self) -> str: ...

    def views(self) -> list[NodeView]: ...


class Daemons(Protocol):
    @property
    def version(self) -> str: ...

    def templates(self) -> list[DaemonTemplate]: ...


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
        self._floor: Amounts | None = None
        self._memo: dict[Any, tuple[Recs, Recs, str | None]] = {}

    def rooms(self) -> tuple[list[NodeRoom], Amounts | None, tuple[str, str] | None]:
        versions = (self.nodes.version, self.daemons.version)
        now = self.clock()
        if versions != self._built and (
            self._built is None or now - self._built_at >= REBUILD_EVERY
        ):
            with self._lock:
                if versions != self._built:
                    nodes = self.nodes.views()
                    rooms = node_rooms(nodes, daemon_use(nodes, self.daemons.templates()))
                    self._rooms, self._floor = rooms, smallest_room(rooms)
                    self._built, self._built_at = versions, now
                    self._memo = {}
        return self._rooms, self._floor, self._built

    def cap(self, pod: Mapping[str, Any], recs: Recs) -> tuple[Recs, str | None]:
        if not recs:
            return recs, None
        rooms, floor, built = self.rooms()
        if not rooms:
            return recs, None
        spec = pod.get("spec")
        if not isinstance(spec, Mapping):
            return recs, None
        requests = spec_requests(spec)
        placement = Placement.of(spec)
        try:
            shape = json.dumps(
                [sorted(requests.items()), [spec.get(k) for k in PLACEMENT_FIELDS]],
                sort_keys=True,
            )
        except (TypeError, ValueError):
            shape = None
        key = (id(recs), built, shape)
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
