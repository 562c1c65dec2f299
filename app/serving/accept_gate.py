"""Which gunicorn worker takes the next connection: the one holding the fewest.

Every gunicorn worker waits on the same listening socket, and whichever the kernel wakes first
accepts. kube-apiserver keeps its connections to the webhook open (HTTP/1.1 keep-alive), so the
split made when they are opened lasts: measured with 8 connections on 2 workers, one worker got
75-100% of the requests in a third of the runs. A worker is one Python process, one core at
most, and at a steady 1,800 reviews/s the one holding 7 of 8 connections needs more than a core:
its answers queue without bound (p99 0.8 s) while the other worker idles.

`AcceptGate` is a small table in memory shared by the master and its workers (created before
they fork): each worker publishes how many connections it holds and when it last looked, and
stops listening for new ones while another live worker holds fewer. The worker with the fewest
always listens, so a connection is never left waiting for a gate to open; a worker that has not
looked for STALE_SECONDS (stuck, or gone without the master noticing yet) is not counted. The
master gives each worker its slot before forking it and frees it when the worker has exited
(`app.serving.gunicorn_conf`); a stopping worker gives its slot up itself, since it no longer
accepts.

`may_accept` is the whole rule, free of I/O.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence

# A worker's loop looks at least once a second (gunicorn's gthread: select with a 1 s timeout).
STALE_SECONDS = 3.0
NEVER = float("-inf")  # a slot's last look before its worker's first, and after its last


def may_accept(
    slot: int,
    conns: int,
    now: float,
    used: Sequence[int],
    counts: Sequence[int],
    seen: Sequence[float],
) -> bool:
    """Whether the worker in `slot`, holding `conns` connections, should listen for more: no other
    live worker (slot in use, looked within STALE_SECONDS of `now`) holds fewer. Ties listen."""
    for other, in_use in enumerate(used):
        if (
            in_use
            and other != slot
            and counts[other] < conns
            and now - seen[other] <= STALE_SECONDS
        ):
            return False
    return True


class AcceptGate:
    """The shared table: per slot, in use (set by the master), connections and last look (set by
    the slot's worker). Plain shared integers and floats: each is written by one process only."""

    def __init__(self, slots: int) -> None:
        """`slots`: workers alive at once, counting old ones still stopping during a reload."""
        ctx = multiprocessing.get_context("fork")
        self.used = ctx.RawArray("b", slots)
        self.counts = ctx.RawArray("q", slots)
        self.seen = ctx.RawArray("d", slots)

    def claim(self) -> int | None:
        """A free slot, marked in use (master, before forking a worker); None when all are taken:
        that worker then accepts freely, as gunicorn's own does."""
        for slot, in_use in enumerate(self.used):
            if not in_use:
                self.counts[slot], self.seen[slot] = 0, NEVER  # not counted until it looks
                self.used[slot] = 1
                return slot
        return None

    def release(self, slot: int | None) -> None:
        if slot is not None:
            self.used[slot] = 0

    def look(self, slot: int, conns: int, now: float) -> bool:
        """Publish this worker's connections and the time; whether it should listen."""
        self.counts[slot], self.seen[slot] = conns, now
        # slices copy the few shared values into lists in one call each
        return may_accept(slot, conns, now, self.used[:], self.counts[:], self.seen[:])
