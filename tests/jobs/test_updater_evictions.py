"""Evictions sent a few at a time (app.jobs.evictions) never overshoot a disruption budget.

The updater reserves a workload's budget before each eviction is sent and gives it back when the
eviction fails; these tests inject failures, and check at the moment each eviction reaches the
API server that the evictions in flight plus those that succeeded could all have been made one
at a time within the budget. The sender against a real server: tests/kube/test_eviction_answers.py.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.config import from_environment
from app.core.bodies import EvictionBody
from app.core.pods import PodView
from app.core.sizing.patch import PodPatch
from app.core.sizing.plan import Candidate
from app.core.sizing.priority import DisruptionBudget, PodPriority
from app.core.workload_key import WorkloadKey
from app.jobs.evictions import EvictionSender
from app.jobs.updater import UpdaterJob
from app.kube.actions import Outcome
from tests.support.updater_runs import updater_settings

OUTCOMES = ("done", "blocked", "gone", "failed", "unanswered", "raises")
MAYBE_DONE = ("done", "unanswered", "raises")  # the server evicted it, whatever the answer said


def pod(name: str, pending: bool, ready: bool) -> PodView:
    conditions = [{"type": "Ready", "status": "True"}] if ready else []
    return PodView.parse(
        {
            "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
            "spec": {"nodeName": "node-1", "containers": [{"name": "app"}]},
            "status": {"phase": "Pending" if pending else "Running", "conditions": conditions},
        }
    )


class Answer:
    """A fake SentEviction: the server has the request; `outcome()` reads its answer."""

    def __init__(self, server: FlakyServer | None, name: str, outcome: str) -> None:
        self.server, self.name, self._outcome = server, name, outcome
        self.read = self.abandoned = False

    def outcome(self) -> Any:
        assert not self.read and not self.abandoned, "an answer is read once"
        self.read = True
        if self.server is not None:
            self.server.answered(self.name, self._outcome)
        if self._outcome == "raises":
            raise RuntimeError("connection reset")
        return self._outcome

    def abandon(self) -> None:
        self.abandoned = True


class FlakyServer:
    """PodActions' send_eviction, answering each pod as told; it checks, as each eviction
    arrives, that what is in flight or done could have been done one at a time."""

    dry_run = True

    def __init__(self, outcomes: dict[str, str], budgets: dict[str, tuple[int, int, float]]):
        self.outcomes, self.budgets = outcomes, budgets
        self.in_flight: dict[str, PodView] = {}
        self.done: dict[str, PodView] = {}
        self.most = 0
        self.violations: list[str] = []
        self.pods: dict[str, PodView] = {}

    def send_eviction(self, body: EvictionBody) -> Answer:
        self.in_flight[body.name] = self.pods[body.name]
        self.most = max(self.most, len(self.in_flight))
        self._check(body.name.split("-")[0])
        return Answer(self, body.name, self.outcomes[body.name])

    def answered(self, name: str, outcome: str) -> None:
        p = self.in_flight.pop(name)
        if outcome in MAYBE_DONE:  # an answer lost after the server evicted the pod, at worst
            self.done[name] = p

    def record_event(self, *args: Any) -> None:
        pass  # a dry run records none

    def _check(self, workload: str) -> None:
        configured, running, tolerance = self.budgets[workload]
        fresh = DisruptionBudget(configured, running, tolerance)
        taken = [
            p
            for name, p in [*self.done.items(), *self.in_flight.items()]
            if name.split("-")[0] == workload
        ]
        for p in taken:
            pending = not p.is_running
            if not fresh.can_disrupt(pending, p.is_ready):
                self.violations.append(f"{workload}: {len(taken)} taken")
                return
            fresh.record(pending, p.is_ready)


pods_st = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c"]),  # workload
        st.booleans(),  # pending
        st.booleans(),  # ready (when running)
        st.sampled_from(OUTCOMES),
    ),
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(
    drawn=pods_st,
    in_flight=st.integers(1, 8),
    configured=st.integers(1, 6),
    tolerance=st.sampled_from([0.0, 0.25, 0.5, 1.0]),
)
def test_concurrent_evictions_never_exceed_the_budget(
    drawn: list[tuple[str, bool, bool, str]], in_flight: int, configured: int, tolerance: float
) -> None:
    names = [f"{w}-{i}" for i, (w, *_) in enumerate(drawn)]
    views = {
        n: pod(n, pending, ready) for n, (_, pending, ready, _) in zip(names, drawn, strict=True)
    }
    running = {
        w: sum(views[n].is_ready for n in names if n.startswith(w + "-")) for w in ("a", "b", "c")
    }
    budgets = {w: DisruptionBudget(configured, running[w], tolerance) for w in running}
    server = FlakyServer(
        {n: outcome for n, (*_, outcome) in zip(names, drawn, strict=True)},
        {w: (configured, running[w], tolerance) for w in running},
    )
    server.pods = views
    job = UpdaterJob(
        None,  # no database: a dry run writes nothing
        None,
        server,  # type: ignore[arg-type]
        updater_settings(from_environment({}), dry_run=True, evictions_in_flight=in_flight),
        lambda: True,
    )
    sent = []
    with job.sender:  # as run_once: the loop admits by the budget, _evict reserves it
        for n in names:
            p, w = views[n], n.split("-")[0]
            c = Candidate(
                p,
                WorkloadKey("ns", "Deployment", w),
                PodPriority(True, True, 1.0),
                "test",
                PodPatch((), "test"),
                not p.is_running,
            )
            if budgets[w].can_disrupt(c.pending, p.is_ready):
                job._evict(c, budgets[w])
                sent.append(n)
    assert server.violations == []
    assert server.most <= in_flight
    succeeded = [n for n in sent if server.outcomes[n] == "done"]
    maybe = [n for n in sent if server.outcomes[n] in MAYBE_DONE]
    assert job.tally.updated == len(succeeded)
    assert job.tally.unanswered == len(maybe) - len(succeeded)
    assert job.tally.held == len(sent) - len(maybe)
    for w, budget in budgets.items():  # every failed eviction gave its reservation back
        mine = [views[n] for n in maybe if n.startswith(w + "-") and views[n].is_running]
        assert budget.disrupted == len(mine)
        assert budget.disrupted_ready == sum(p.is_ready for p in mine)


def test_one_in_flight_answers_each_before_the_next_is_sent() -> None:
    sent: list[Answer] = []

    def send(body: EvictionBody) -> Answer:
        assert all(a.read for a in sent), "sent before the previous answer was read"
        sent.append(Answer(None, body.name, "done"))
        return sent[-1]

    answers: list[str] = []
    with EvictionSender(send, 1) as sender:
        for name in ("p1", "p2", "p3"):
            sender.submit(EvictionBody("ns", name), answers.append)
            assert len(answers) == len(sent)  # answered before submit returns
    assert [a.name for a in sent] == ["p1", "p2", "p3"]
    assert sender.most_in_flight == 1


def test_answers_are_read_oldest_first_once_the_window_is_full() -> None:
    """Four out before any answer is read; the fifth waits for the oldest's answer; every answer
    is handed over in submission order, in the caller's thread, without a thread of its own."""
    sent: dict[str, Answer] = {}
    me = threading.current_thread()

    def send(body: EvictionBody) -> Answer:
        sent[body.name] = Answer(None, body.name, "blocked" if body.name == "p2" else "done")
        return sent[body.name]

    answers: list[tuple[str, str]] = []
    threads_before = threading.active_count()
    sender = EvictionSender(send, 4)
    for name in ("p1", "p2", "p3", "p4", "p5"):

        def on_answer(outcome: str, name: str = name) -> None:
            assert threading.current_thread() is me
            answers.append((name, outcome))

        sender.submit(EvictionBody("ns", name), on_answer)
        if name == "p4":
            assert answers == [] and not any(a.read for a in sent.values())
        assert threading.active_count() == threads_before
    assert answers == [("p1", "done")]  # p5 needed room: the oldest was read
    sender.finish()
    assert answers == [
        (n, "blocked" if n == "p2" else "done") for n in ("p1", "p2", "p3", "p4", "p5")
    ]
    assert sender.most_in_flight == 4


