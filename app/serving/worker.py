"""gunicorn's threaded worker, listening for new connections only while it holds the fewest.

`BalancedThreadWorker` is gunicorn's `gthread` worker (`ThreadWorker`) with two changes. Its loop
asks `app.serving.accept_gate` whether to listen (the loop re-reads `worker_connections`, its
connection cap, on every turn: here a property that answers 0 while another worker holds fewer
connections), and it publishes its connection count (`nr_conns`) whenever that changes; while it
does not listen, its loop turns every 5 ms instead of waiting up to a second for an event, so
it starts listening soon after another worker took the connection that made it the fewest. And it
tells the master it is alive at most once a second, not on every turn of its loop. And while it
holds at least two more connections than another live worker, it answers a request with
`Connection: close` (at most one every HAND_OVER_SECONDS), so the client opens that connection
again on the worker holding fewer (accept_gate.should_hand_over). And it reads each request whole,
within bounds, in its loop before a thread takes it (app.serving.intake), so slow or stalled
clients hold no thread. Keep-alive, gunicorn's timeouts and shutdown are gunicorn's own.

The gate is made in the master by `app.serving.gunicorn_conf`, from the worker count it serves
with, before any worker forks; the master's pre_fork hook hands each worker the gate and its slot,
and child_exit takes the slot back.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from app.serving.accept_gate import HAND_OVER_SECONDS, NEVER, AcceptGate
from app.serving.intake import BoundedIntake

# How soon a worker that stopped listening sees that it holds the fewest connections again.
GATE_POLL_SECONDS = 0.005
# The master restarts a worker silent for gunicorn's `timeout` (60 s: app.serving.gunicorn_conf).
NOTIFY_SECONDS = 1.0


def gate_for(workers: int) -> AcceptGate:
    """The gate for a server of `workers` workers: old workers stop while new ones start during a
    reload (SIGHUP), so room for both, and a few more."""
    return AcceptGate(2 * workers + 4)


class BalancedThreadWorker(BoundedIntake):
    gate: AcceptGate | None = None  # set by the master's pre_fork hook, with the slot
    gate_slot: int | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._conns = 0
        self._cap = 0
        self._notified = float("-inf")
        self._handed_over = float("-inf")  # when this worker last closed a connection to even out
        self._hand_over = threading.Lock()  # request threads judge one at a time
        super().__init__(*args, **kwargs)

    @property
    def nr_conns(self) -> int:
        return self._conns

    @nr_conns.setter
    def nr_conns(self, n: int) -> None:
        self._conns = n
        if self.gate is not None and self.gate_slot is not None:
            self.gate.counts[self.gate_slot] = n

    @property
    def worker_connections(self) -> int:
        """gunicorn's cap while this worker holds the fewest connections, else 0 (not listening)."""
        gate, slot = self.gate, self.gate_slot
        if gate is None or slot is None or not self.alive:
            return self._cap  # no gate (a worker made outside gunicorn's master), or stopping
        return self._cap if gate.look(slot, self._conns, time.monotonic()) else 0

    @worker_connections.setter
    def worker_connections(self, cap: int) -> None:
        self._cap = cap

    def accept(self, listener: Any) -> None:
        """Take the connection only if the gate says so now. The loop chose to listen at the start
        of its turn; since then another worker may have become the one holding fewest (this one
        has just answered Connection: close to even out, and the client is opening that
        connection again): the connection is then left to the worker the gate sends it to."""
        if self.alive and self.nr_conns >= self.worker_connections:
            self.set_accept_enabled(False)
            return
        super().accept(listener)

    def handle_request(self, req: Any, conn: Any) -> bool:
        # Never on a connection's first request: the gate chose where it went as it was opened,
        # and closing it again at once would only move it back and forth.
        if req.req_number > 1 and self._hands_over():
            req.must_close = True  # gunicorn then answers with Connection: close, and closes
        kept: bool = super().handle_request(req, conn)
        return kept

    def _hands_over(self) -> bool:
        """Whether this request's answer closes its connection (accept_gate.should_hand_over),
        at most once every HAND_OVER_SECONDS."""
        gate, slot = self.gate, self.gate_slot
        if gate is None or slot is None or not self.alive:
            return False
        now = time.monotonic()
        if now - self._handed_over < HAND_OVER_SECONDS:
            return False
        with self._hand_over:
            if now - self._handed_over < HAND_OVER_SECONDS or not gate.crowded(
                slot, self._conns, now
            ):
                return False
            self._handed_over = now
            return True

    def wait_for_and_dispatch_events(self, timeout: float) -> None:
        # While not listening, look at the gate again every GATE_POLL_SECONDS, not once a second:
        # another worker taking a connection can make this one the fewest at any moment, and the
        # connection after that waits until a worker holding the fewest is listening.
        listening = self._accepting or not self.alive  # a stopping worker no longer listens anyway
        super().wait_for_and_dispatch_events(timeout if listening else GATE_POLL_SECONDS)

    def notify(self) -> None:
        """Tell the master this worker is alive (gunicorn touches a file: a system call, and a
        chance for a request thread to take the GIL from the loop) at most every NOTIFY_SECONDS
        instead of on every turn of the loop, i.e. every request."""
        now = time.monotonic()
        if now - self._notified >= NOTIFY_SECONDS:
            self._notified = now
            super().notify()

    def handle_exit(self, sig: int, frame: Any) -> None:
        # Stopping: no longer counted, so the others do not wait for this one to take connections.
        if self.gate is not None and self.gate_slot is not None:
            self.gate.seen[self.gate_slot] = NEVER
        super().handle_exit(sig, frame)
