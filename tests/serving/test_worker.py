"""app.serving.worker: what the worker changes in gunicorn's gthread worker besides the gate
(tests/serving/test_balanced_workers.py runs it in real `rightsizer serve`)."""

from __future__ import annotations

import errno
import threading
import time

from app.serving.accept_gate import HAND_OVER_SECONDS, AcceptGate
from app.serving.worker import GATE_POLL_SECONDS, NOTIFY_SECONDS, BalancedThreadWorker


class Heartbeats:
    def __init__(self) -> None:
        self.count = 0

    def notify(self) -> None:
        self.count += 1


def test_a_worker_tells_the_master_it_lives_once_a_second_not_on_every_turn() -> None:
    worker = BalancedThreadWorker.__new__(BalancedThreadWorker)  # no sockets: only notify runs
    worker._notified = float("-inf")
    worker.tmp = beats = Heartbeats()  # what gunicorn's Worker.notify touches
    for _ in range(1000):
        worker.notify()
    assert beats.count == 1
    worker._notified -= NOTIFY_SECONDS
    worker.notify()
    assert beats.count == 2


class Poller:
    def __init__(self) -> None:
        self.timeouts: list[float | None] = []

    def select(self, timeout: float | None = None) -> list[object]:
        self.timeouts.append(timeout)
        return []


def test_a_worker_not_listening_looks_at_the_gate_again_within_milliseconds() -> None:
    worker = BalancedThreadWorker.__new__(BalancedThreadWorker)
    worker.poller = poller = Poller()
    worker.alive = True
    worker._accepting = True  # listening: gunicorn's own wait (an event, or a second)
    worker.wait_for_and_dispatch_events(1.0)
    worker._accepting = False  # another worker holds fewer: look again soon
    worker.wait_for_and_dispatch_events(1.0)
    worker.alive = False  # stopping: no gate to look at
    worker.wait_for_and_dispatch_events(1.0)
    assert poller.timeouts == [1.0, GATE_POLL_SECONDS, 1.0]


def test_a_crowded_worker_closes_one_connection_at_a_time_after_its_answer() -> None:
    """While it holds two more connections than another live worker, one answer in each
    HAND_OVER_SECONDS says Connection: close (the request's must_close); none once even."""
    gate = AcceptGate(2)
    a, b = gate.claim(), gate.claim()
    assert (a, b) == (0, 1)
    worker = BalancedThreadWorker.__new__(BalancedThreadWorker)
    worker.gate, worker.gate_slot, worker.alive = gate, a, True
    worker._conns, worker._handed_over, worker._hand_over = 6, float("-inf"), threading.Lock()
    gate.look(a, 6, 0.0)
    gate.look(b, 1, time.monotonic())  # b holds 1, looked just now
    assert worker._hands_over()
    assert not worker._hands_over()  # not again within HAND_OVER_SECONDS
    worker._handed_over -= HAND_OVER_SECONDS
    assert worker._hands_over()
    worker._handed_over -= HAND_OVER_SECONDS
    worker._conns = 2  # within one of b: even enough
    assert not worker._hands_over()
    worker._conns, worker.alive = 6, False  # stopping: gunicorn closes its connections itself
    assert not worker._hands_over()


class Request:
    def __init__(self, number: int) -> None:
        self.req_number, self.must_close = number, False


def test_a_connection_is_not_closed_to_even_out_at_its_first_answer(monkeypatch) -> None:
    """A connection opened again after a hand-over may still reach the crowded worker (it
    listened when its turn began): closing it at its first answer would bounce it. Failed
    before: under load (a quarter of a second between its accept and its first request),
    tests/serving/test_balanced_workers.py saw a new connection's first answer say close."""
    from gunicorn.workers.gthread import ThreadWorker

    monkeypatch.setattr(ThreadWorker, "handle_request", lambda self, req, conn: True)
    gate = AcceptGate(2)
    a, b = gate.claim(), gate.claim()
    worker = BalancedThreadWorker.__new__(BalancedThreadWorker)
    worker.gate, worker.gate_slot, worker.alive = gate, a, True
    worker._conns, worker._handed_over, worker._hand_over = 6, float("-inf"), threading.Lock()
    gate.look(b, 1, time.monotonic())
    first, second = Request(1), Request(2)
    worker.handle_request(first, None)
    assert not first.must_close
    worker.handle_request(second, None)
    assert second.must_close


class Listener:
    def __init__(self) -> None:
        self.accepted = 0

    def accept(self) -> tuple[object, object]:
        self.accepted += 1
        raise BlockingIOError(errno.EAGAIN, "no connection")  # ignored by accept


class Registrations:
    def __init__(self) -> None:
        self.unregistered: list[object] = []

    def unregister(self, listener: object) -> None:
        self.unregistered.append(listener)


def test_a_worker_takes_a_connection_only_if_the_gate_says_so_at_that_moment() -> None:
    """Failed before: a worker that listened when its loop's turn began accepted even after
    another worker had become the one holding fewest."""
    gate = AcceptGate(2)
    a, b = gate.claim(), gate.claim()
    worker = BalancedThreadWorker.__new__(BalancedThreadWorker)
    worker.gate, worker.gate_slot, worker.alive, worker._conns = gate, a, True, 3
    worker._cap, worker._accepting = 1000, True
    worker.poller, listener = Registrations(), Listener()
    worker.sockets = [listener]
    gate.look(b, 1, time.monotonic())  # b holds fewer now
    worker.accept(listener)
    assert listener.accepted == 0 and not worker._accepting
    assert worker.poller.unregistered == [listener]
    gate.look(b, 3, time.monotonic())  # a tie: both listen
    worker.accept(listener)
    assert listener.accepted == 1