@pytest.mark.parametrize("where", ["send", "outcome"])
def test_an_error_while_sending_is_a_failed_eviction_while_reading_unanswered(where: str) -> None:
    def send(body: EvictionBody) -> Any:
        if where == "send":
            raise ValueError("bad request")
        return Answer(None, body.name, "raises")

    answers: list[str] = []
    with EvictionSender(send, 2) as sender:
        sender.submit(EvictionBody("ns", "p1"), answers.append)
        sender.submit(EvictionBody("ns", "p2"), answers.append)
    assert answers == ["failed", "failed"] if where == "send" else ["unanswered", "unanswered"]


def test_an_interrupted_run_drops_what_is_still_out_unread() -> None:
    """A BaseException in the run (an interrupt) leaves the sender without reading the answers
    still out: their connections are closed (abandon), nothing is handed over."""
    sent: list[Answer] = []

    def send(body: EvictionBody) -> Answer:
        sent.append(Answer(None, body.name, "done"))
        return sent[-1]

    answers: list[str] = []
    with pytest.raises(KeyboardInterrupt), EvictionSender(send, 4) as sender:
        sender.submit(EvictionBody("ns", "p1"), answers.append)
        sender.submit(EvictionBody("ns", "p2"), answers.append)
        raise KeyboardInterrupt
    assert answers == []
    assert [(a.read, a.abandoned) for a in sent] == [(False, True), (False, True)]


def answered(answers: list[tuple[str, Outcome]], name: str, outcome: Outcome) -> None:
    answers.append((name, outcome))


def test_one_sender_serves_run_after_run() -> None:
    """The updater keeps its sender for every run: each run's answers are its own, in order."""
    sender = EvictionSender(
        lambda body: Answer(None, body.name, "done" if body.name != "p2" else "gone"), 3
    )
    for _ in range(3):
        answers: list[tuple[str, Outcome]] = []
        with sender:
            for name in ("p1", "p2", "p3", "p4", "p5"):
                sender.submit(EvictionBody("ns", name), functools.partial(answered, answers, name))
        assert answers == [
            (n, "gone" if n == "p2" else "done") for n in ("p1", "p2", "p3", "p4", "p5")
        ]
