"""The recommender's per node group state (app/core/recommend/node_groups.py), pure: each group's
recommendation is what a model fed with only that group's pods gives, groups of another label
are dropped, and idle groups expire."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.recommend.array_model import ArrayModel
from app.core.recommend.node_groups import NodeGroupModels
from app.core.recommend.settings import MIB, RecommenderSettings
from app.core.workload_key import WorkloadKey

S = RecommenderSettings()
T0 = 1_700_000_000.0
W = WorkloadKey("ops", "DaemonSet", "agent")
TYPE = "node.kubernetes.io/instance-type"
SMALL, LARGE = (TYPE, "m5.large"), (TYPE, "m5.4xlarge")


def models() -> NodeGroupModels:
    return NodeGroupModels(lambda: ArrayModel(S))


def feed(groups: NodeGroupModels, key: tuple[str, str], pod: str, cores: float, mib: float) -> None:
    for i in range(120):  # two hours, a sample a minute
        t = T0 + 60 * i
        groups.add_usage(key, W, pod, "agent", t, cores, 0.1, mib * MIB)


def test_two_node_groups_get_two_sizes() -> None:
    g = models()
    feed(g, SMALL, "agent-a", 0.05, 400)
    feed(g, LARGE, "agent-b", 0.2, 1200)
    recs = g.recommend(W)
    assert sorted(recs) == [LARGE, SMALL]
    small, large = recs[SMALL]["agent"].target, recs[LARGE]["agent"].target
    assert large.cpu > 3 * small.cpu and large.memory > 2.5 * small.memory
    assert g.groups(W) == [LARGE, SMALL] and g.workloads() == {W}
    assert [(k, c) for k, c, _ in g.checkpoints(W)] == [(LARGE, "agent"), (SMALL, "agent")]


usage = st.lists(
    st.tuples(
        st.sampled_from(["small", "large", None]),  # the pod's group (None: no label)
        st.sampled_from(["p1", "p2", "p3"]),
        st.floats(0.001, 4.0),
        st.floats(1.0, 4096.0),
        st.integers(0, 3 * 86400),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(usage)
def test_a_groups_recommendation_is_that_of_its_pods_alone(samples: list[Any]) -> None:
    g = models()
    alone: dict[tuple[str, str], ArrayModel] = {}
    for value, pod, cores, mib, dt in sorted(samples, key=lambda s: s[4]):
        key = (TYPE, value or "<none>")
        t = T0 + dt
        g.add_usage(key, W, pod, "agent", t, cores, 0.1, mib * MIB)
        m = alone.setdefault(key, ArrayModel(S))
        m.add_cpu(W, pod, "agent", t, cores, 0.1)
        m.add_memory(W, pod, "agent", t, mib * MIB)
    assert g.recommend(W) == {key: m.recommend(W) for key, m in alone.items()}


def test_a_new_label_starts_the_groups_afresh_and_none_drops_them() -> None:
    g = models()
    feed(g, SMALL, "agent-a", 0.05, 100)
    zone = ("topology.kubernetes.io/zone", "a")
    feed(g, zone, "agent-a", 0.05, 100)
    assert g.keep_label(W, TYPE) == 1
    assert g.groups(W) == [SMALL] and zone not in g.models
    assert g.keep_label(W, TYPE) == 0
    assert g.keep_label(W, None) == 1
    assert g.groups(W) == [] and not g.models


def test_idle_groups_expire_and_gone_pods_lose_their_windows() -> None:
    g = models()
    feed(g, SMALL, "agent-a", 0.05, 100)
    feed(g, LARGE, "agent-b", 0.2, 300)
    assert {k[1] for m in g.models.values() for k in m.pods} == {"agent-a", "agent-b"}
    g.forget_deleted_pods({("ops", "agent-b")})
    assert {k[1] for m in g.models.values() for k in m.pods} == {"agent-b"}
    assert g.groups(W) == [LARGE, SMALL]  # the history stays
    assert g.expire_idle(T0 + 9 * 86400) == 2
    assert not g.models
    feed(g, SMALL, "agent-a", 0.05, 100)
    g.drop(W)
    assert not g.models


def test_a_refused_checkpoint_leaves_no_group_and_a_good_one_restores() -> None:
    """A group's checkpoint (what the node group rows store) restores its history; one
    ArrayModel.restore refuses leaves no empty group behind."""
    from dataclasses import replace

    import pytest

    g = models()
    feed(g, SMALL, "agent-a", 0.05, 400)
    [(_, _, cp)] = list(g.checkpoints(W))
    restored = models()
    with pytest.raises(ValueError, match="outside"):
        restored.restore(
            LARGE, W, "agent", replace(cp, cpu=replace(cp.cpu, bucket_weights={999: 1}))
        )
    assert not restored.models
    restored.restore(SMALL, W, "agent", cp)
    assert [c for _, _, c in restored.checkpoints(W)] == [cp]
    assert restored.recommend(W) == g.recommend(W)
