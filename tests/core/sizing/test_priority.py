"""Updater eligibility and ordering with worked numbers (VPA's updater semantics)."""

from __future__ import annotations

import pytest

from app.core.sizing.priority import (
    ContainerView,
    DisruptionBudget,
    PodPriority,
    ResizeWatch,
    TokenBucket,
    UpdaterSettings,
    changes_qos,
    is_quick_oom,
    pod_priority,
    resize_state,
    update_reason,
)

S = UpdaterSettings()
H = 3600.0


def one(
    request: int | None, target: int, lo: int | None = None, hi: int | None = None
) -> PodPriority:
    requests = {} if request is None else {"cpu": request}
    bounds_lo = {} if lo is None else {"cpu": lo}
    bounds_hi = {} if hi is None else {"cpu": hi}
    return pod_priority([ContainerView("app", requests, {"cpu": target}, bounds_lo, bounds_hi)])


def test_request_2_target_10_is_a_scale_up_of_4() -> None:
    p = one(2, 10)
    assert p.resource_diff == pytest.approx(4.0)
    assert p.scale_up


def test_request_4_target_2_differs_by_half() -> None:
    p = one(4, 2)
    assert p.resource_diff == pytest.approx(0.5)
    assert not p.scale_up


def test_two_containers_are_summed() -> None:
    p = pod_priority(
        [ContainerView("a", {"cpu": 1}, {"cpu": 4}), ContainerView("b", {"cpu": 2}, {"cpu": 8})]
    )
    assert p.resource_diff == pytest.approx(3.0)  # |3 - 12| / 3


def test_resources_add_up() -> None:
    p = pod_priority(
        [ContainerView("a", {"cpu": 100, "memory": 1000}, {"cpu": 150, "memory": 500})]
    )
    assert p.resource_diff == pytest.approx(0.5 + 0.5)


def test_outside_range_and_missing_request() -> None:
    assert one(100, 200, lo=150, hi=400).outside_range
    assert one(500, 200, lo=150, hi=400).outside_range
    assert not one(200, 250, lo=150, hi=400).outside_range
    missing = one(None, 200)
    assert missing.outside_range and missing.scale_up
    assert missing.resource_diff == pytest.approx(199.0)  # against a request of 1


def test_order_scale_ups_first_then_larger_differences() -> None:
    pods = {
        "down-big": one(10, 1),
        "up-small": one(10, 11),
        "up-big": one(1, 10),
        "down-small": one(10, 8),
    }
    ordered = sorted(pods, key=lambda k: pods[k].sort_key())
    assert ordered == ["up-big", "up-small", "down-big", "down-small"]


@pytest.mark.parametrize(
    ("priority", "age", "quick_oom", "expected"),
    [
        (PodPriority(True, True, 0.05), 60.0, False, "request outside the recommended range"),
        (PodPriority(False, True, 0.5), 11 * H, False, None),  # too young
        (PodPriority(False, True, 0.5), 12 * H, False, "requests differ from the target by 50%"),
        (PodPriority(False, False, 0.09), 48 * H, False, None),  # too small a change
        (PodPriority(False, True, 0.2), 60.0, True, "OOM-killed soon after start"),
        (PodPriority(False, False, 0.0), 60.0, True, None),  # nothing would change
    ],
)
def test_update_reason(
    priority: PodPriority, age: float, quick_oom: bool, expected: str | None
) -> None:
    assert update_reason(priority, 1000.0, 1000.0 + age, quick_oom, S) == expected


def test_unknown_start_is_never_old_enough() -> None:
    assert update_reason(PodPriority(False, True, 5.0), None, 1e9, False, S) is None


def test_quick_oom() -> None:
    assert is_quick_oom(0.0, 599.0, "OOMKilled", S)
    assert not is_quick_oom(0.0, 601.0, "OOMKilled", S)
    assert not is_quick_oom(0.0, 10.0, "Error", S)


@pytest.mark.parametrize(("replicas", "allowed"), [(3, 1), (4, 2), (10, 5), (1, 0)])
def test_tolerance_half(replicas: int, allowed: int) -> None:
    budget = DisruptionBudget(configured=replicas, running=replicas)
    done = 0
    while budget.can_disrupt(pending=False) and done < 100:
        budget.record(pending=False)
        done += 1
    expected = allowed if allowed else 1  # rounds to zero: one pod when all are running
    assert done == expected


