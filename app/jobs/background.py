"""A call made in a thread of its own while the caller goes on: the recommender reads the
PodMetrics LIST (tens of MB at scale, most of it a wait on the socket, which releases the
interpreter's lock) while it does what needs the pod cache alone."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

T = TypeVar("T")


def in_background(fn: Callable[[], T], name: str) -> Future[T]:
    """fn() started in a daemon thread named `name`; its result, or the exception it raised,
    is the future's. A daemon thread: a call still waiting on its (time-limited) request when
    the process exits does not hold the exit up."""
    future: Future[T] = Future()
    future.set_running_or_notify_cancel()

    def call() -> None:
        try:
            result = fn()
        except BaseException as e:  # handed to the caller, which re-raises it at result()
            future.set_exception(e)
        else:
            future.set_result(result)

    threading.Thread(target=call, name=name, daemon=True).start()
    return future
