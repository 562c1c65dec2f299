"""shared_key: pods of one template, as the pod cache keeps them (equal parts once), are ranked
from one computed (patch, priority); the answer is the one each pod gets on its own."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.nodes import NodeView
from app.core.policy import Policy
from app.core.sizing.boost import BOOST_ANNOTATION
from app.core.sizing.patch import UPDATES_ANNOTATION
from app.core.sizing.patch_cache import pod_inputs, shared_key
from app.core.sizing.plan import Candidate, PodKeys, node_rooms, workload_candidates
from app.core.sizing.priority import UpdaterSettings
from app.core.update_mode import UpdateMode
from app.core.workload_key import WorkloadKey
from app.kube.cluster import Shared, pod_view
from tests.support.generators import CPU, NAMES, limit_ranges, pods, policies
from tests.support.pods import rec

W = WorkloadKey("shop", "Deployment", "web")
NOW = 1_000_000.0  # 1970-01-12T13:46:40Z
STARTS = [None, "1970-01-01T00:00:00Z", "1970-01-12T13:40:00Z"]  # old, a few minutes ago


def answer(cs: list[Candidate]) -> list[tuple[Any, ...]]:
    return [(c.pod.name, c.priority, c.reason, c.patch, c.pending) for c in cs]


@st.composite
def live_pods(draw: st.DrawFn, bases: list[dict[str, Any]], i: int) -> dict[str, Any]:
    """A pod of one of the templates (sometimes with its first request changed), with its own
    name, phase, readiness and start time, as the API server would send it."""
    p: dict[str, Any] = copy.deepcopy(draw(st.sampled_from(bases)))
    if draw(st.booleans()):
        c = p["spec"]["containers"][0]
        c.setdefault("resources", {}).setdefault("requests", {})["cpu"] = f"{draw(CPU)}m"
    if p["spec"].get("initContainers") and draw(st.booleans()):
        del p["spec"]["initContainers"][0]  # the same containers beside other init containers
    annotation = draw(st.sampled_from([None, "", "{}", '{"app": {"requests": {"cpu": "1m"}}}']))
    if annotation is not None:  # what the webhook wrote on this pod
        p["metadata"].setdefault("annotations", {})[UPDATES_ANNOTATION] = annotation
    boost = draw(st.sampled_from([None, "", "garbage", '{"app": {"requests": {"cpu": "1"}}}']))
    if boost is not None:  # a CPU startup boost (left to its removal while it lasts)
        p["metadata"].setdefault("annotations", {})[BOOST_ANNOTATION] = boost
    p["metadata"].update(name=f"web-{i}", namespace="shop", uid=f"uid-{i}")
    p["spec"]["nodeName"] = "node-1"
    status: dict[str, Any] = {"phase": draw(st.sampled_from(["Running", "Pending"]))}
    start = draw(st.sampled_from(STARTS))
    if start is not None:
        status["startTime"] = start
    if draw(st.booleans()):
        status["conditions"] = [{"type": "Ready", "status": "True"}]
    p["status"] = status
    return p


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_pods_sharing_their_parts_are_ranked_as_each_alone(data: st.DataObject) -> None:
    bases = data.draw(st.lists(pods(), min_size=1, max_size=3))
    raw = [data.draw(live_pods(bases, i)) for i in range(data.draw(st.integers(1, 12)))]
    shared = Shared()
    views = [pod_view(p, shared) for p in raw]  # as the pod cache holds them
    policy: Policy = data.draw(policies())
    recs = {n: rec(data.draw(CPU), 300 * 1024 * 1024) for n in NAMES if data.draw(st.booleans())}
    ranges = data.draw(limit_ranges())
    excluded = data.draw(st.sampled_from([None, {NAMES[0]: frozenset({"cpu"})}]))
    s = UpdaterSettings()
    together = workload_candidates(W, views, policy, recs, excluded, ranges, NOW, s)
    alone = [
        c
        for v in [pod_view(p) for p in raw]  # nothing shared: every pod computed on its own
        for c in workload_candidates(W, [v], policy, recs, excluded, ranges, NOW, s)
    ]
    alone.sort(key=lambda c: c.priority.sort_key())
    assert answer(together) == answer(alone)


def test_equal_keys_mean_equal_inputs_and_equal_values_need_not_share_a_key() -> None:
    shared = Shared()
    spec = {"containers": [{"name": "app", "resources": {"requests": {"cpu": "1"}}}]}
    a = pod_view({"metadata": {"name": "a"}, "spec": copy.deepcopy(spec)}, shared)
    b = pod_view({"metadata": {"name": "b"}, "spec": copy.deepcopy(spec)}, shared)
    assert shared_key(a.wire) == shared_key(b.wire)  # one template: one key
    assert pod_inputs(a.wire) == pod_inputs(b.wire)
    c = pod_view({"metadata": {"name": "c"}, "spec": copy.deepcopy(spec)})  # not shared
    assert shared_key(c.wire) != shared_key(a.wire)
    assert pod_inputs(c.wire) == pod_inputs(a.wire)  # by value, the patch cache still hits


def test_empty_parts_are_keyed_by_their_type_and_non_pods_have_no_key() -> None:
    # The pod cache does not share empty values: each pod has its own [] of init containers.
    one: dict[str, Any] = {"metadata": {}, "spec": {"containers": [], "initContainers": []}}
    other: dict[str, Any] = {"metadata": {}, "spec": {"containers": [], "initContainers": []}}
    assert shared_key(one) == shared_key(other)
    assert shared_key({"metadata": {}, "spec": {"containers": {}}}) != shared_key(one)
    # 0.0 and -0.0 are written differently: never keyed by their type.
    zero = {"metadata": {}, "spec": {"resources": 0.0}}
    minus = {"metadata": {}, "spec": {"resources": -0.0}}
    assert shared_key(zero) != shared_key(minus)
    assert shared_key("pod") is None
    assert shared_key({"metadata": {}, "spec": "nothing"}) is None
    assert shared_key({"spec": {}}) is None


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_node_rooms_of_pods_sharing_their_parts_are_those_of_each_pod_alone(
    data: st.DataObject,
) -> None:
    bases = data.draw(st.lists(pods(), min_size=1, max_size=3))
    raw = [data.draw(live_pods(bases, i)) for i in range(data.draw(st.integers(1, 12)))]
    for p in raw:
        p["spec"]["nodeName"] = data.draw(st.sampled_from(["node-1", "node-2"]))
    shared = Shared()
    nodes = [
        NodeView.parse(
            {
                "metadata": {"name": name},
                "status": {
                    "allocatable": {"cpu": "64", "memory": "256Gi"},
                    "conditions": [{"type": "Ready", "status": "True"}],
                },
            }
        )
        for name in ("node-1", "node-2")
    ]
    together = node_rooms(nodes, [pod_view(p, shared) for p in raw])
    alone = node_rooms(nodes, [pod_view(p) for p in raw])  # nothing shared
    assert list(together) == list(alone)


def test_node_rooms_gives_each_counted_pod_its_key_and_candidates_take_it() -> None:
    # Issue 22: the key is computed once a run, by node_rooms, and workload_candidates takes it.
    shared = Shared()
    spec = {
        "nodeName": "node-1",
        "containers": [{"name": "app", "resources": {"requests": {"cpu": "1"}}}],
    }
    raw = [{"metadata": {"name": n}, "spec": copy.deepcopy(spec)} for n in ("a", "b")]
    views = [pod_view(p, shared) for p in raw]
    done = pod_view({"metadata": {"name": "done"}, "spec": copy.deepcopy(spec)}, shared)
    done = pod_view({**done.wire, "status": {"phase": "Succeeded"}}, shared)
    keys: dict[int, Any] = {}
    node_rooms([], [*views, done], keys)
    assert keys == {id(v): shared_key(v.wire) for v in views}  # a terminal pod is not counted
    # Given keys are taken as they are: two pods told they share a key share one answer.
    big = pod_view(
        {
            "metadata": {"name": "big"},
            "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "9"}}}]},
        }
    )
    recs = {"app": rec(100, 300 * 1024 * 1024)}
    policy = Policy("p", "shop", "Deployment", "web", update_mode=UpdateMode.RECREATE)
    s = UpdaterSettings()
    own = workload_candidates(W, [views[0], big], policy, recs, None, (), NOW, s)
    assert len(own) == 2 and own[0].patch != own[1].patch  # computed here: each its own key
    told: PodKeys = {id(views[0]): ("one",), id(big): ("one",)}
    both = workload_candidates(W, [views[0], big], policy, recs, None, (), NOW, s, told)
    assert len(both) == 2 and both[0].patch is both[1].patch
