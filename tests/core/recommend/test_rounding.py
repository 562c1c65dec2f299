"""Rounding of recommendations as VPA's recommender does it: round-cpu-millicores and
round-memory-bytes on every amount, the integer CPU post-processor, capping last."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.recommend.array_model import ArrayModel
from app.core.recommend.estimator import Estimate, Estimates
from app.core.recommend.rounding import round_up_to_scale, rounded_rows
from app.core.recommend.settings import MIB, RecommenderSettings
from app.core.recommendation import ContainerPolicy
from app.core.resources import MAX_AMOUNT, Resources
from app.core.workload_key import WorkloadKey

W = WorkloadKey("shop", "Deployment", "web")


def fed(settings: RecommenderSettings) -> ArrayModel:
    """A day of 0.5-core, 1e9-byte samples: estimates 587m and 1168723596 bytes unrounded."""
    m = ArrayModel(settings)
    for i in range(1440):
        m.add_cpu(W, "web-1", "app", 1_700_000_000.0 + 60 * i, 0.5, 1.0)
        m.add_memory(W, "web-1", "app", 1_700_000_000.0 + 60 * i, 1e9)
    return m


@pytest.mark.parametrize(
    ("value", "scale", "expected"),
    [(0, MIB, 0), (1, MIB, MIB), (MIB, MIB, MIB), (MIB + 1, MIB, 2 * MIB), (587, 1, 587)],
)
def test_round_up_to_scale(value: int, scale: int, expected: int) -> None:
    assert round_up_to_scale(value, scale) == expected


def test_an_unbounded_amount_stays_unbounded() -> None:
    assert round_up_to_scale(MAX_AMOUNT, MIB) == MAX_AMOUNT
    assert round_up_to_scale(MAX_AMOUNT - 5, MIB) == MAX_AMOUNT  # would overflow int64


def test_scale_must_be_positive() -> None:
    with pytest.raises(ValueError, match="greater than zero"):
        round_up_to_scale(5, 0)


@given(st.integers(0, MAX_AMOUNT - 1), st.integers(1, 10**9))
def test_rounding_is_the_next_multiple_at_or_above(value: int, scale: int) -> None:
    r = round_up_to_scale(value, scale)
    assert r == MAX_AMOUNT or (r % scale == 0 and value <= r < value + scale)


def test_every_amount_is_rounded_and_integer_cpu_rounds_cpu_to_whole_cores() -> None:
    est = Estimate(Resources(587, 10), Resources(25, MIB + 1), Resources(MAX_AMOUNT, 3 * MIB))
    rows = Estimates(
        np.array([[587, 25, MAX_AMOUNT]] * 2, dtype=np.int64),
        np.array([[10, MIB + 1, 3 * MIB]] * 2, dtype=np.int64),
    )
    assert rows.at(0) == est
    r = rounded_rows(rows, [1, 1], [MIB, MIB], [False, True])  # the second row: integer CPU
    assert r.at(0) == Estimate(
        Resources(587, MIB), Resources(25, 2 * MIB), Resources(MAX_AMOUNT, 3 * MIB)
    )
    assert r.at(1) == Estimate(
        Resources(1000, MIB), Resources(1000, 2 * MIB), Resources(MAX_AMOUNT, 3 * MIB)
    )


def test_each_row_has_its_own_scales() -> None:
    rows = Estimates(np.array([[587, 1, 2]] * 2), np.array([[MIB + 1, 0, 1]] * 2))
    r = rounded_rows(rows, [1, 10], [MIB, 1], [False, False])
    assert r.at(0) == Estimate(Resources(587, 2 * MIB), Resources(1, 0), Resources(2, MIB))
    assert r.at(1) == Estimate(Resources(590, MIB + 1), Resources(10, 0), Resources(10, 1))


def test_the_default_rounds_memory_to_whole_mib_and_leaves_cpu() -> None:
    vpa_default = fed(RecommenderSettings(round_memory_bytes=1)).recommend(W)["app"]
    ours = fed(RecommenderSettings()).recommend(W)["app"]
    assert vpa_default.target == Resources(587, 1168723596)
    assert ours.target == Resources(587, 1115 * MIB)  # 1114.6 MiB, rounded up
    assert ours.uncapped_target == ours.target
    for r in (ours.target, ours.lower_bound, ours.upper_bound):
        assert r.memory % MIB == 0 or r.memory == MAX_AMOUNT


def test_integer_cpu_comes_before_the_caps() -> None:
    m = fed(RecommenderSettings(round_cpu_millicores=10))
    assert m.recommend(W)["app"].target.cpu == 590  # round-cpu-millicores=10
    whole = m.recommend(W, [ContainerPolicy("app", integer_cpu=True)])["app"]
    assert (whole.target.cpu, whole.uncapped_target.cpu) == (1000, 1000)
    capped = m.recommend(W, [ContainerPolicy("app", integer_cpu=True, max_allowed={"cpu": 750})])
    assert (capped["app"].target.cpu, capped["app"].uncapped_target.cpu) == (750, 1000)
    other = m.recommend(W, [ContainerPolicy("sidecar", integer_cpu=True)])["app"]
    assert other.target.cpu == 590  # only the container that opted in


@pytest.mark.parametrize("field", ["round_cpu_millicores", "round_memory_bytes"])
@pytest.mark.parametrize("value", [0, 0.5, 1.5, -1])
def test_rounding_settings_are_whole_numbers_of_at_least_one(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=f"{field} must be a whole number of at least 1"):
        RecommenderSettings(**{field: value})
