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

A split made while a worker could not take connections (still booting: it is counted from its
first look; stuck; or stopped by the kernel's scheduler) would still last as long as those
connections, and kube-apiserver keeps a busy one open indefinitely. So a worker holding at least
two more connections than another live worker answers its next request with `Connection: close`
(`should_hand_over`; app.serving.worker), at most one every HAND_OVER_SECONDS: the client opens
the connection again, the gate sends it to the worker holding fewer, and the split evens out
without a request being cut off (the client is told before it sends another on that
connection). Measured: 8 connections opened as a new server came up went all to one worker in
3 of 4 starts.

`may_accept` and `should_hand_over` are the whole rule, free of I/O.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence

# A worker's loop looks at least once a second (gunicorn's gthread: select with a 1 s timeout).
STALE_SECONDS = 3.0
# A worker hands one connection over at most this often: the one it closed is opened again and
# taken by the other worker (whose count then grows) before the next is judged.
HAND_OVER_SECONDS = 0.25
NEVER = float("-inf")  # a slot's last look before its worker's first, and after its last


def fewest_other(
    slot: int, now: float, used: Sequence[int], counts: Sequence[int], seen: Sequence[float]
) -> int | None:
    """The fewest connections any other live worker (slot in use, looked within STALE_SECONDS of
    `now`) holds; None when there is none."""
    live = [
        counts[other]
        for other, in_use in enumerate(used)
        if in_use and other != slot and now - seen[other] <= STALE_SECONDS
    ]
    return min(live, default=None)


def may_accept(
    slot: int,
    conns: int,
    now: float,
    used: Sequence[int],
    counts: Sequence[int],
    seen: Sequence[float],
) -> bool:
    """Whether the worker in `slot`, holding `conns` connections, should listen for more: no other
    live worker holds fewer. Ties listen."""
    fewest = fewest_other(slot, now, used, counts, seen)
    return fewest is None or fewest >= conns


def should_hand_over(
    slot: int,
    conns: int,
    now: float,
    used: Sequence[int],
    counts: Sequence[int],
    seen: Sequence[float],
) -> bool:
    """Whether the worker in `slot`, holding `conns` connections, should close one after its
    answer: another live worker holds at least two fewer (moving one connection then leaves both
    within one of each other; a difference of one would only move the imbalance)."""
    fewest = fewest_other(slot, now, used, counts, seen)
    return fewest is not None and fewest + 2 <= conns


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

    def crowded(self, slot: int, conns: int, now: float) -> bool:
        """should_hand_over for this worker (read only: its look publishes its count)."""
        return should_hand_over(slot, conns, now, self.used[:], self.counts[:], self.seen[:])
