"""The updater's evictions, a few in flight at a time, from the caller's thread (issue 22).

15,750 dry-run evictions one at a time were 16.7 s of a 42 s profiled run at 150,000 pods, mostly
waiting for each answer. Each eviction is now sent at once (PodActions.send_eviction writes the
request on a connection of the client's pool, app.kube.posts) and its answer read only when
`in_flight` requests are out, or at the end of the run: the API server works on a few while the
caller plans the next pods. No thread: sender threads each had to win the GIL back from the
planning thread for every answer, which made an eviction cost 0.57 ms of CPU in the 150,000-pod
run (0.34 ms against the simulator with nothing else running, 0.21 ms sent one at a time);
sent and read later in the caller's thread, 0.12 ms. On a slower machine, 0.12-0.13 ms since the
answers are parsed by httptools (app.kube.http1), where http.client took 0.29-0.32 ms there.

The caller reserves everything an eviction may cost BEFORE it is submitted: the workload's
disruption budget (`DisruptionBudget.record`), the global eviction rate (`TokenBucket.take`) and
the room the pod takes on its node. The answer of each request is handed to the caller's
`on_answer` in the order they were submitted (in `submit` when the window is full, or in
`finish`), where a failed eviction gives its budget back (`DisruptionBudget.release`); one
whose request went out but whose answer was lost (`unanswered`: it may have been done) keeps
it. The evictions in flight are therefore always counted in the budgets: however many are in
flight, no more are sent than one-at-a-time sending could have sent had every one of them
succeeded. The client's rate limiter (app.kube.throttle) paces every request. The leader check
before each eviction stays: once the lease is lost nothing more is sent, but those already sent
(at most `in_flight`) are answered.

`in_flight` <= 1 answers each eviction before `submit` returns, one at a time.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from typing import Protocol

from app.core.bodies import EvictionBody
from app.kube.actions import Outcome

log = logging.getLogger(__name__)
DEFAULT_IN_FLIGHT = 4  # RIGHTSIZER_UPDATER_EVICTIONS_IN_FLIGHT


class Sent(Protocol):
    """An eviction sent, its answer not read yet (app.kube.actions.SentEviction)."""

    def outcome(self) -> Outcome: ...

    def abandon(self) -> None: ...


Send = Callable[[EvictionBody], Sent]
OnAnswer = Callable[[Outcome], None]


class _Failed:
    """An eviction that could not be sent: its outcome is `failed`."""

    def outcome(self) -> Outcome:
        return "failed"

    def abandon(self) -> None:
        pass


class EvictionSender:
    """Sends evictions through `send`, at most `in_flight` unanswered at once; see the module
    docstring. Use it as a context manager around one run: leaving it hands over every answer
    (or, when the run raised, drops the connections of those not read)."""

    def __init__(self, send: Send, in_flight: int = DEFAULT_IN_FLIGHT) -> None:
        self.send, self.in_flight = send, max(in_flight, 1)
        self._out: deque[tuple[EvictionBody, Sent, OnAnswer]] = deque()  # in submission order
        self.most_in_flight = 0  # the most requests ever in flight at once, for tests and logs

    def __enter__(self) -> EvictionSender:
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        if kind is None:
            self.finish()
        else:
            self.abandon()

    def submit(self, body: EvictionBody, on_answer: OnAnswer) -> None:
        """Sends the eviction (its costs already reserved by the caller); `on_answer(outcome)` is
        called later, in this thread. Reads the oldest answers first while `in_flight` requests
        are out."""
        while len(self._out) >= self.in_flight:
            self._answer_oldest()
        try:
            sent = self.send(body)
        except Exception:  # an unexpected error is a failed eviction: its budget is given back
            log.exception("eviction of %s/%s failed", body.namespace, body.name)
            sent = _Failed()
        self._out.append((body, sent, on_answer))
        self.most_in_flight = max(self.most_in_flight, len(self._out))
        if self.in_flight == 1:
            self._answer_oldest()

    def finish(self) -> None:
        """Reads every answer still out and hands it over, in submission order."""
        while self._out:
            self._answer_oldest()

    def abandon(self) -> None:
        """Drops the evictions still out without reading their answers (their connections
        closed): the run was interrupted and nothing will take them."""
        while self._out:
            self._out.popleft()[1].abandon()

    def _answer_oldest(self) -> None:
        body, sent, on_answer = self._out.popleft()
        try:
            outcome = sent.outcome()
        except Exception:  # sent, then no answer: it may have been done
            log.exception("eviction of %s/%s: no answer", body.namespace, body.name)
            outcome = "unanswered"
        on_answer(outcome)
