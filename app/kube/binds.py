"""Pods as they are bound to nodes, from now on: what the scheduler extender's hot spots need
(app.core.placement.hotspots).

A WATCH of pods with `fieldSelector=spec.nodeName!=` from the resourceVersion of a one-item LIST:
the pods already bound are not sent, only the changes after it. A pod that gets its node enters
the selector, and the API server sends it as ADDED (the watch cache's filtering); `on_bound` gets
it. A pod deleted, or finished (Succeeded, Failed), goes to `on_gone`. Only changes
are read, so a serving process holds nothing of the pods themselves.

A watch that ends (its timeout, every 5 minutes), a dropped connection or any error resumes from
the last resourceVersion it saw (an event's or a bookmark's), after a backoff on errors (1 s,
doubling to 30 s), as client-go's reflector does: the API server sends every change since then,
so the binds made while no watch was open are not missed. Only when that resourceVersion is too
old for the API server's watch cache (410 Gone: minutes without a watch) does it start again from
a fresh one-item LIST; the binds of that gap are missed, and their nodes' next metrics show them.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.kube.client import DEFAULT_TIMEOUT
from app.kube.informer import Gone, Obj, iter_lines, raise_watch_error
from app.kube.responses import give_back

log = logging.getLogger(__name__)

SELECTOR = "spec.nodeName!="
WATCH_SECONDS = 300
TERMINAL = ("Succeeded", "Failed")


class BindWatch:
    def __init__(
        self, api: Any, on_bound: Callable[[Obj], None], on_gone: Callable[[Obj], None]
    ) -> None:
        self.core: Any = client.CoreV1Api(api)
        self.on_bound, self.on_gone = on_bound, on_gone
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.watching = threading.Event()  # set while a watch is open (tests wait for it)
        self.resource_version: str | None = None  # the last one seen; None: start from now

    def start(self) -> BindWatch:
        """Starts watching, from the last resourceVersion seen when it watched before."""
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(self._stop,), name="bind-watch", daemon=True
        )
        self._thread.start()
        return self

    def stop(self, timeout: float | None = None) -> None:
        """Ends the watch at its next event, bookmark or timeout; waits up to `timeout`."""
        self._stop.set()
        if timeout is not None and self._thread is not None:
            self._thread.join(timeout)

    def _run(self, stop: threading.Event) -> None:
        backoff = 1.0
        while not stop.is_set():
            try:
                self._watch(self.resource_version or self._now(), stop)
                backoff = 1.0
            except Gone:
                self._gone()
            except Exception as e:
                if isinstance(e, ApiException) and e.status == 410:
                    self._gone()
                    continue
                log.info("bind watch: %s: %s; again in %.0f s", type(e).__name__, e, backoff)
                self.watching.clear()
                stop.wait(backoff)
                backoff = min(backoff * 2, 30.0)

    def _gone(self) -> None:
        log.info(
            "bind watch: resourceVersion %s too old; binds since then missed", self.resource_version
        )
        self.resource_version = None

    def _now(self) -> str:
        resp = self.core.list_pod_for_all_namespaces(limit=1, _preload_content=False)
        try:
            return str(json.loads(resp.data)["metadata"]["resourceVersion"])
        finally:
            give_back(resp)

    def _watch(self, rv: str, stop: threading.Event) -> None:
        resp = self.core.list_pod_for_all_namespaces(
            watch=True,
            resource_version=rv,
            field_selector=SELECTOR,
            allow_watch_bookmarks=True,
            timeout_seconds=WATCH_SECONDS,
            _preload_content=False,
            _request_timeout=(DEFAULT_TIMEOUT[0], WATCH_SECONDS + 30),
        )
        self.resource_version = rv  # open: a watch that ends resumes from here at least
        self.watching.set()
        try:
            for line in iter_lines(resp):
                if stop.is_set():
                    return
                self._apply(json.loads(line))
        finally:
            self.watching.clear()
            give_back(resp)

    def _apply(self, event: Obj) -> None:
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            raise_watch_error(obj)
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if isinstance(rv, str) and rv:
            self.resource_version = rv  # applied below, or a bookmark: resume after it
        phase = (obj.get("status") or {}).get("phase")
        if kind == "DELETED" or (kind == "MODIFIED" and phase in TERMINAL):
            self.on_gone(obj)
        elif kind == "ADDED" and phase not in TERMINAL:
            self.on_bound(obj)
