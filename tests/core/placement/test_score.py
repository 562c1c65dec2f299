"""The window score's shape, the ideal level, and TargetLoadPacking's defect fixed."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from app.core.placement.score import ideal_level, window_score
from app.core.placement.table import window_scores

levels = st.floats(min_value=0.0, max_value=1.5, allow_nan=False)
ideals = st.floats(min_value=0.0, max_value=0.99, allow_nan=False)


def tlp_score(t: float, target: float) -> float:
    """TargetLoadPacking's score as published (scheduler-plugins pkg/trimaran/targetloadpacking,
    0-100 scale): the reference the defect is shown against."""
    if t > 100:
        return 0.0
    if t > target:
        return target * (100 - t) / (100 - target)
    return (100 - target) * t / target + target


@given(ideals, levels, levels)
def test_monotone_on_each_side_of_ideal(ideal: float, a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    if hi <= ideal:  # both under: the nearer the ideal, the higher
        assert window_score(lo, ideal) <= window_score(hi, ideal)
    if lo >= ideal:  # both over: the farther past it, the lower
        assert window_score(lo, ideal) >= window_score(hi, ideal)


@given(ideals, levels)
def test_maximum_at_ideal_and_in_range(ideal: float, t: float) -> None:
    assert 0.0 <= window_score(t, ideal) <= window_score(ideal, ideal) == 1.0


@given(ideals, st.floats(min_value=1.0, max_value=100.0))
def test_zero_from_100_percent(ideal: float, t: float) -> None:
    assert window_score(t, ideal) == 0.0


@given(ideals)
def test_continuous_at_ideal(ideal: float) -> None:
    eps = 1e-9
    assert abs(window_score(ideal + eps, ideal) - 1.0) < 1e-6
    assert abs(window_score(ideal - eps, ideal) - 1.0) < 1e-6


def test_the_defect_counter_example() -> None:
    """Target 50%: a node at 1% and one half a point over the target. TargetLoadPacking ranks
    the far one first (its score drops from 100 to 50 at the target); the fixed score ranks the
    near one first, and does not jump at the target."""
    assert tlp_score(1, 50) > tlp_score(50.5, 50)  # the defect: 51 > 49.5
    assert tlp_score(49.99, 50) - tlp_score(50.01, 50) > 49  # the jump
    assert window_score(0.505, 0.5) > window_score(0.01, 0.5)
    assert window_score(0.4999, 0.5) - window_score(0.5001, 0.5) < 0.001


@given(ideals, st.lists(levels, min_size=1, max_size=20))
def test_arrays_score_as_the_scalar(ideal: float, ts: list[float]) -> None:
    got = window_scores(np.array(ts), np.array(ideal))
    assert np.allclose(got, [window_score(t, ideal) for t in ts])


def test_ideal_level_follows_mean_and_minimum() -> None:
    assert abs(ideal_level([0.2, 0.4, 0.6], 0.0) - 0.4) < 1e-12  # the mean alone
    assert abs(ideal_level([0.2, 0.4, 0.6], 1.0) - 0.3) < 1e-12  # (0.4 + 0.2) / 2
    assert abs(ideal_level([0.2, 0.4, 0.6], 3.0) - 0.25) < 1e-12  # (0.4 + 0.6) / 4
    assert ideal_level([], 1.0) == 0.0
    assert ideal_level([1.5, 2.0], 1.0) == 0.99  # all over 100%: still a ranking


@given(st.lists(st.floats(min_value=0.0, max_value=0.98), min_size=1), st.floats(0.0, 10.0))
def test_ideal_between_minimum_and_mean(values: list[float], w: float) -> None:
    ideal = ideal_level(values, w)
    assert min(values) - 1e-9 <= ideal <= sum(values) / len(values) + 1e-9
