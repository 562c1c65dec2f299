"""The pure parts of the simulated cluster's Events: the Event builder and client-go's
EventCorrelator (tools/record/events_cache.go), the --event-ttl expiry, the kubelet's messages
and kube-scheduler's FailedScheduling message."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.simulator.apiserver.eventttl import EventExpiry
from app.simulator.apiserver.resources import EVENT
from app.simulator.apiserver.store import Store
from app.simulator.control.events import (
    COMBINED_PREFIX,
    EventCorrelator,
    Source,
    container_field_path,
    make_event,
    node_reference,
    object_reference,
)
from app.simulator.control.kubelet_events import format_pod, pull_occurrences
from app.simulator.control.scheduler import fit_error

T0 = 1_750_000_000.0
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web-1", "namespace": "shop", "uid": "u-1", "resourceVersion": "42"},
    "spec": {"containers": [{"name": "app"}], "initContainers": [{"name": "init"}]},
}
RS = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "metadata": {"name": "web-5d9c", "namespace": "shop", "uid": "u-rs"},
}
CONTROLLER = Source("replicaset-controller")


def _event(message: str, at: float, nanos: int, obj: dict[str, Any] = RS) -> dict[str, Any]:
    return make_event(
        object_reference(obj), "Normal", "SuccessfulCreate", message, CONTROLLER, at, nanos
    )


# --- the builder --------------------------------------------------------------------------------


def test_an_event_is_named_and_placed_as_the_recorder_does() -> None:
    ref = object_reference(POD, container_field_path(POD, "app"))
    event = make_event(
        ref, "Normal", "Started", "Started container app", Source("kubelet", "n1"), T0, 0x18
    )
    assert event["metadata"] == {"name": "web-1.18", "namespace": "shop"}
    assert event["involvedObject"] == {
        "kind": "Pod",
        "namespace": "shop",
        "name": "web-1",
        "uid": "u-1",
        "apiVersion": "v1",
        "resourceVersion": "42",
        "fieldPath": "spec.containers{app}",
    }
    assert event["source"] == {"component": "kubelet", "host": "n1"}
    assert (event["reportingComponent"], event["reportingInstance"]) == ("kubelet", "n1")
    assert event["firstTimestamp"] == event["lastTimestamp"] == "2025-06-15T15:06:40Z"
    assert event["count"] == 1 and event["eventTime"] is None


def test_a_cluster_scoped_object_s_event_goes_to_default_and_a_controller_has_no_host() -> None:
    event = make_event(node_reference("n1"), "Normal", "X", "m", Source("node-controller"), T0, 1)
    assert event["metadata"]["namespace"] == "default"
    assert event["involvedObject"] == {"kind": "Node", "name": "n1", "uid": "n1"}
    assert event["source"] == {"component": "node-controller"}
    assert event["reportingInstance"] == ""


def test_init_containers_get_their_own_field_path() -> None:
    assert container_field_path(POD, "init") == "spec.initContainers{init}"


# --- the correlator -----------------------------------------------------------------------------


def test_an_identical_event_bumps_the_count_of_the_first() -> None:
    c = EventCorrelator()
    first = c.correlate(_event("Created pod: a", T0, 1), T0, 2)
    again = c.correlate(_event("Created pod: a", T0 + 30, 3), T0 + 30, 4)
    assert first is not None and again is not None
    assert not first.update and again.update
    assert again.event["metadata"]["name"] == first.event["metadata"]["name"]
    assert again.event["count"] == 2
    assert again.event["firstTimestamp"] == first.event["firstTimestamp"]
    assert again.event["lastTimestamp"] != first.event["lastTimestamp"]


def test_other_sources_and_objects_are_counted_apart() -> None:
    c = EventCorrelator()
    a = c.correlate(_event("m", T0, 1), T0, 2)
    other_object = c.correlate(_event("m", T0, 3, obj=POD), T0, 4)
    other_source = c.correlate(
        make_event(object_reference(RS), "Normal", "SuccessfulCreate", "m", Source("x"), T0, 5),
        T0,
        6,
    )
    assert a and other_object and other_source
    assert not other_object.update and not other_source.update


def test_the_tenth_similar_message_in_ten_minutes_is_combined() -> None:
    c = EventCorrelator()
    results = [
        c.correlate(_event(f"Created pod: p{i}", T0 + i, 10 * i), T0 + i, 10 * i + 1)
        for i in range(12)
    ]
    assert all(r is not None for r in results)
    messages = [r.event["message"] for r in results if r]
    assert messages[:9] == [f"Created pod: p{i}" for i in range(9)]
    assert messages[9] == COMBINED_PREFIX + "Created pod: p9"
    combined = results[9]
    assert combined and not combined.update and combined.event["count"] == 1
    # ... and later similar ones update that aggregate Event
    assert results[10] and results[10].update and results[10].event["count"] == 2
    assert results[11] and results[11].event["message"] == COMBINED_PREFIX + "Created pod: p11"
    assert results[11].event["metadata"]["name"] == combined.event["metadata"]["name"]
    assert results[11].event["count"] == 3


def test_after_ten_quiet_minutes_similar_messages_start_over() -> None:
    c = EventCorrelator()
    for i in range(9):
        c.correlate(_event(f"m{i}", T0, i), T0, 100 + i)
    later = c.correlate(_event("m9", T0 + 601, 200), T0 + 601, 201)
    assert later and later.event["message"] == "m9"


def test_a_source_may_send_25_events_about_an_object_then_one_per_five_minutes() -> None:
    c = EventCorrelator()
    sent = [c.correlate(_event("same", T0, 2 * i), T0, 2 * i + 1) for i in range(30)]
    assert [r is not None for r in sent] == [True] * 25 + [False] * 5
    assert c.correlate(_event("same", T0 + 299, 100), T0 + 299, 101) is None
    refilled = c.correlate(_event("same", T0 + 301, 102), T0 + 301, 103)
    # the dropped occurrences were still counted (eventObserve runs before the filter)
    assert refilled and refilled.event["count"] == 32


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 14), st.sampled_from([0.0, 1.0, 30.0, 700.0])),
        min_size=1,
        max_size=80,
    )
)
def test_every_occurrence_is_counted_once_when_nothing_is_dropped(
    occurrences: list[tuple[int, float]],
) -> None:
    """Without the spam filter, each occurrence creates an Event (count 1) or updates one
    created before with count + 1: the counts written add up to the occurrences."""
    c = EventCorrelator(burst=10**9)
    counts: dict[str, int] = {}
    at = T0
    for i, (message, step) in enumerate(occurrences):
        at += step
        result = c.correlate(_event(f"m{message}", at, 2 * i), at, 2 * i + 1)
        assert result is not None
        name = result.event["metadata"]["name"]
        if result.update:
            assert counts[name] + 1 == result.event["count"]
        else:
            assert name not in counts and result.event["count"] == 1
        counts[name] = result.event["count"]
    assert sum(counts.values()) == len(occurrences)


# --- --event-ttl --------------------------------------------------------------------------------


def test_events_expire_an_hour_after_their_last_write() -> None:
    now = [T0]
    store = Store()
    expiry = EventExpiry(store, lambda: now[0])
    store.create(EVENT, _event("a", T0, 1), "t")
    store.create(EVENT, _event("b", T0, 2), "t")
    now[0] = T0 + 1800

    def bump(e: dict[str, Any]) -> None:
        e["count"] += 1

    store.update(EVENT, "shop", "web-5d9c.2", bump)  # a repeat: a new lease
    now[0] = T0 + 3600
    assert expiry.expire() == 1
    assert [e.obj["message"] for _, e in store.scan(EVENT)[0]] == ["b"]
    now[0] = T0 + 1800 + 3600
    assert expiry.expire() == 1 and store.count(EVENT) == 0 and len(expiry) == 0


# --- the kubelet's and the scheduler's messages -------------------------------------------------


def test_image_pull_events_follow_the_pull_policy() -> None:
    present = {"name": "app", "image": "nginx:1.27", "imagePullPolicy": "IfNotPresent"}
    events, on_node = pull_occurrences(present, True, T0)
    assert [(e.reason, e.message) for e in events] == [
        ("Pulled", 'Container image "nginx:1.27" already present on machine')
    ]
    events, on_node = pull_occurrences(present, False, T0)
    assert [e.reason for e in events] == ["Pulling", "Pulled"] and on_node
    assert re.fullmatch(
        r'Successfully pulled image "nginx:1.27" in 0s \(0s including waiting\)\. '
        r"Image size: \d+ bytes\.",
        events[1].message,
    )
    always = {**present, "imagePullPolicy": "Always"}
    assert [e.reason for e in pull_occurrences(always, True, T0)[0]] == ["Pulling", "Pulled"]


def test_the_kubelet_names_a_pod_name_namespace_uid() -> None:
    assert format_pod(POD) == "web-1_shop(u-1)"


def test_fit_error_sorts_the_histogram_as_strings_and_adds_the_preemption_verdict() -> None:
    reasons = Counter({"Insufficient cpu": 10, "node(s) were unschedulable": 2})
    assert fit_error({"spec": {}}, 12, reasons, 10) == (
        "0/12 nodes are available: 10 Insufficient cpu, 2 node(s) were unschedulable. "
        "preemption: 0/12 nodes are available: 10 No preemption victims found for incoming "
        "pod, 2 Preemption is not helpful for scheduling."
    )
    never = {"spec": {"preemptionPolicy": "Never"}}
    assert fit_error(never, 3, Counter({"Insufficient memory": 3}), 3) == (
        "0/3 nodes are available: 3 Insufficient memory. "
        "preemption: not eligible due to preemptionPolicy=Never."
    )
