"""Which checkpoints a run rewrites (app.core.recommend.checkpoint: checkpoint_budget and
checkpoints_due), the rule the recommender job follows: new ones at once, the others the
oldest first, each about once per checkpoint interval."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from app.core.recommend.checkpoint import (
    MIN_CHECKPOINTS_PER_RUN,
    checkpoint_budget,
    checkpoints_due,
)


def test_budget_is_the_share_of_one_run_in_the_interval() -> None:
    assert checkpoint_budget(15000, 60, 600) == 1500
    assert checkpoint_budget(15001, 60, 600) == 1501  # rounded up
    assert checkpoint_budget(50, 60, 600) == MIN_CHECKPOINTS_PER_RUN  # VPA's minimum
    assert checkpoint_budget(4, 60, 600) == 4  # never more than there are
    assert checkpoint_budget(15000, 60, 60) == 15000  # the interval of the runs: all
    assert checkpoint_budget(15000, 60, 30) == 15000


def test_never_written_are_due_and_then_the_oldest() -> None:
    written = {"a": 30.0, "b": 10.0, "c": 20.0}
    assert checkpoints_due(["a", "b", "c", "new"], written, 2) == {"new", "b", "c"}
    assert checkpoints_due(["a", "b", "c"], written, 0) == set()
    # equal times: in the order of the keys given
    assert checkpoints_due(["z", "y", "x"], dict.fromkeys("xyz", 5.0), 2) == {"z", "y"}


@given(
    st.integers(min_value=0, max_value=400),
    st.sampled_from([15.0, 60.0, 120.0]),
    st.sampled_from([60.0, 300.0, 600.0, 3600.0]),
    st.lists(st.integers(min_value=0, max_value=30), max_size=8),
)
def test_every_checkpoint_is_rewritten_within_the_interval(
    start: int, run: float, interval: float, arrivals: list[int]
) -> None:
    """Run after run, with containers arriving between runs: a new one is written in its first
    run, and none waits longer than the interval (plus a run) since it was last written."""
    keys = [f"k{i}" for i in range(start)]
    written: dict[str, float] = {}
    now = 0.0
    for n in [*arrivals, *[0] * int(interval // run + 2)]:
        keys += [f"k{len(keys) + i}" for i in range(n)]
        now += run
        budget = checkpoint_budget(len(written), run, interval)
        due = checkpoints_due(keys, written, budget)
        assert {k for k in keys if k not in written} <= due
        for k in due:
            written[k] = now
        waited = max((now - t for t in written.values()), default=0.0)
        assert waited <= math.ceil(interval / run) * run
