"""Recommendations that fit a node (app/core/sizing/node_fit.py): the largest node a pod may run
on, less its DaemonSets, caps the recommendation, and only when nothing else fits."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.core.nodes import NodeView
from app.core.recommendation import Recommendation
from app.core.resources import Resources
from app.core.sizing.fit import Placement
from app.core.sizing.node_fit import (
    DaemonTemplate,
    cap_to_node,
    daemon_use,
    largest_fit,
    node_rooms,
    share,
)

GI = 1024**3


def node(
    name: str,
    cpu: str,
    memory: str,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    ready: bool = True,
    cordoned: bool = False,
) -> NodeView:
    doc: dict[str, Any] = {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"taints": taints or [], "unschedulable": cordoned},
        "status": {
            "allocatable": {"cpu": cpu, "memory": memory},
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }
    return NodeView.parse(doc)


def rec(cpu: int, memory: int, reason: str = "vpa") -> Recommendation:
    r = Resources(cpu, memory)
    return Recommendation(
        r, Resources(cpu // 2, memory // 2), Resources(cpu * 2, memory * 2), r, reason
    )


NODES = [
    node("small", "2", "4Gi"),
    node("big", "8", "32Gi", labels={"pool": "big"}),
    node("gpu", "64", "256Gi", taints=[{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]),
    node("cordoned", "64", "256Gi", cordoned=True),
    node("down", "64", "256Gi", ready=False),
]


def test_a_target_that_fits_a_node_is_left_as_it_is() -> None:
    recs = {"app": rec(4000, 8 * GI)}
    out, why = cap_to_node(recs, {"app": (1000, GI)}, Placement(), node_rooms(NODES, {}))
    assert out is recs and why is None


def test_a_target_larger_than_every_node_the_pod_may_run_on_is_capped_at_the_largest() -> None:
    # the gpu node is tainted (not tolerated), the others cordoned or not ready: `big` is the most
    recs = {"app": rec(16000, 64 * GI)}
    out, why = cap_to_node(recs, {"app": (1000, GI)}, Placement(), node_rooms(NODES, {}))
    assert out["app"].target == Resources(8000, 32 * GI)
    assert out["app"].upper_bound == Resources(8000, 32 * GI)  # within the target's cap too
    assert out["app"].lower_bound == Resources(8000, 32 * GI)
    assert out["app"].uncapped_target == Resources(16000, 64 * GI)
    assert out["app"].reason == "vpa; capped to fit node big"
    assert why is not None and "capped to node big (cpu 8, memory 32Gi" in why
    assert "cpu 16, memory 64Gi" in why


def test_tolerations_and_node_selector_decide_which_nodes_count() -> None:
    recs = {"app": rec(16000, 64 * GI)}
    tolerating = Placement(tolerations=({"key": "gpu", "operator": "Exists"},))
    out, why = cap_to_node(recs, {}, tolerating, node_rooms(NODES, {}))
    assert out is recs and why is None  # fits the gpu node
    small_only = Placement(node_selector=(("kubernetes.io/hostname", "small"),))
    small = [node("small", "2", "4Gi", labels={"kubernetes.io/hostname": "small"}), *NODES[1:]]
    out, why = cap_to_node(recs, {}, small_only, node_rooms(small, {}))
    assert out["app"].target == Resources(2000, 4 * GI) and "node small" in (why or "")
    nowhere = Placement(node_selector=(("pool", "none"),))
    assert cap_to_node(recs, {}, nowhere, node_rooms(NODES, {})) == (recs, None)


def test_the_placement_is_read_only_for_a_pod_that_may_not_fit_every_node() -> None:
    """The recommender hands the placement as a function: a pod that fits the smallest node
    fits them all, and its spec's placement is not read (most pods of a run)."""
    read: list[str] = []

    def placement(name: str) -> Any:
        def read_it() -> Placement:
            read.append(name)
            return Placement()

        return read_it

    rooms = node_rooms(NODES, {})
    small = {"app": rec(1000, GI)}
    assert cap_to_node(small, {}, placement("small"), rooms) == (small, None)
    out, why = cap_to_node({"app": rec(16000, 64 * GI)}, {}, placement("large"), rooms)
    assert out["app"].target == Resources(8000, 32 * GI) and why is not None
    assert read == ["large"]


def test_daemonsets_take_their_share_of_each_node_they_run_on() -> None:
    agent = DaemonTemplate("kube-system", "agent", Placement(), (500, GI))
    gpu_only = DaemonTemplate(
        "kube-system", "driver", Placement(node_selector=(("pool", "big"),)), (1000, 2 * GI)
    )
    use = daemon_use(NODES, [agent, gpu_only])
    assert use["small"] == {("kube-system", "agent"): (500, GI)}
    assert use["big"] == {
        ("kube-system", "agent"): (500, GI),
        ("kube-system", "driver"): (1000, 2 * GI),
    }
    assert "gpu" not in use  # its taint is not tolerated by DaemonSet pods' own tolerations
    assert "cordoned" in use  # DaemonSet pods tolerate unschedulable
    rooms = {r.name: (r.cpu_free, r.memory_free) for r in node_rooms(NODES, use)}
    assert rooms == {"small": (1500, 3 * GI), "big": (6500, 29 * GI), "gpu": (64000, 256 * GI)}
    # the DaemonSet being sized does not take room from its own pod
    own = {r.name: r.cpu_free for r in node_rooms(NODES, use, ("kube-system", "agent"))}
    assert own["big"] == 7000
    recs = {"app": rec(16000, 64 * GI)}
    out, _ = cap_to_node(recs, {}, Placement(), node_rooms(NODES, use))
    assert out["app"].target == Resources(6500, 29 * GI)


