"""Node levels over windows: exponentially weighted means, one per window."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from app.core.placement.windows import WINDOWS, combined, fold

GI = 1 << 30


def test_first_sample_sets_every_window() -> None:
    n = fold(None, "a", 4000, 8 * GI, 1000, 2 * GI, 100.0)
    assert n.cpu == (0.25, 0.25, 0.25) and n.memory == (0.25, 0.25, 0.25)
    assert n.metrics_at == 100.0


def test_short_window_follows_a_change_faster() -> None:
    n = fold(None, "a", 1000, GI, 0, 0, 0.0)
    n = fold(n, "a", 1000, GI, 1000, GI, 900.0)  # one short window later, the node is full
    short, hour, day = n.cpu
    assert abs(short - (1 - math.exp(-1))) < 1e-12  # 63% of the way after one time constant
    assert short > hour > day > 0
    assert abs(day - (1 - math.exp(-900 / 86400))) < 1e-12


def test_a_sample_not_newer_changes_nothing() -> None:
    n = fold(None, "a", 1000, GI, 500, GI, 10.0)
    assert fold(n, "a", 1000, GI, 0, 0, 10.0) is n
    assert fold(n, "a", 1000, GI, 0, 0, 5.0) is n


@given(
    st.lists(
        st.tuples(st.integers(1, 3600), st.integers(0, 2000), st.integers(0, 2 * GI)),
        min_size=1,
        max_size=30,
    )
)
def test_levels_stay_between_the_samples(samples: list[tuple[int, int, int]]) -> None:
    n, at = None, 0.0
    shares = []
    for dt, cpu, memory in samples:
        at += dt
        n = fold(n, "a", 1000, GI, cpu, memory, at)
        shares.append(cpu / 1000)
    assert n is not None
    for level in n.cpu:
        assert min(shares) - 1e-9 <= level <= max(shares) + 1e-9


def test_combined_weights() -> None:
    assert combined((0.9, 0.5, 0.1), (1.0, 0.0, 0.0)) == 0.9
    assert abs(combined((0.9, 0.5, 0.1), (1.0, 1.0, 2.0)) - 0.4) < 1e-12
    assert len(WINDOWS) == 3


def test_no_window_reads_below_the_newest_sample() -> None:
    """A node idle for hours, then full: the windows' means lag, the newest sample does not."""
    n = fold(None, "a", 1000, GI, 0, 0, 0.0)
    n = fold(n, "a", 1000, GI, 900, GI // 2, 3600.0)
    n = fold(n, "a", 1000, GI, 900, GI // 2, 3660.0)
    assert n.cpu[0] < 0.9 and n.cpu[2] < 0.1  # the means
    cpu, memory = n.effective()
    assert cpu == (0.9, 0.9, 0.9) and memory == (0.5, 0.5, 0.5)
    assert (n.cpu_now, n.memory_now) == (0.9, 0.5)
