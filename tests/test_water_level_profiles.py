"""benchmarks/water_level_profiles.py: a node's forecast is its newest level plus the largest
rise its profile of the last day shows over the next slots, and nothing before a whole day."""

from __future__ import annotations

import sys
from pathlib import Path

# The benchmarks run as scripts: their modules are top-level ones (tests/test_slack_bound.py).
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))

from water_level_profiles import DAY, NodeProfiles  # noqa: E402

from app.core.placement.windows import NodeLevel  # noqa: E402

SLOT = DAY / 4  # four slots a day: 0-6 h, 6-12 h, 12-18 h, 18-24 h


def level(now: float) -> NodeLevel:
    return NodeLevel("a", 1000, 1000, (0.1, 0.2, 0.3), (0.5,) * 3, 0.0, now, 0.5)


def test_no_forecast_before_a_whole_day() -> None:
    profiles = NodeProfiles(ahead=2, slot=SLOT)
    for i, x in enumerate([0.2, 0.6, 0.4]):
        profiles.record("a", i * SLOT, x)
    profiles.record("a", 3 * SLOT + 60, 0.9)  # not at a slot's start: not kept
    assert profiles.rise("a", 3 * SLOT + 60) is None
    assert profiles.forecast(level(0.3), 0.0) == level(0.3)


def test_the_forecast_adds_the_largest_rise_ahead_to_the_newest_level() -> None:
    profiles = NodeProfiles(ahead=2, slot=SLOT)
    for i, x in enumerate([0.2, 0.6, 0.4, 0.1]):
        profiles.record("a", i * SLOT, x)
    # at 01:00 of the next day: the slot at 0.2, the next two at 0.6 and 0.4
    t = DAY + 3600
    assert profiles.rise("a", t) == 0.6 - 0.2
    forecast = profiles.forecast(level(0.25), t)
    assert forecast.cpu[:2] == (0.1, 0.2) and abs(forecast.cpu[2] - 0.65) < 1e-9
    assert forecast.memory == level(0.25).memory
    # at 18:00 (0.1) the next slots wrap past midnight: 0.2, then 0.6
    assert abs((profiles.rise("a", DAY + 3 * SLOT) or 0.0) - 0.5) < 1e-9
    # at 12:00 (0.4) the profile only falls ahead (0.1, 0.2): a negative rise, the smaller fall
    assert abs((profiles.rise("a", DAY + 2 * SLOT) or 0.0) - (-0.2)) < 1e-9
    # a newer day's level replaces the older one's
    profiles.record("a", DAY + SLOT, 0.3)
    assert abs((profiles.rise("a", t) or 0.0) - 0.2) < 1e-9