def test_containers_without_a_recommendation_keep_their_requests_and_the_rest_is_shared() -> None:
    recs = {"app": rec(6000, 24 * GI), "cache": rec(6000, 8 * GI)}
    requests = {"app": (1000, GI), "cache": (1000, GI), "sidecar": (2000, 0)}
    out, why = cap_to_node(recs, requests, Placement(), node_rooms(NODES, {}))
    # big: 8 cpu less the sidecar's 2 shared 1:1; 32Gi memory fits (32Gi of 24+8)
    assert out["app"].target == Resources(3000, 24 * GI)
    assert out["cache"].target == Resources(3000, 8 * GI)
    assert why is not None


def test_the_node_keeping_most_of_the_pod_is_chosen() -> None:
    cpu_rich = node("cpu-rich", "32", "8Gi")
    memory_rich = node("memory-rich", "4", "64Gi")
    cap = largest_fit(node_rooms([cpu_rich, memory_rich], {}), Placement(), (16000, 32 * GI))
    # cpu-rich keeps 1 + 1/4, memory-rich 1/4 + 1
    assert cap is not None and cap.node == "cpu-rich"  # a tie: the first name
    cap = largest_fit(node_rooms([cpu_rich, memory_rich], {}), Placement(), (16000, 16 * GI))
    assert cap is not None and cap.node == "cpu-rich"  # 1 + 1/2 against 1/4 + 1


@given(
    st.dictionaries(
        st.sampled_from(["a", "b", "c"]),
        st.tuples(st.integers(0, 10**6), st.integers(0, 2**40)),
        min_size=1,
    ),
    st.tuples(st.integers(0, 10**5), st.integers(0, 2**36)),
    st.tuples(st.integers(0, 2 * 10**6), st.integers(0, 2**41)),
)
def test_shared_targets_fit_the_room_and_never_grow(
    targets: dict[str, tuple[int, int]], fixed: tuple[int, int], room: tuple[int, int]
) -> None:
    out = share(targets, fixed, room)
    for i in (0, 1):
        total = sum(t[i] for t in targets.values())
        got = sum(v[i] for v in out.values())
        assert all(out[n][i] <= targets[n][i] for n in targets)
        if total <= max(room[i] - fixed[i], 0):
            assert all(out[n][i] == targets[n][i] for n in targets)
        else:
            assert got <= max(room[i] - fixed[i], 0)


@given(
    st.lists(
        st.tuples(st.integers(100, 64000), st.integers(GI // 4, 256 * GI)), min_size=1, max_size=6
    ),
    st.tuples(st.integers(0, 128000), st.integers(0, 512 * GI)),
)
def test_a_capped_pod_fits_the_node_it_was_capped_to(
    sizes: list[tuple[int, int]], want: tuple[int, int]
) -> None:
    nodes = [node(f"n{i}", f"{c}m", str(m)) for i, (c, m) in enumerate(sizes)]
    rooms = node_rooms(nodes, {})
    recs = {"app": rec(*want)}
    out, why = cap_to_node(recs, {}, Placement(), rooms)
    fits = [r for r in rooms if want[0] <= r.cpu_free and want[1] <= r.memory_free]
    if fits:
        assert out is recs and why is None
    else:
        t = out["app"].target
        assert any(t.cpu <= r.cpu_free and t.memory <= r.memory_free for r in rooms)
        assert t.cpu <= want[0] and t.memory <= want[1] and why is not None


def test_a_pod_specs_requests_and_a_daemonsets_template_are_read_from_json() -> None:
    from app.core.sizing.node_fit import daemon_template, spec_requests

    spec = {
        "containers": [
            {"name": "app", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}},
            {"name": "bad", "resources": {"requests": {"cpu": "lots"}}},
            {"name": "none"},
            "not-a-container",
        ],
        "initContainers": [
            {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
            {"name": "setup", "resources": {"requests": {"cpu": "4"}}},  # runs before: not counted
        ],
        "nodeSelector": {"pool": "big"},
        "tolerations": [{"key": "gpu", "operator": "Exists"}],
    }
    assert spec_requests(spec) == {
        "app": (500, GI),
        "bad": (0, 0),
        "none": (0, 0),
        "proxy": (1000, 0),
    }
    ds = daemon_template(
        {"metadata": {"namespace": "ops", "name": "agent"}, "spec": {"template": {"spec": spec}}}
    )
    assert ds == DaemonTemplate("ops", "agent", Placement.of(spec), (1500, GI))
    assert daemon_template({"metadata": {"name": "x"}, "spec": {}}) is None
