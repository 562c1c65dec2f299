"""kube-apiserver's `--event-ttl`: an Event expires an hour after it was last written.

`pkg/registry/core/event/storage/storage.go` NewREST gives every Event write (create and update
alike) an etcd lease of `ttl` seconds (its TTLFunc ignores the existing TTL), and `--event-ttl`
defaults to 1h (`pkg/controlplane/apiserver/options/options.go`). Expiry is a DELETE that
watchers see like any other. Here the lease is the simulated time of the last write, and expired
Events are deleted when `expire()` runs (each kubelet tick), oldest first, without a scan.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable

from app.simulator.apiserver.errors import ApiError
from app.simulator.apiserver.resources import EVENT
from app.simulator.apiserver.store import Store, WatchEvent

EVENT_TTL = 3600.0


class EventExpiry:
    def __init__(self, store: Store, now: Callable[[], float], ttl: float = EVENT_TTL) -> None:
        self.store = store
        self.ttl = ttl
        self._now = now
        self._lock = threading.Lock()
        # (namespace, name) -> expiry, in write order; the clock never goes back, so also in
        # expiry order.
        self._expires: OrderedDict[tuple[str, str], float] = OrderedDict()
        store.add_listener(self._on_event)

    def _on_event(self, event: WatchEvent) -> None:
        if event.rt is not EVENT:
            return
        meta = event.entry.obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        with self._lock:
            if event.type == "DELETED":
                self._expires.pop(key, None)
            else:
                self._expires[key] = self._now() + self.ttl
                self._expires.move_to_end(key)

    def expire(self) -> int:
        """Delete the Events whose lease has run out; returns how many."""
        now = self._now()
        with self._lock:
            due = []
            while self._expires:
                key, at = next(iter(self._expires.items()))
                if at > now:
                    break
                self._expires.popitem(last=False)
                due.append(key)
        for ns, name in due:
            with self.store.lock:
                with self._lock:
                    if (ns, name) in self._expires:
                        continue  # written again since: a new lease
                with contextlib.suppress(ApiError):  # deleted meanwhile
                    self.store.delete(EVENT, ns, name)
        return len(due)

    def __len__(self) -> int:
        return len(self._expires)
