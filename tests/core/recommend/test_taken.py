"""The model's answer of what it took, in columns (app.core.recommend.taken)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from app.core.recommend.taken import TakenColumns, taken_by_rows
from app.core.workload_key import WorkloadKey

A, B = WorkloadKey("ns", "Deployment", "a"), WorkloadKey("ns", "Deployment", "b")


def test_keys_by_rows_come_in_the_order_the_samples_first_name_them() -> None:
    """Rows 7, 2, 7, 5 (workload containers a/app, b/app, a/app, a/side): the keys in that
    order of first appearance, whatever the rows' own order; each value with its key."""
    samples = [(A, "p1", "app"), (B, "p2", "app"), (A, "p3", "app"), (A, "p4", "side")]
    rows = np.array([7, 2, 7, 5])
    cores = np.array([0.1, 0.2, 0.3, 0.4])
    usage = np.array([1e8, 2e8, 3e8, 4e8])
    cpu_taken = np.array([True, False, True, True])
    memory_taken = np.array([False, True, True, False])
    taken = taken_by_rows(
        lambda i: (samples[i][0], samples[i][2]), rows, cpu_taken, cores, memory_taken, usage
    )
    assert taken.keys == [(A, "app"), (B, "app"), (A, "side")]
    assert taken.lists() == {
        (A, "app"): ([0.1, 0.3], [3e8]),
        (B, "app"): ([], [2e8]),
        (A, "side"): ([0.4], []),
    }
    assert taken.count == 5


_lists = st.dictionaries(
    st.tuples(st.sampled_from([A, B]), st.sampled_from(["app", "side", "db"])),
    st.tuples(
        st.lists(st.floats(0, 64, allow_nan=False), max_size=4),
        st.lists(st.floats(0, 1e10, allow_nan=False), max_size=4),
    ),
    max_size=6,
)


@given(_lists)
def test_lists_and_columns_hold_the_same(taken: dict) -> None:  # type: ignore[type-arg]
    """Columns made of lists give those lists back; without the keys that took nothing, the
    rest is unchanged."""
    columns = TakenColumns.of_lists(taken)
    assert columns.lists() == taken
    assert list(columns.lists()) == list(taken)  # the keys' order too
    kept = {k: v for k, v in taken.items() if v[0] or v[1]}
    assert columns.with_values().lists() == kept
    assert list(columns.with_values().keys) == list(kept)
    assert columns.count == sum(len(c) + len(m) for c, m in taken.values())
