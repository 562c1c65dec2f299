"""The node levels the scheduler extender answers from, reloaded from the database.

The leader saves every node's levels (app.jobs.node_levels); any server process may get an
extender call, so each keeps its own copy, as it does the webhook's snapshot (app.webhook.cache):
a daemon thread of the process reloads the rows every `interval` seconds and, when they changed,
builds a new LevelTable (app.core.placement.table) and swaps it in with one assignment. Calls only
read the current table: no database round trip while kube-scheduler waits. Until the first load,
or when the levels have not changed for `max_age` seconds (no leader saves them, or
metrics-server stopped), the table is None and the extender answers neutrally. Staleness is timed
by this process's clock from the last change, not by the metrics' timestamps: those follow the
cluster's clock (a simulated one runs at its own speed).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable

from app.core.placement.table import LevelTable, PlacementOptions
from app.core.placement.windows import NodeLevel

log = logging.getLogger(__name__)


class LevelsCache:
    def __init__(
        self,
        load: Callable[[], list[NodeLevel]],
        options: PlacementOptions,
        interval: float = 5.0,
        max_age: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.load, self.options, self.interval, self.max_age = load, options, interval, max_age
        self.clock = clock
        self.table: LevelTable | None = None
        self._rows: list[NodeLevel] | None = None
        self._changed = 0.0  # by `clock`: when the rows last changed
        self._pid = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def current(self) -> LevelTable | None:
        """The table to answer from; None before the first load or when the levels are stale."""
        table = self.table
        if table is None or self.clock() - self._changed > self.max_age:
            return None
        return table

    def refresh(self) -> bool:
        try:
            rows = sorted(self.load(), key=lambda n: n.name)
        except Exception as e:
            log.warning("scheduler extender: node levels not reloaded: %s: %s", type(e).__name__, e)
            return False
        if rows != self._rows:
            self.table = LevelTable(rows, self.options)
            self._rows = rows
            self._changed = self.clock()
        return True

    def start(self) -> None:
        """Starts this process's reload thread unless it runs (again after a fork)."""
        if self._pid == os.getpid():
            return
        with self._lock:
            if self._pid == os.getpid():
                return
            self._pid = os.getpid()
            self._stop = threading.Event()
            self.refresh()
            threading.Thread(
                target=self._loop, args=(self._stop,), name="node-levels", daemon=True
            ).start()

    def stop(self) -> None:
        self._stop.set()
        self._pid = 0

    def _loop(self, stop: threading.Event) -> None:
        while not stop.wait(self.interval):
            self.refresh()
