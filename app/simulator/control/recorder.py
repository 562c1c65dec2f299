"""The components' event recorders: client-go's EventBroadcaster and its sink, writing to the store.

Each source (a controller, the scheduler, a node's kubelet) has its own EventCorrelator, as each
component process has its own broadcaster (`tools/record/event.go` StartRecordingToSink). The
sink is the store itself and writes synchronously, so `settle()` covers the Events a reconcile
writes. A repeat updates the Event (count, lastTimestamp, message); if it has meanwhile expired
(`--event-ttl`) it is created again under the same name, as `recordEvent` does after a 404.

The kube-scheduler writes through the same legacy recorder: it uses the events.k8s.io/v1 API only
when discovery serves it (`tools/events/event_broadcaster.go` NewEventBroadcasterAdapter), and the
simulator serves core/v1 Events only.

Writes take the store's lock (re-entrant), so the recorder may be called from a store listener
(the kubelet sees a pod deleted) without a second lock to order against it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any

from app.simulator.apiserver.errors import ApiError
from app.simulator.apiserver.resources import EVENT, NAMESPACE
from app.simulator.apiserver.store import Store
from app.simulator.control.events import (
    Correlated,
    EventCorrelator,
    Source,
    make_event,
    object_reference,
)
from app.simulator.workload.clock import rfc3339

NORMAL, WARNING = "Normal", "Warning"


class EventRecorder:
    def __init__(self, store: Store, now: Callable[[], float]) -> None:
        self.store = store
        self._now = now
        self._correlators: dict[Source, EventCorrelator] = {}
        self._last_nanos = 0

    def event(
        self,
        obj: Mapping[str, Any],
        type_: str,
        reason: str,
        message: str,
        source: Source,
        *,
        at: float | None = None,
        field_path: str = "",
    ) -> None:
        """Record an Event about a stored object (its reference taken as GetReference does)."""
        self.event_ref(object_reference(obj, field_path), type_, reason, message, source, at=at)

    def event_ref(
        self,
        ref: Mapping[str, str],
        type_: str,
        reason: str,
        message: str,
        source: Source,
        *,
        at: float | None = None,
    ) -> None:
        """Record an Event about the referenced object, at `at` (default: now)."""
        when = self._now() if at is None else at
        with self.store.lock:
            nanos = self._nanos(when)
            event = make_event(ref, type_, reason, message, source, when, nanos)
            correlator = self._correlators.setdefault(source, EventCorrelator())
            result = correlator.correlate(event, when, self._nanos(when))
            if result is not None:
                self._write(result)

    def _nanos(self, when: float) -> int:
        """The recorder clock's UnixNano, kept strictly increasing: the simulated clock may stand
        still while several Events are made, and they must not share a name."""
        self._last_nanos = max(int(when * 1e9), self._last_nanos + 1)
        return self._last_nanos

    def _write(self, result: Correlated) -> None:
        event = result.event
        meta = event["metadata"]
        if result.update:

            def patch(stored: dict[str, Any]) -> None:
                for key in ("count", "lastTimestamp", "message"):
                    stored[key] = event[key]

            if self.store.update(EVENT, meta["namespace"], meta["name"], patch) is not None:
                return
        if self.store.get(NAMESPACE, "", meta["namespace"]) is None:
            return  # NamespaceLifecycle refuses it; the recorder gives up ("will not retry!")
        with contextlib.suppress(ApiError):  # AlreadyExists: "Server rejected event"
            self.store.create(EVENT, event, rfc3339(self._now()))
