"""benchmarks/slack_bound.py: the foresight bound on mean slack is a true lower bound, and tight
where one level per trace can be checked by brute force."""

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

from slack_bound import levels, slack_bound  # noqa: E402


def judge(values: list[float], level: float) -> tuple[float, float]:
    """(under, slack) as benchmarks/quality.py's fixed protocol judges one request."""
    above = sum(1 for v in values if v > level) / len(values)
    return above, 1 - (sum(values) / len(values)) / level


traces_st = st.lists(
    st.lists(st.integers(1, 20).map(float), min_size=1, max_size=6), min_size=1, max_size=3
)


@given(traces=traces_st, floor=st.integers(1, 10).map(float), at_least_mean=st.booleans())
@settings(max_examples=150, deadline=None)
def test_no_choice_of_levels_beats_the_bound(
    traces: list[list[float]], floor: float, at_least_mean: bool
) -> None:
    cands = [levels(t, floor, at_least_mean=at_least_mean) for t in traces]
    # every assignment of one candidate level per trace, and a level between two of them
    options = [[lv for lv, _ in c.options] + [c.options[0][0] * 1.37] for c in cands]
    for pick in itertools.product(*options):
        judged = [judge(t, lv) for t, lv in zip(traces, pick, strict=True)]
        under = sum(u for u, _ in judged) / len(judged)
        slack = sum(s for _, s in judged) / len(judged)
        bound = slack_bound(cands, under)
        assert bound.slack <= slack + 1e-9, (pick, bound, slack)


def test_one_trace_the_bound_is_the_lower_hull_of_its_levels() -> None:
    values = [1.0] * 8 + [4.0, 10.0]  # mean 2.2
    cands = [levels(values, 1.0, at_least_mean=True)]
    # (under, slack) of the levels 2.2, 4 and 10: (0.2, 0), (0.1, 0.45), (0, 0.78). The bound
    # is their lower convex hull: at 10% above, halfway between the first and the last (0.39),
    # below the 0.45 of the level 4 itself (a duality gap: the bound is safe, not always tight)
    assert slack_bound(cands, 0.1).slack == pytest.approx(0.39, abs=1e-6)
    assert slack_bound(cands, 0.0).slack == pytest.approx(0.78, abs=1e-6)  # nothing above: 10
    assert slack_bound(cands, 0.2).slack == pytest.approx(0.0, abs=1e-6)


def test_below_the_mean_only_when_allowed() -> None:
    values = [1.0] * 9 + [91.0]  # mean 10
    low = levels(values, 1.0, at_least_mean=False)
    kept = levels(values, 1.0, at_least_mean=True)
    assert low.options[0] == (1.0, 0.1)  # the floor: 1 - 10 / 1 = -900% slack at 10% above
    assert kept.options[0] == (10.0, 0.1)
    assert slack_bound([low], 0.1).slack == pytest.approx(-9.0, abs=1e-6)
    assert slack_bound([kept], 0.1).slack == pytest.approx(0.0, abs=1e-6)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="without judged samples"):
        levels([], 1.0, at_least_mean=True)
    with pytest.raises(ValueError, match="no traces"):
        slack_bound([], 0.1)