def test_zero_tolerance_needs_every_replica_running() -> None:
    assert not DisruptionBudget(configured=3, running=2, tolerance=0.0).can_disrupt(pending=False)
    b = DisruptionBudget(configured=3, running=3, tolerance=0.0)
    assert b.can_disrupt(pending=False)
    b.record(pending=False)
    assert not b.can_disrupt(pending=False)


def test_degraded_owner_only_replaces_pending_pods() -> None:
    b = DisruptionBudget(configured=4, running=2)  # must keep 2 running; has 2
    assert not b.can_disrupt(pending=False)
    assert b.can_disrupt(pending=True)


class Clock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_token_bucket_burst_then_rate() -> None:
    clock = Clock()
    bucket = TokenBucket(rate=0.5, burst=3, clock=clock)  # one every 2 s, three at once
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]
    clock.t += 1.0  # half a token
    assert not bucket.take()
    clock.t += 1.0
    assert bucket.take()
    assert not bucket.take()
    clock.t += 100.0  # refills up to the burst, never beyond
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]


def test_token_bucket_rate_zero_is_no_limit() -> None:
    bucket = TokenBucket(rate=0.0, burst=1, clock=Clock())
    assert all(bucket.take() for _ in range(1000))


def test_token_bucket_clock_going_back_adds_nothing() -> None:
    clock = Clock()
    bucket = TokenBucket(rate=1.0, burst=1, clock=clock)
    assert bucket.take()
    clock.t -= 50.0
    assert not bucket.take()


@pytest.mark.parametrize(
    ("pending", "in_progress", "applied", "state"),
    [
        ("Infeasible", False, True, "Infeasible"),
        ("Deferred", True, False, "Deferred"),
        (None, True, True, "InProgress"),
        (None, False, True, "Done"),
        (None, False, False, "Requested"),  # a stale view of the pod is no success
    ],
)
def test_resize_state(pending: str | None, in_progress: bool, applied: bool, state: str) -> None:
    assert resize_state(pending, in_progress, applied) == state


def test_resize_infeasible_falls_back_at_once() -> None:
    w = ResizeWatch()
    w.requested("u", 0.0, {"before": {}})
    assert w.observe("u", "Infeasible", 1.0) == "Infeasible"
    assert w.details["u"] == {"before": {}}


def test_resize_deferred_falls_back_after_five_minutes_in_that_state() -> None:
    w = ResizeWatch()
    w.requested("u", 0.0)
    assert w.observe("u", "Requested", 100.0) is None
    assert w.observe("u", "Deferred", 200.0) is None  # Deferred since 200
    assert w.observe("u", "Deferred", 500.0) is None  # 300 s: not more than 5 min
    assert w.observe("u", "Deferred", 500.5) == "Deferred"


def test_resize_in_progress_falls_back_after_an_hour_and_state_changes_restart_the_clock() -> None:
    w = ResizeWatch()
    w.requested("u", 0.0)
    assert w.observe("u", "Deferred", 0.0) is None
    assert w.observe("u", "InProgress", 299.0) is None  # left Deferred in time
    assert w.observe("u", "InProgress", 299.0 + 3600.0) is None
    assert w.observe("u", "InProgress", 299.0 + 3601.0) == "InProgress"


def test_resize_done_is_forgotten_and_unknown_pods_are_ignored() -> None:
    w = ResizeWatch()
    w.requested("u", 0.0)
    assert w.observe("u", "Done", 10.0) is None
    assert "u" not in w
    assert w.observe("u", "Infeasible", 20.0) is None  # not ours any more
    w.requested("a", 0.0)
    w.requested("b", 0.0)
    w.keep_only({"b"})
    assert "a" not in w and "b" in w


