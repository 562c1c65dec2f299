"""The updater's evictions, a few in flight at a time (issue 22: 15,750 dry-run evictions one at
a time were 16.7 s of a 42 s profiled run at 150,000 pods, mostly waiting for each answer).

The caller reserves everything an eviction may cost BEFORE it is submitted: the workload's
disruption budget (`DisruptionBudget.record`), the global eviction rate (`TokenBucket.take`) and
the room the pod takes on its node. The answer of each request is handed to the caller's
`on_answer` in the caller's own thread, in the order they were submitted (in `submit` when the
window is full, or in `finish`), where a failed eviction gives its budget back
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
import threading
from collections.abc import Callable
from queue import SimpleQueue

from app.core.bodies import EvictionBody
from app.kube.actions import Outcome

log = logging.getLogger(__name__)
DEFAULT_IN_FLIGHT = 4  # RIGHTSIZER_UPDATER_EVICTIONS_IN_FLIGHT

Evict = Callable[[EvictionBody], Outcome]
OnAnswer = Callable[[Outcome], None]
_STOP = None  # a sender thread's last job


class EvictionSender:
    """Sends evictions through `evict`, at most `in_flight` at once; see the module docstring.
    Use it as a context manager around one run: leaving it waits for every answer.

    Its `in_flight` threads take the evictions from one queue and put each answer on another,
    both C-level `SimpleQueue`s: an eviction costs the caller's thread a put and, when the
    window is full, one get (issue 22: a ThreadPoolExecutor's Future, its Condition and their
    Python-level locks were ~10% of an eviction's client CPU, the GIL shared by all threads)."""

    def __init__(self, evict: Evict, in_flight: int = DEFAULT_IN_FLIGHT) -> None:
        self.evict, self.in_flight = evict, max(in_flight, 1)
        self._threads: list[threading.Thread] = []
        self._jobs: SimpleQueue[tuple[int, EvictionBody] | None] = SimpleQueue()
        self._answers: SimpleQueue[tuple[int, Outcome, BaseException | None]] = SimpleQueue()
        self._waiting: dict[int, OnAnswer] = {}  # submitted, not handed over yet, by number
        self._arrived: dict[int, tuple[Outcome, BaseException | None]] = {}  # out of order
        self._sent = self._handed = 0  # evictions numbered in the order they were submitted
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
        while self._sent - self._handed >= self.in_flight:
            self._answer_oldest()
        if not self._threads:
            self._start()
        self._waiting[self._sent] = on_answer
        self._jobs.put((self._sent, body))
        self._sent += 1
        self.most_in_flight = max(self.most_in_flight, self._sent - self._handed)

    def finish(self) -> None:
        """Waits for every eviction in flight and hands over its answer; the threads go."""
        try:
            while self._handed < self._sent:
                self._answer_oldest()
        finally:
            for _ in self._threads:
                self._jobs.put(_STOP)
            for t in self._threads:
                t.join()
            self._threads = []

    def _start(self) -> None:
        for i in range(self.in_flight):
            t = threading.Thread(target=self._serve, name=f"eviction_{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def _serve(self) -> None:
        """A sender thread: each eviction of the queue sent, its answer queued, until _STOP."""
        jobs, answers = self._jobs, self._answers
        while (job := jobs.get()) is not _STOP:
            number, body = job
            try:
                answers.put((number, self._send(body), None))
            except BaseException as e:  # raised again in the caller's thread
                answers.put((number, "failed", e))

    def _send(self, body: EvictionBody) -> Outcome:
        try:
            return self.evict(body)
        except Exception:  # an unexpected error is a failed eviction: its budget is given back
            log.exception("eviction of %s/%s failed", body.namespace, body.name)
            return "failed"

    def _answer_oldest(self) -> None:
        """Answers are handed over in the order the evictions were submitted, so the audit rows
        and Events of a run come in the same order whatever order the answers arrive in. One
        that arrives early waits in `_arrived` for those before it."""
        oldest = self._handed
        while oldest not in self._arrived:
            number, outcome, error = self._answers.get()
            self._arrived[number] = (outcome, error)
        outcome, error = self._arrived.pop(oldest)
        on_answer = self._waiting.pop(oldest)
        self._handed += 1
        if error is not None:
            raise error
        on_answer(outcome)
