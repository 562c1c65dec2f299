"""Savings over the real pods of a workload (app.core.savings), and their price."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.pods import ContainerResources
from app.core.savings import (
    HOURS_PER_MONTH,
    PodRequests,
    PodsSeen,
    Prices,
    Savings,
    container_savings,
    pod_requests,
    total,
)

MI, GI = 2**20, 2**30


def test_frontends_pods_at_1gi_250mi_250mi_save_what_each_pod_frees() -> None:
    """The issue's frontend: one pod resized to 1Gi, two at 250Mi, recommended 200Mi. Taking one
    pod's request (250Mi) times 3 replicas says 150Mi; the pods really free 924Mi."""
    pods = pod_requests([(1000, GI), (250, 250 * MI), (250, 250 * MI)])
    assert pods == PodRequests(3, 1500, GI + 500 * MI, 250, 250 * MI)
    assert not pods.uniform
    s = container_savings(pods.cpu, pods.memory, pods.pods, (100, 200 * MI))
    assert s == Savings(900 + 150 + 150, (GI - 200 * MI) + 2 * (50 * MI))
    assert s.memory == 924 * MI
    one_pod_times_replicas = 3 * ((pods.typical_memory or 0) - 200 * MI)
    assert one_pod_times_replicas == 150 * MI != s.memory


def test_a_pod_without_a_request_costs_the_whole_target() -> None:
    pods = pod_requests([(None, None), (500, None)])
    assert (pods.pods, pods.cpu, pods.memory) == (2, 500, 0)
    assert (pods.typical_cpu, pods.typical_memory) == (500, None)
    s = container_savings(pods.cpu, pods.memory, pods.pods, (100, 64 * MI))
    assert s == Savings(500 - 200, -128 * MI)  # negative: under-provisioned


def test_the_typical_request_is_the_most_common_and_the_largest_among_ties() -> None:
    assert pod_requests([(1, 5), (2, 5), (2, 6)]).typical_cpu == 2
    assert pod_requests([(1, 5), (2, 6)]).typical_memory == 6
    assert pod_requests([]) == PodRequests(0, 0, 0, None, None)
    assert pod_requests([(3, 7), (3, 7)]).uniform


REQUEST = st.one_of(st.none(), st.integers(0, 10**6))


@given(
    st.lists(st.tuples(REQUEST, REQUEST), max_size=30), st.integers(0, 10**6), st.integers(0, 10**6)
)
def test_savings_are_the_sum_over_pods_of_request_minus_target(
    pods: list[tuple[int | None, int | None]], cpu: int, memory: int
) -> None:
    r = pod_requests(pods)
    s = container_savings(r.cpu, r.memory, r.pods, (cpu, memory))
    assert s.cpu == sum((c or 0) - cpu for c, _ in pods)
    assert s.memory == sum((m or 0) - memory for _, m in pods)
    avg = s.per_pod(r.pods)
    assert abs(avg.cpu * r.pods - s.cpu) < max(r.pods, 1)  # the average, towards zero
    assert abs(avg.cpu) <= abs(s.cpu)  # never more than all pods together


@given(
    st.one_of(
        st.lists(st.tuples(REQUEST, REQUEST), max_size=12),
        # every pod asking the same (pod_requests' shortcut), `None`s included
        st.builds(lambda pair, n: [pair] * n, st.tuples(REQUEST, REQUEST), st.integers(1, 12)),
    )
)
def test_pod_requests_are_sums_and_most_common_requests(
    pods: list[tuple[int | None, int | None]],
) -> None:
    """The sums of the requests set, and the most common of them (the largest among ties; None
    when no pod sets one), however many pods ask the same."""

    def typical(values: list[int]) -> int | None:
        return max(values, key=lambda v: (values.count(v), v)) if values else None

    cpus = [c for c, _ in pods if c is not None]
    memories = [m for _, m in pods if m is not None]
    want = PodRequests(len(pods), sum(cpus), sum(memories), typical(cpus), typical(memories))
    assert pod_requests(pods) == want


def test_totals_add_up_and_convert_to_cores_and_gib() -> None:
    s = total([Savings(1500, GI), Savings(-250, -512 * MI), Savings()])
    assert s == Savings(1250, 512 * MI)
    assert (s.cores, s.gib) == (1.25, 0.5)
    assert Savings(5, 5).per_pod(0) == Savings()


def test_prices_per_hour_and_month() -> None:
    p = Prices(core_hour=0.04, gib_hour=0.005, currency="€")
    s = Savings(2000, 4 * GI)
    assert p.per_hour(s) == pytest.approx(0.08 + 0.02)
    assert p.per_month(s) == pytest.approx(0.1 * HOURS_PER_MONTH)
    assert p.money(73.0) == "€73.00"
    assert p.money(-1234.5) == "-€1,234.50"
    assert p.money(-0.001) == "€0.00"  # no negative zero
    assert [p.rate(r) for r in (0.04, 0.005, 0.0316, 1.0)] == [
        "€0.04",
        "€0.005",
        "€0.0316",
        "€1.00",
    ]


def test_pods_seen_sum_each_containers_requests_over_the_pods_running_it() -> None:
    """A pod counts once whatever how often it is seen (its first resources kept); a container
    is summed over the pods that run it, and a container none runs has no requests."""
    seen = PodsSeen()
    seen.add("web-1", {"app": ContainerResources(100, 64 * MI), "proxy": ContainerResources(10)})
    seen.add("web-2", {"app": ContainerResources(300, 64 * MI)})
    seen.add("web-1", {"app": ContainerResources(999, GI)})  # seen again: the first kept
    assert seen.requests("app") == pod_requests([(100, 64 * MI), (300, 64 * MI)])
    assert seen.requests("proxy") == PodRequests(1, 10, 0, 10, None)
    assert seen.requests("sidecar") is None


def test_pods_seen_sum_again_once_a_pod_is_added() -> None:
    """The sums are kept from one ask to the next (the recommender keeps a workload's PodsSeen
    while its pods stay), and made again once a pod is added: asked before the pod and after,
    the answers are those of the pods at each time."""
    seen = PodsSeen()
    assert seen.requests("app") is None
    seen.add("web-1", {"app": ContainerResources(100, 64 * MI)})
    assert seen.requests("app") == PodRequests(1, 100, 64 * MI, 100, 64 * MI)
    assert seen.requests("app") is seen.requests("app")  # kept, not summed again
    seen.add("web-2", {"app": ContainerResources(300, 64 * MI)})
    assert seen.requests("app") == pod_requests([(100, 64 * MI), (300, 64 * MI)])
