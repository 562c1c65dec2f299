"""gunicorn's master forks a worker only between certificate checks (app.serving.rotation): a
check imports Kubernetes client modules, and a worker forked while another thread held a module's
import lock hung forever on its first import of that module (test_webhook_e2e's renewed
certificate test: the worker never served)."""

from __future__ import annotations

import threading

from app.serving import rotation


def test_a_fork_waits_for_the_check_in_progress() -> None:
    checking, release = threading.Event(), threading.Event()

    def check() -> None:
        with rotation.CHECKING:
            checking.set()
            release.wait(10)

    checker = threading.Thread(target=check)
    checker.start()
    assert checking.wait(10)
    forked = threading.Event()

    def fork() -> None:
        if rotation.between_checks():
            forked.set()

    forker = threading.Thread(target=fork)
    forker.start()
    forker.join(0.3)
    assert forker.is_alive() and not forked.is_set()  # still waiting for the check
    release.set()
    forker.join(10)
    checker.join(10)
    assert forked.is_set()


def test_a_hung_check_does_not_stop_workers_from_starting() -> None:
    with rotation.CHECKING:
        assert rotation.between_checks(timeout=0.01) is False
    assert rotation.between_checks(timeout=0.01) is True
