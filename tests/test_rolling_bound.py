"""benchmarks/rolling_bound.py: the rolling protocol's hindsight bound on mean unused request is
a true lower bound, checked against every policy on tiny inputs (brute force)."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

# The benchmarks run as scripts (`python benchmarks/quality.py`): their modules are top-level ones,
# importing each other by their bare names, and mypy checks them so (setup.cfg's mypy_path).
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))

from rolling_bound import container, unused_bound  # noqa: E402

STEP, PERIOD = 1.0, 2.0  # a change at most every 2 steps, as the updater's 12 h at 6 h steps


def judge(samples: list[tuple[float, float]], requests: list[float]) -> tuple[float, float]:
    """(under, unused) as quality.py's rolling protocol judges a request per step."""
    above = unused = requested = 0.0
    for t, v in samples:
        r = requests[int(t // STEP)]
        above += v > r
        unused += max(0.0, r - v)
        requested += r
    return above / len(samples), unused / requested


def policies(levels: list[float], steps: int) -> list[list[float]]:
    """Every request per step whose changes are at least PERIOD apart."""
    out = []
    for pick in itertools.product(levels, repeat=steps):
        changes = [i for i in range(1, steps) if pick[i] != pick[i - 1]]
        if all(b - a >= PERIOD / STEP for a, b in itertools.pairwise(changes)):
            out.append(list(pick))
    return out


def pareto(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points no other is at or below in both figures: if the bound holds at these, it holds
    at every point (it only grows as under-provisioning shrinks)."""
    kept: list[tuple[float, float]] = []
    for u, x in sorted(set(points)):
        if not kept or x < kept[-1][1]:
            kept.append((u, x))
    return kept


samples_st = st.lists(
    st.tuples(st.integers(0, 3), st.integers(1, 9).map(float)), min_size=1, max_size=5
)


@given(traces=st.lists(samples_st, min_size=1, max_size=2), floor=st.integers(1, 4).map(float))
@settings(max_examples=40, deadline=None)
def test_no_policy_beats_the_bound(traces: list[list[tuple[int, float]]], floor: float) -> None:
    steps = 4
    judged = [[(t + 0.5, v) for t, v in trace] for trace in traces]
    bounds = [
        container(
            [t for t, _ in s], [v for _, v in s], start=0.0, step=STEP, period=PERIOD, floor=floor
        )
        for s in judged
    ]
    per_trace = []
    for s in judged:
        levels = sorted({floor, *(v for _, v in s if v >= floor)})
        levels.append(levels[-1] + 1.5)  # one above every sample, and one between two
        if len(levels) > 2:
            levels.append((levels[0] + levels[1]) / 2)
        per_trace.append(pareto([judge(s, p) for p in policies(levels, steps)]))
    for combo in itertools.product(*per_trace):
        under = sum(u for u, _ in combo) / len(combo)
        unused = sum(x for _, x in combo) / len(combo)
        assert unused_bound(bounds, under) <= unused + 1e-9, (combo, under, unused)


def test_a_steady_container_needs_nothing_unused_and_a_change_helps_a_step() -> None:
    """Usage 4 then 8: one request per block can follow it exactly, so at 0 above only what the
    relaxation R <= U + S loses remains (nothing here: U = 0)."""
    times = [0.5, 1.5, 2.5, 3.5]
    c = container(times, [4.0, 4.0, 8.0, 8.0], start=0.0, step=STEP, period=PERIOD, floor=1.0)
    assert unused_bound([c], 0.0) == pytest.approx(0.0, abs=1e-9)
    # one block of 4 steps: the change at step 2 is allowed once, so still 0
    one = container(times, [4.0, 4.0, 8.0, 8.0], start=0.0, step=STEP, period=4.0, floor=1.0)
    assert unused_bound([one], 0.0) == pytest.approx(0.0, abs=1e-9)
    # 4, 8, 4, 8 in one block: one change cannot follow it; at 0 above, 4 then 8 from the
    # second step at best: U = 4, S = 24, the bound U / (U + S) = 1/7, the true unused 4 / 28
    zigzag = container(times, [4.0, 8.0, 4.0, 8.0], start=0.0, step=STEP, period=4.0, floor=1.0)
    assert unused_bound([zigzag], 0.0) == pytest.approx(1 / 7, abs=1e-6)
    # with a change allowed at every step it follows the usage again
    free = container(times, [4.0, 8.0, 4.0, 8.0], start=0.0, step=STEP, period=1.0, floor=1.0)
    assert unused_bound([free], 0.0) == pytest.approx(0.0, abs=1e-9)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="without judged samples"):
        container([], [], start=0.0, step=1.0, period=2.0, floor=1.0)
    with pytest.raises(ValueError, match="no containers"):
        unused_bound([], 0.1)
