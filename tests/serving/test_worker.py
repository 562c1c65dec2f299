"""app.serving.worker: what the worker changes in gunicorn's gthread worker besides the gate
(tests/serving/test_balanced_workers.py runs it in real `rightsizer serve`)."""

from __future__ import annotations

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
