"""The observation window's rule (app/core/sizing/observation.py): when the updater holds a
workload back after its own changes, from the changes, the pods and the clock alone."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.core.pods import PodView
from app.core.sizing.observation import (
    MIN_INTERVAL,
    OOM_AFTER_CHANGE,
    TOO_MANY,
    UNREADY_AFTER_CHANGE,
    Change,
    ChangeLedger,
    hold,
    interval_hold,
    recorded_change,
    values_key,
)
from app.core.update_policy import ObservationWindow

T0 = 1_700_000_000.0
A = values_key({"app": {"cpu": 200, "memory": 2**30}})
B = values_key({"app": {"cpu": 400, "memory": 2**30}})


def stamp(t: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod(
    name: str = "web-1",
    ready: bool = True,
    killed_at: float | None = None,
    reason: str = "OOMKilled",
) -> PodView:
    status: dict[str, Any] = {"name": "app", "restartCount": 0, "lastState": {}}
    if killed_at is not None:
        status["restartCount"] = 1
        status["lastState"] = {
            "terminated": {
                "reason": reason,
                "startedAt": stamp(killed_at - 100),
                "finishedAt": stamp(killed_at),
            }
        }
    return PodView.parse(
        {
            "metadata": {"namespace": "shop", "name": name, "uid": name},
            "spec": {"nodeName": "node-1", "containers": [{"name": "app"}]},
            "status": {
                "phase": "Running",
                "startTime": stamp(T0 - 7200),
                "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
                "containerStatuses": [status],
            },
        }
    )


def changes(*times: float, values: str = A) -> list[Change]:
    return [Change(T0 + t, values) for t in times]


W = ObservationWindow(window_seconds=3600, max_replacements_per_replica=2)


def test_no_change_no_hold() -> None:
    assert hold(W, [], [pod(killed_at=T0)], 3, 0.0, T0) is None


def test_more_replacements_than_allowed_per_replica_hold_until_enough_leave_the_window() -> None:
    # 2 replicas, 2 per replica: a fifth replacement in the hour holds the workload
    four = changes(0, 60, 120, 180)
    assert hold(W, four, [pod()], 2, 0.0, T0 + 200) is None
    five = changes(0, 60, 120, 180, 240)
    h = hold(W, five, [pod()], 2, 0.0, T0 + 300)
    assert h is not None and h.reason == TOO_MANY
    assert "5 times in the last 3600s, more than 2 per replica (2 replicas)" in h.message
    # once the first leaves the window, four are left: no hold
    assert h.until == T0 + 3600
    assert hold(W, five, [pod()], 2, 0.0, h.until + 1) is None


def test_an_oom_kill_after_the_last_change_holds_for_the_window() -> None:
    cs = changes(0)
    h = hold(W, cs, [pod(killed_at=T0 + 300)], 3, 0.0, T0 + 400)
    assert h is not None and h.reason == OOM_AFTER_CHANGE
    assert h.until == T0 + 3600 and "web-1" in h.message and "app" in h.message
    # a kill before the change is not the change's doing
    assert hold(W, cs, [pod(killed_at=T0 - 300)], 3, 0.0, T0 + 400) is None


def test_a_restart_after_the_change_holds_only_while_the_pod_is_not_ready() -> None:
    cs = changes(0)
    crashed = pod(ready=False, killed_at=T0 + 30, reason="Error")
    h = hold(W, cs, [crashed], 3, 0.0, T0 + 60)
    assert h is not None and h.reason == UNREADY_AFTER_CHANGE and "Error" in h.message
    recovered = pod(ready=True, killed_at=T0 + 30, reason="Error")
    assert hold(W, cs, [recovered], 3, 0.0, T0 + 60) is None


def test_a_policy_change_resumes_the_workload() -> None:
    cs = changes(0, 10, 20, 30, 40)
    assert hold(W, cs, [pod(killed_at=T0 + 50)], 1, 0.0, T0 + 60) is not None
    assert hold(W, cs, [pod(killed_at=T0 + 50)], 1, T0 + 45, T0 + 60) is None


def test_changes_older_than_the_window_do_not_count() -> None:
    cs = changes(0, 10, 20)
    assert hold(W, cs, [pod(killed_at=T0 + 30)], 1, 0.0, T0 + 3700) is None


def test_min_interval_holds_new_values_and_lets_the_current_change_finish() -> None:
    w = ObservationWindow(min_interval_seconds=1800)
    cs = changes(0, 60)  # two pods updated to A
    assert interval_hold(w, cs, A, 0.0, T0 + 120) is None  # the rest of the rollout of A
    h = interval_hold(w, cs, B, 0.0, T0 + 120)
    assert h is not None and h.reason == MIN_INTERVAL and h.until == T0 + 1800
    assert interval_hold(w, cs, B, 0.0, T0 + 1800) is None
    assert interval_hold(w, [], B, 0.0, T0) is None  # the first change
    assert interval_hold(ObservationWindow(), cs, B, 0.0, T0 + 120) is None  # no interval set
    assert interval_hold(w, cs, B, T0 + 100, T0 + 120) is None  # the policy changed since


def test_a_change_of_the_pod_level_requests_alone_is_a_change_of_values() -> None:
    w = ObservationWindow(min_interval_seconds=1800)
    app = {"requests": {"cpu": 200, "memory": 2**30}, "limits": {}}

    def details(pod_cpu: int) -> dict[str, Any]:
        return {
            "workload": "shop/Deployment/web",
            "after": {"app": app, "spec.resources": {"requests": {"cpu": pod_cpu}, "limits": {}}},
        }

    recorded = recorded_change(details(300), T0)
    assert recorded is not None
    cs = [recorded[1]]
    again = values_key({"app": app["requests"], "spec.resources": {"cpu": 300}})
    moved = values_key({"app": app["requests"], "spec.resources": {"cpu": 600}})
    assert interval_hold(w, cs, again, 0.0, T0 + 60) is None  # the same rollout goes on
    held = interval_hold(w, cs, moved, 0.0, T0 + 60)  # new pod-level values: wait
    assert held is not None and held.reason == MIN_INTERVAL


def test_the_ledger_reads_audit_details_and_leaves_boost_removals_out() -> None:
    details = {
        "workload": "shop/Deployment/web",
        "before": {"app": {"requests": {"cpu": 1000}, "limits": {}}},
        "after": {
            "app": {"requests": {"memory": 2**30, "cpu": 200}, "limits": {}},
            "spec.resources": {"requests": {"cpu": 300}, "limits": {}},
        },
    }
    with_pod_level = values_key(
        {"app": {"cpu": 200, "memory": 2**30}, "spec.resources": {"cpu": 300}}
    )
    assert recorded_change(details, T0) == ("shop/Deployment/web", Change(T0, with_pod_level))
    assert recorded_change({**details, "boost": "removed"}, T0) is None
    assert recorded_change({"after": details["after"]}, T0) is None
    ledger = ChangeLedger()
    assert not ledger.covers(T0)
    ledger.load(T0 - 100, [(T0 + 5, details), (T0, details), (T0 + 1, {"boost": "removed"})])
    assert [c.time for c in ledger.of("shop/Deployment/web")] == [T0, T0 + 5]
    assert ledger.covers(T0) and not ledger.covers(T0 - 200)
    ledger.forget_before(T0 + 1)
    assert [c.time for c in ledger.of("shop/Deployment/web")] == [T0 + 5]
    ledger.forget_before(T0 + 10)
    assert ledger.of("shop/Deployment/web") == [] and ledger.changes == {}


@given(
    st.lists(st.floats(min_value=0, max_value=10_000), max_size=40),
    st.integers(min_value=1, max_value=5),
    st.integers(min_value=1, max_value=4),
    st.integers(min_value=60, max_value=5000),
    st.floats(min_value=0, max_value=20_000),
)
def test_a_replacement_count_hold_lasts_exactly_while_too_many_are_in_the_window(
    offsets: list[float], per_replica: int, replicas: int, window: int, at: float
) -> None:
    w = ObservationWindow(window_seconds=window, max_replacements_per_replica=per_replica)
    cs = sorted(changes(*offsets), key=lambda c: c.time)
    now = T0 + at
    in_window = [c for c in cs if now - window < c.time]
    h = hold(w, cs, [pod()], replicas, 0.0, now)
    too_many = len(in_window) > per_replica * replicas
    assert (h is not None and h.reason == TOO_MANY) == too_many
    if h is not None:
        # at `until` the count is down to the limit, and not before
        assert sum(1 for c in cs if h.until - window < c.time) <= per_replica * replicas
        assert h.until > now - 1e-6
