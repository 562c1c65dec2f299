"""UsageModel.expire_idle drops the idle aggregates and their pod containers' windows, in one pass
over the windows however many expire together (the workloads of a namespace deleted eight days
before all expire in the same run)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.recommend.model import UsageModel
from app.core.workload_key import WorkloadKey

T0 = 1_700_000_000.0
DAY = 86400.0


class CountedPods(dict[Any, Any]):
    """The model's pod windows, counting the passes over them."""

    passes = 0

    def __iter__(self) -> Any:
        CountedPods.passes += 1
        return super().__iter__()


def model_of(shape: list[tuple[int, int, bool]]) -> UsageModel:
    """Per workload (pods, containers, idle): its samples, the idle ones nine days old."""
    m = UsageModel()
    for i, (pods, containers, idle) in enumerate(shape):
        w = WorkloadKey(f"ns-{i % 2}", "Deployment", f"w-{i}")
        t = T0 - 9 * DAY if idle else T0
        for p in range(pods):
            for c in range(containers):
                m.add_usage(w, f"w-{i}-{p}", f"c-{c}", t, 0.1, 0.5, 1e8)
    return m


def state(m: UsageModel) -> tuple[Any, ...]:
    return (
        {w: sorted(c) for w, c in m.aggregates.items()},
        sorted((k[0].name, k[1], k[2]) for k in m.pods),
        dict(m.tunings),
    )


def test_many_expiring_together_take_one_pass_over_the_pod_windows() -> None:
    m = model_of([(3, 2, i % 3 == 0) for i in range(30)])
    m.pods = CountedPods(m.pods)
    CountedPods.passes = 0
    assert m.expire_idle(T0) == 20  # 10 idle workloads x 2 containers
    assert CountedPods.passes == 1  # was one for each of the 20
    assert all(not w.name.endswith(("-0", "-3")) for w in m.aggregates)
    assert {k[0] for k in m.pods} == set(m.aggregates)


@given(st.lists(st.tuples(st.integers(1, 3), st.integers(1, 3), st.booleans()), max_size=8))
@settings(max_examples=60, deadline=None)
def test_expiring_together_leaves_what_expiring_one_by_one_leaves(
    shape: list[tuple[int, int, bool]],
) -> None:
    together, one_by_one = model_of(shape), model_of(shape)
    expired = one_by_one.expired(T0)
    for w, name in expired:
        one_by_one._drop(w, name)  # the reference: an aggregate and its windows at a time
    assert together.expire_idle(T0) == len(expired)
    assert state(together) == state(one_by_one)
