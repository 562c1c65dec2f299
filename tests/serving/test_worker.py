"""app.serving.worker: what the worker changes in gunicorn's gthread worker besides the gate
(tests/serving/test_balanced_workers.py runs it in real `rightsizer serve`)."""

from __future__ import annotations

from app.serving.worker import NOTIFY_SECONDS, BalancedThreadWorker


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
