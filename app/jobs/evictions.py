"""The updater's evictions, a few in flight at a time (issue 22: 15,750 dry-run evictions one at
a time were 16.7 s of a 42 s profiled run at 150,000 pods, mostly waiting for each answer).

The caller reserves everything an eviction may cost BEFORE it is submitted: the workload's
disruption budget (`DisruptionBudget.record`), the global eviction rate (`TokenBucket.take`) and
the room the pod takes on its node. The answer of each request is handed to the caller's
`on_answer` in the caller's own thread, in the order they were submitted (in `submit` when the
pool is full, or in `finish`), where a failed eviction gives its budget back
(`DisruptionBudget.release`). Budgets are therefore touched by one thread only, and the
evictions in flight are always counted in them: however many are in flight, no more are sent
than one-at-a-time sending could have sent had every one of them succeeded. The client's rate
limiter (app.kube.throttle) still paces every request. The leader check before each eviction
stays: once the lease is lost nothing more is sent, but those already sent (at most `in_flight`)
are answered.

`in_flight` <= 1 sends each eviction in the caller's thread, one at a time, as before.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from app.core.bodies import EvictionBody
from app.kube.actions import Outcome

log = logging.getLogger(__name__)
DEFAULT_IN_FLIGHT = 4  # RIGHTSIZER_UPDATER_EVICTIONS_IN_FLIGHT

Evict = Callable[[EvictionBody], Outcome]
OnAnswer = Callable[[Outcome], None]


class EvictionSender:
    """Sends evictions through `evict`, at most `in_flight` at once; see the module docstring.
    Use it as a context manager around one run: leaving it waits for every answer."""

    def __init__(self, evict: Evict, in_flight: int = DEFAULT_IN_FLIGHT) -> None:
        self.evict, self.in_flight = evict, max(in_flight, 1)
        self._pool: ThreadPoolExecutor | None = None
        self._pending: deque[tuple[Future[Outcome], OnAnswer]] = deque()
        self.most_in_flight = 0  # the most requests ever in flight at once, for tests and logs

    def __enter__(self) -> EvictionSender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.finish()

    def submit(self, body: EvictionBody, on_answer: OnAnswer) -> None:
        """Sends the eviction (its costs already reserved by the caller); `on_answer(outcome)` is
        called later in this thread. Blocks while `in_flight` requests wait for their answer."""
        if self.in_flight == 1:
            self.most_in_flight = 1
            on_answer(self._send(body))
            return
        while len(self._pending) >= self.in_flight:
            self._answer_oldest()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.in_flight, thread_name_prefix="eviction")
        self._pending.append((self._pool.submit(self._send, body), on_answer))
        self.most_in_flight = max(self.most_in_flight, len(self._pending))

    def finish(self) -> None:
        """Waits for every eviction in flight and hands over its answer; the threads go."""
        try:
            while self._pending:
                self._answer_oldest()
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None

    def _send(self, body: EvictionBody) -> Outcome:
        try:
            return self.evict(body)
        except Exception:  # an unexpected error is a failed eviction: its budget is given back
            log.exception("eviction of %s/%s failed", body.namespace, body.name)
            return "failed"

    def _answer_oldest(self) -> None:
        """Answers are handed over in the order the evictions were submitted, so the audit rows
        and Events of a run come in the same order whatever order the answers arrive in."""
        future, on_answer = self._pending.popleft()
        on_answer(future.result())
