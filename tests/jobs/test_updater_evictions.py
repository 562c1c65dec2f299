"""Evictions sent a few at a time (app.jobs.evictions) never overshoot a disruption budget.

The updater reserves a workload's budget before each eviction is sent and gives it back when the
eviction fails; these tests inject failures and answers that arrive out of order, and check at
the moment each eviction reaches the API server that the evictions in flight plus those that
succeeded could all have been made one at a time within the budget.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.bodies import EvictionBody
from app.core.pods import PodView
from app.core.recommend.model import WorkloadKey
from app.core.sizing.patch import PodPatch
from app.core.sizing.plan import Candidate
from app.core.sizing.priority import DisruptionBudget, PodPriority
from app.jobs.evictions import EvictionSender
from app.jobs.updater import UpdaterJob, UpdaterOptions

OUTCOMES = ("done", "blocked", "gone", "failed", "raises")


def pod(name: str, pending: bool, ready: bool) -> PodView:
    conditions = [{"type": "Ready", "status": "True"}] if ready else []
    return PodView.parse(
        {
            "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
            "spec": {"nodeName": "node-1", "containers": [{"name": "app"}]},
            "status": {"phase": "Pending" if pending else "Running", "conditions": conditions},
        }
    )


class FlakyServer:
    """PodActions' evict, answering each pod as told after a random short delay; it checks,
    under a lock, that what is in flight or done could have been done one at a time."""

    dry_run = True

    def __init__(self, outcomes: dict[str, str], budgets: dict[str, tuple[int, int, float]]):
        self.outcomes, self.budgets = outcomes, budgets
        self.lock = threading.Lock()
        self.in_flight: dict[str, PodView] = {}
        self.done: dict[str, PodView] = {}
        self.most = 0
        self.violations: list[str] = []
        self.pods: dict[str, PodView] = {}
        self.rng = random.Random(7)

    def evict(self, body: EvictionBody) -> str:
        p = self.pods[body.name]
        with self.lock:
            self.in_flight[body.name] = p
            self.most = max(self.most, len(self.in_flight))
            self._check(body.name.split("-")[0])
            delay = self.rng.random() * 0.002
        time.sleep(delay)  # answers come back in any order
        outcome = self.outcomes[body.name]
        with self.lock:
            del self.in_flight[body.name]
            if outcome == "done":
                self.done[body.name] = p
        if outcome == "raises":
            raise RuntimeError("connection reset")
        return outcome

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
        None,  # type: ignore[arg-type]  # no database: a dry run writes nothing
        None,  # type: ignore[arg-type]
        server,  # type: ignore[arg-type]
        UpdaterOptions(dry_run=True, evictions_in_flight=in_flight),
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
                PodPatch([], (), "test"),
                not p.is_running,
            )
            if budgets[w].can_disrupt(c.pending, p.is_ready):
                job._evict(c, budgets[w])
                sent.append(n)
    assert server.violations == []
    assert server.most <= in_flight
    succeeded = [n for n in sent if server.outcomes[n] == "done"]
    assert job.tally.updated == len(succeeded)
    assert job.tally.held == len(sent) - len(succeeded)
    for w, budget in budgets.items():  # every failed eviction gave its reservation back
        mine = [views[n] for n in succeeded if n.startswith(w + "-") and views[n].is_running]
        assert budget.disrupted == len(mine)
        assert budget.disrupted_ready == sum(p.is_ready for p in mine)


def test_one_in_flight_sends_in_the_callers_thread_in_order() -> None:
    seen: list[tuple[str, str]] = []

    def evict(body: EvictionBody) -> Any:
        seen.append((body.name, threading.current_thread().name))
        return "done"

    answers: list[str] = []
    with EvictionSender(evict, 1) as sender:
        for name in ("p1", "p2", "p3"):
            sender.submit(EvictionBody("ns", name), lambda o: answers.append(o))
            assert len(answers) == len(seen)  # answered before submit returns
    me = threading.current_thread().name
    assert seen == [("p1", me), ("p2", me), ("p3", me)]


def test_answers_are_handed_over_in_submission_order_whatever_order_they_arrive_in() -> None:
    release = {name: threading.Event() for name in ("p1", "p2", "p3", "p4")}
    threads: set[str] = set()

    def evict(body: EvictionBody) -> Any:
        threads.add(threading.current_thread().name)
        release[body.name].wait(5)
        return "done" if body.name != "p2" else "blocked"

    answers: list[tuple[str, str]] = []
    sender = EvictionSender(evict, 4)
    for name in ("p1", "p2", "p3", "p4"):

        def on_answer(outcome: str, name: str = name) -> None:
            answers.append((name, outcome))

        sender.submit(EvictionBody("ns", name), on_answer)
    assert answers == []  # four in flight, none answered yet
    for name in ("p4", "p3", "p2", "p1"):  # the server answers the last first
        release[name].set()
    sender.finish()
    assert answers == [("p1", "done"), ("p2", "blocked"), ("p3", "done"), ("p4", "done")]
    assert threading.current_thread().name not in threads
    assert sender.most_in_flight == 4


def test_an_error_while_sending_is_a_failed_eviction() -> None:
    def evict(body: EvictionBody) -> Any:
        raise ValueError("bad answer")

    answers: list[str] = []
    with EvictionSender(evict, 2) as sender:
        sender.submit(EvictionBody("ns", "p1"), answers.append)
    assert answers == ["failed"]


def test_an_interrupt_in_a_sender_thread_is_raised_in_the_callers_thread() -> None:
    """Not an error of the eviction (those are `failed`): a BaseException reaches the caller when
    its answer is handed over, and the sender still ends its threads."""

    def evict(body: EvictionBody) -> Any:
        raise KeyboardInterrupt

    sender = EvictionSender(evict, 2)
    sender.submit(EvictionBody("ns", "p1"), lambda o: None)
    try:
        sender.finish()
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the interrupt was lost")
    assert not [t for t in threading.enumerate() if t.name.startswith("eviction")]


def test_one_sender_serves_run_after_run() -> None:
    """The updater keeps its sender for every run: each run's threads end with it, and the next
    run's answers are its own, in order."""
    sender = EvictionSender(lambda body: "done" if body.name != "p2" else "gone", 3)
    for _ in range(3):
        answers: list[tuple[str, str]] = []
        with sender:
            for name in ("p1", "p2", "p3", "p4", "p5"):
                sender.submit(
                    EvictionBody("ns", name), lambda o, n=name, a=answers: a.append((n, o))
                )
        assert answers == [
            (n, "gone" if n == "p2" else "done") for n in ("p1", "p2", "p3", "p4", "p5")
        ]
        assert not [t for t in threading.enumerate() if t.name.startswith("eviction")]