def test_changes_qos() -> None:
    guaranteed = {
        "app": {"requests": {"cpu": 500, "memory": 100}, "limits": {"cpu": 500, "memory": 100}}
    }
    # RequestsOnly lowering the request under the limit: Guaranteed -> Burstable
    assert changes_qos(guaranteed, {"app": {"requests": {"cpu": 200}, "limits": {}}}) == (
        "Guaranteed",
        "Burstable",
    )
    # RequestsAndLimits moving both together keeps it Guaranteed
    same = {"app": {"requests": {"cpu": 200}, "limits": {"cpu": 200}}}
    assert changes_qos(guaranteed, same) is None
    burstable = {"app": {"requests": {"cpu": 500}, "limits": {}}}
    assert changes_qos(burstable, {"app": {"requests": {"cpu": 200}, "limits": {}}}) is None
    best_effort: dict[str, dict[str, dict[str, int]]] = {"app": {"requests": {}, "limits": {}}}
    assert changes_qos(best_effort, {"app": {"requests": {"cpu": 200}, "limits": {}}}) == (
        "BestEffort",
        "Burstable",
    )


def test_a_surge_never_disrupts_more_than_the_tolerance() -> None:
    """Replicas 4, tolerance 0.5, 5 ready pods mid-rollout: 2 disruptions, not 3."""
    b = DisruptionBudget(configured=4, running=5)
    done = 0
    while b.can_disrupt(pending=False, ready=True) and done < 10:
        b.record(pending=False, ready=True)
        done += 1
    assert done == 2


def test_unready_pods_count_as_unavailable() -> None:
    # 4 wanted, 3 ready: one ready pod may go (leaves 2 = 4 - 2), then only the unready one.
    b = DisruptionBudget(configured=4, running=3)
    assert b.can_disrupt(pending=False, ready=True)
    b.record(pending=False, ready=True)
    assert not b.can_disrupt(pending=False, ready=True)
    assert b.can_disrupt(pending=False, ready=False)
    b.record(pending=False, ready=False)
    assert not b.can_disrupt(pending=False, ready=False)  # the cap: 2 per run


def test_qos_counts_init_containers_and_pod_level_resources() -> None:
    from app.core.sizing.qos import pod_qos

    g = {"requests": {"cpu": 500, "memory": 100}, "limits": {"cpu": 500, "memory": 100}}
    plain: dict[str, dict[str, int]] = {"requests": {}, "limits": {}}
    assert pod_qos([g]) == "Guaranteed"
    assert pod_qos([g, plain]) == "Burstable"  # an init container without resources
    assert pod_qos([plain], pod_level=g) == "Guaranteed"
    lowered = {"app": {"requests": {"cpu": 200}, "limits": {}}}
    assert changes_qos({"app": g}, lowered, others=[plain]) is None  # Burstable stays
    assert changes_qos({"app": g}, lowered) == ("Guaranteed", "Burstable")


def test_known_resize_refusals_by_release() -> None:
    from app.core.sizing.resize_rules import ResizeCheck, known_refusal

    down = [ResizeCheck("app", 2 * 1024**3, 1024**3)]
    assert "1.33 refuses to lower the memory limit of container app" in str(known_refusal(33, down))
    # 1.34 allows decreases and additions (PR 133012; v1.34.4's validateContainerResize)
    assert known_refusal(34, down) is None
    assert known_refusal(35, down) is None
    assert known_refusal(None, down) is None  # unknown release: the API server decides
    assert known_refusal(33, [ResizeCheck("app", 2, 1, "RestartContainer")]) is None
    assert "add a memory limit" in str(known_refusal(33, [ResizeCheck("app", None, 1)]))
    assert known_refusal(34, [ResizeCheck("app", None, 1)]) is None


def test_a_pod_level_resize_that_changes_the_class_is_seen() -> None:
    """Pod-level values decide the class when set (KEP-2837): a pod-level request raised to its
    limit makes the pod Guaranteed, which ValidatePodResize refuses."""
    app: dict[str, dict[str, dict[str, int]]] = {"app": {"requests": {}, "limits": {}}}
    level = {"requests": {"cpu": 500, "memory": 100}, "limits": {"cpu": 1000, "memory": 100}}
    to_limit = {"requests": {"cpu": 1000}, "limits": {}}
    assert changes_qos(app, {}, (), level, to_limit) == ("Burstable", "Guaranteed")
    kept = {"requests": {"cpu": 400}, "limits": {"cpu": 800}}
    assert changes_qos(app, {}, (), level, kept) is None
