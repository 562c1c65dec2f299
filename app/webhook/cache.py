"""Policies and recommendations held in memory for the webhook, reloaded from the database.

Every pod creation in the cluster waits for the webhook, so its answer must not depend on a
database round trip: a background thread loads everything every few seconds into an immutable
`Snapshot` and swaps it in with one assignment; requests only read the current snapshot. When the
database is down the last snapshot keeps serving (nobody can edit policies meanwhile: edits go
through the same database) until it is older than `max_age`; then, or before the first load, the
webhook allows pods without a patch.

The same thread runs `periodic` tasks after each refresh: the webhook's audit counts are flushed
there (app.webhook.audit), never on a request.

Threads do not survive a fork, so the thread belongs to the process that started it: a gunicorn
worker starts its own on its first review. Until the first load, every review waits for it (not
only the one that started the thread), each at most its `wait` from when the thread started;
after that window they no longer wait.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence

from app.store.snapshot import Snapshot, carry_forward
from app.webhook.metrics import CACHE_LAST_SUCCESS, CACHE_OBJECTS, CACHE_REFRESHES

log = logging.getLogger(__name__)


class WebhookCache:
    """The current Snapshot, refreshed every `interval` seconds by a daemon thread.

    `load` returns a new Snapshot or raises; `clock` must be the one `load` stamps with.
    """

    def __init__(
        self,
        load: Callable[[], Snapshot],
        interval: float = 5.0,
        max_age: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
        periodic: Sequence[Callable[[], object]] = (),
    ) -> None:
        self.load, self.interval, self.max_age, self.clock = load, interval, max_age, clock
        self.periodic = list(periodic)  # also run by the thread after each refresh
        self.snapshot: Snapshot | None = None
        self._lock = threading.Lock()
        self._loaded = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._started = 0.0  # when this process's thread started (by _monotonic)
        self._monotonic = time.monotonic  # the first load's window (tests set their own)

    def state(self) -> tuple[Snapshot | None, str]:
        """The snapshot to answer from and "fresh", or None and "cache_empty" / "cache_stale"."""
        snap = self.snapshot
        if snap is None:
            return None, "cache_empty"
        if self.clock() - snap.loaded_at > self.max_age:
            return None, "cache_stale"
        return snap, "fresh"

    def refresh(self) -> bool:
        """One load; a failure is logged and counted, and the previous snapshot stays."""
        try:
            snap = self.load()
        except Exception as e:
            CACHE_REFRESHES.labels("failed").inc()
            age = "never loaded" if self.snapshot is None else "keeping the previous one"
            log.warning("webhook cache refresh failed (%s): %s: %s", age, type(e).__name__, e)
            return False
        if self.snapshot is not None:  # unchanged objects kept: the patch cache keeps hitting
            snap = carry_forward(self.snapshot, snap)
        self.snapshot = snap
        self._loaded.set()
        CACHE_REFRESHES.labels("ok").inc()
        CACHE_LAST_SUCCESS.set_to_current_time()
        for kind, n in snap.counts.items():
            CACHE_OBJECTS.labels(kind).set(n)
        return True

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and self._pid == os.getpid()

    def start(self, wait: float = 0.0) -> bool:
        """Starts the refresh thread of this process (again after a fork) unless it runs.

        Until the first successful load, a call waits for it up to `wait` seconds after the
        thread started: the call that starts it, and every call made meanwhile (the other
        threads' reviews of a worker's first moments, which would otherwise allow their pods
        unsized). Once loaded, or once that window has passed, calls never wait, so a database
        that is down at start costs `wait` seconds once, not on every request. True when this
        call started the thread.
        """
        if self.running:
            self._first_load(wait)
            return False
        with self._lock:
            started = not self.running
            if started:
                self._stop = threading.Event()
                self._pid = os.getpid()
                self._started = self._monotonic()
                self._thread = threading.Thread(
                    target=self._loop, args=(self._stop,), name="webhook-cache", daemon=True
                )
                self._thread.start()
        self._first_load(wait)
        return started

    def _first_load(self, wait: float) -> None:
        """Waits for the first load until `wait` seconds after the thread started."""
        if wait > 0 and not self._loaded.is_set():
            left = self._started + wait - self._monotonic()
            if left > 0:
                self._loaded.wait(left)

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _loop(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self.refresh()
            for task in self.periodic:
                try:
                    task()
                except Exception:
                    log.exception("webhook background task %s failed", task)
            stop.wait(self.interval)
