"""Scaler behaviour against the HorizontalPodAutoscaler's documented semantics and examples."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.scaling.behavior import (
    DEFAULT_SCALE_DOWN,
    DEFAULT_SCALE_UP,
    Behavior,
    BehaviorError,
    Decision,
    History,
    Proposal,
    RatePolicy,
    Rules,
    ScaleChange,
    decide,
    parse_behavior,
    parse_history,
    scale_down_limit,
    scale_up_limit,
)

NOW = 10_000.0
DOWN_4_PODS_OR_10_PERCENT = (RatePolicy("Pods", 4, 60), RatePolicy("Percent", 10, 60))


def test_hpa_docs_scale_down_max_takes_the_bigger_change() -> None:
    # 80 replicas: Pods allows 76, Percent allows floor(80 * 0.9) = 72; Max picks 72.
    assert scale_down_limit(80, [], NOW, Rules(0, "Max", DOWN_4_PODS_OR_10_PERCENT)) == 72
    # Min picks the smaller change: 76.
    assert scale_down_limit(80, [], NOW, Rules(0, "Min", DOWN_4_PODS_OR_10_PERCENT)) == 76
    # Next period from 72: floor(72 * 0.9) = 64 (8 more).
    assert scale_down_limit(72, [], NOW, Rules(0, "Max", DOWN_4_PODS_OR_10_PERCENT)) == 64


def test_scale_down_counts_changes_within_the_period() -> None:
    rules = Rules(0, "Max", DOWN_4_PODS_OR_10_PERCENT)
    # 8 removed 30 s ago: the period started at 80, so nothing more until it ends.
    assert scale_down_limit(72, [ScaleChange(NOW - 30, -8)], NOW, rules) == 72
    # ... and 61 s ago lies outside the 60 s period.
    assert scale_down_limit(72, [ScaleChange(NOW - 61, -8)], NOW, rules) == 64


@pytest.mark.parametrize(("current", "limit"), [(1, 5), (4, 8), (10, 20)])
def test_default_scale_up_is_4_pods_or_100_percent_whichever_is_more(
    current: int, limit: int
) -> None:
    assert scale_up_limit(current, [], NOW, DEFAULT_SCALE_UP) == limit


def test_scale_up_min_policy_and_percent_rounds_up() -> None:
    rules = Rules(0, "Min", (RatePolicy("Pods", 4, 15), RatePolicy("Percent", 50, 15)))
    assert scale_up_limit(10, [], NOW, rules) == 14  # min(14, 15)
    assert scale_up_limit(3, [], NOW, rules) == 5  # ceil(4.5) = 5 < 7
    assert (
        scale_up_limit(1, [], NOW, Rules(0, "Max", (RatePolicy("Percent", 10, 15),))) == 2
    )  # ceil(1.1)


def test_disabled_blocks_that_direction() -> None:
    b = Behavior(DEFAULT_SCALE_UP, Rules(0, "Disabled", DEFAULT_SCALE_DOWN.policies))
    assert decide(10, 3, [], [], NOW, b).replicas == 10
    assert decide(10, 12, [], [], NOW, b).replicas == 12


def test_scale_down_window_keeps_the_highest_recent_proposal() -> None:
    b = Behavior(DEFAULT_SCALE_UP, Rules(120, "Max", DEFAULT_SCALE_DOWN.policies))
    history = [Proposal(NOW - 100, 6), Proposal(NOW - 50, 4)]
    d = decide(6, 3, history, [], NOW, b)
    assert d.replicas == 6 and "stabilized" in d.reason
    # A proposal outside the window is ignored: the highest within it (4) wins.
    d = decide(6, 3, [Proposal(NOW - 121, 6), Proposal(NOW - 50, 4)], [], NOW, b)
    assert d.replicas == 4


def test_scale_up_window_keeps_the_lowest_recent_proposal() -> None:
    b = Behavior(Rules(60, "Max", DEFAULT_SCALE_UP.policies), DEFAULT_SCALE_DOWN)
    assert decide(2, 8, [Proposal(NOW - 30, 3)], [], NOW, b).replicas == 3
    assert decide(2, 8, [Proposal(NOW - 90, 3)], [], NOW, b).replicas == 6  # 2 + 4 pods per 15s


def test_without_behavior_acts_at_once() -> None:
    d = decide(10, 2, [Proposal(NOW - 1, 10)], [], NOW, None)
    assert (d.replicas, d.reason) == (2, "no behavior: applied at once")


def test_empty_behavior_means_hpa_defaults() -> None:
    assert parse_behavior({}) == Behavior(DEFAULT_SCALE_UP, DEFAULT_SCALE_DOWN)
    assert parse_behavior(None) is None
    b = parse_behavior({"scaleDown": {"stabilizationWindowSeconds": 120}})
    assert b is not None
    assert b.scale_down == Rules(120, "Max", DEFAULT_SCALE_DOWN.policies)


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        (
            {"scaleUp": {"policies": [{"type": "Nodes", "value": 1, "periodSeconds": 15}]}},
            "behavior.scaleUp.policies[0].type",
        ),
        (
            {"scaleUp": {"policies": [{"type": "Pods", "value": -1, "periodSeconds": 15}]}},
            "behavior.scaleUp.policies[0].value",
        ),
        (
            {"scaleDown": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 0}]}},
            "behavior.scaleDown.policies[0].periodSeconds",
        ),
        (
            {"scaleDown": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 1801}]}},
            "behavior.scaleDown.policies[0].periodSeconds",
        ),
        (
            {"scaleDown": {"stabilizationWindowSeconds": 3601}},
            "behavior.scaleDown.stabilizationWindowSeconds",
        ),
        (
            {"scaleDown": {"stabilizationWindowSeconds": -1}},
            "behavior.scaleDown.stabilizationWindowSeconds",
        ),
        ({"scaleUp": {"selectPolicy": "Average"}}, "behavior.scaleUp.selectPolicy"),
        ({"scaleUp": {"policies": []}}, "behavior.scaleUp.policies"),
        ({"scaleSideways": {}}, "behavior.scaleSideways"),
        (
            {
                "scaleUp": {
                    "policies": [{"type": "Pods", "value": 1, "periodSeconds": 15, "burst": 2}]
                }
            },
            "behavior.scaleUp.policies[0].burst",
        ),
    ],
)
def test_invalid_behavior_names_the_field(doc: dict[str, Any], field: str) -> None:
    with pytest.raises(BehaviorError) as err:
        parse_behavior(doc)
    assert field in [f for f, _ in err.value.errors]


def test_history_prunes_what_no_window_or_period_needs() -> None:
    b = Behavior(DEFAULT_SCALE_UP, Rules(120, "Max", (RatePolicy("Percent", 100, 60),)))
    h = History(
        [Proposal(NOW - 200, 1), Proposal(NOW - 10, 2)],
        [ScaleChange(NOW - 100, 1), ScaleChange(NOW - 5, 1)],
    )
    h.prune(NOW, b)
    assert h.proposals == [Proposal(NOW - 10, 2)]
    assert h.changes == [ScaleChange(NOW - 5, 1)]


def test_reasons_say_what_held_the_change_back_and_name_the_field() -> None:
    window = Behavior(DEFAULT_SCALE_UP, Rules(300, "Max", DEFAULT_SCALE_DOWN.policies))
    d = decide(5, 3, [Proposal(NOW - 10, 5)], [], NOW, window)
    assert d.replicas == 5
    assert d.reason.startswith("stabilized to 5: the highest proposal within the 300s")
    assert "behavior.scaleDown.stabilizationWindowSeconds" in d.reason
    d = decide(
        2,
        8,
        [Proposal(NOW - 30, 3)],
        [],
        NOW,
        Behavior(Rules(60, "Max", DEFAULT_SCALE_UP.policies), DEFAULT_SCALE_DOWN),
    )
    assert "behavior.scaleUp.stabilizationWindowSeconds" in d.reason
    step = Behavior(DEFAULT_SCALE_UP, Rules(0, "Max", (RatePolicy("Pods", 1, 60),)))
    d = decide(6, 3, [], [], NOW, step)
    assert d == Decision(
        5,
        "scale-down to 3 limited to 5 by behavior.scaleDown.policies (selectPolicy Max of "
        "1 pods per 60s, counted from the replicas at the start of each period)",
    )
    off = Behavior(Rules(0, "Disabled", DEFAULT_SCALE_UP.policies), DEFAULT_SCALE_DOWN)
    assert decide(2, 8, [], [], NOW, off) == Decision(
        2, "scale-up to 8 blocked: behavior.scaleUp.selectPolicy is Disabled"
    )
    assert decide(4, 4, [], [], NOW, step) == Decision(4, "as proposed")


def test_parse_history_takes_ages_in_seconds() -> None:
    h = parse_history({"proposals": [[30, 5], [0, 3]], "changes": [[20, -1]]}, NOW)
    assert h == History([Proposal(NOW - 30, 5), Proposal(NOW, 3)], [ScaleChange(NOW - 20, -1)])
    assert parse_history({}, NOW) == History()


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ([], "history"),
        ({"proposal": []}, "history.proposal"),
        ({"proposals": {"0": 5}}, "history.proposals"),
        ({"proposals": [[1, 2, 3]]}, "history.proposals[0]"),
        ({"proposals": [[5, 1], ["x", 1]]}, "history.proposals[1]"),
        ({"proposals": [[-1, 1]]}, "history.proposals[0][0]"),
        ({"proposals": [[1, -1]]}, "history.proposals[0][1]"),
        ({"changes": [[1, 1.5]]}, "history.changes[0][1]"),
    ],
)
def test_parse_history_names_the_field(doc: object, field: str) -> None:
    with pytest.raises(BehaviorError) as err:
        parse_history(doc, NOW)
    assert [f for f, _ in err.value.errors] == [field]
