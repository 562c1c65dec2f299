"""The policy fields of how and when pods are updated (app/documents/update_fields.py): read into
core values as VPA 1.7 reads them, and every bad one named with its path."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.update_policy import EvictionRequirement, StartupBoost
from app.documents.policy import PolicyInvalid, parse_policy


def policy(**fields: Any) -> dict[str, Any]:
    return {"name": "web", "namespace": "shop", "updateMode": "InPlace", **fields}


def errors(doc: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(PolicyInvalid) as e:
        parse_policy(doc)
    return {f.field: f.message for f in e.value.errors}


def test_every_field_is_read_into_the_core_policy() -> None:
    p = parse_policy(
        policy(
            evictionRequirements=[
                {"resources": ["cpu", "memory"], "changeRequirement": "TargetHigherThanRequests"},
                {"resources": ["memory"], "changeRequirement": "TargetLowerThanRequests"},
            ],
            evictAfterOOMSeconds=30,
            inPlaceSkipDisruptionBudget=True,
            startupBoost={"cpu": {"type": "Factor", "factor": 3, "durationSeconds": 10}},
            containerPolicies=[
                {
                    "containerName": "envoy",
                    "startupBoost": {"cpu": {"type": "Quantity", "quantity": "250m"}},
                },
                {"containerName": "*", "mode": "Auto"},
            ],
        )
    )
    assert p.update_mode == "InPlace"
    assert p.eviction_requirements == (
        EvictionRequirement(("cpu", "memory"), "TargetHigherThanRequests"),
        EvictionRequirement(("memory",), "TargetLowerThanRequests"),
    )
    assert p.evict_after_oom_seconds == 30
    assert p.in_place_skip_disruption_budget is True
    assert p.startup_boost == StartupBoost("Factor", factor=3, duration_seconds=10)
    assert dict(p.container_boosts) == {"envoy": StartupBoost("Quantity", quantity=250)}
    assert p.deprecations == ()


def test_defaults_leave_everything_to_the_global_settings() -> None:
    p = parse_policy(policy())
    assert p.eviction_requirements == ()
    assert p.evict_after_oom_seconds is None and p.in_place_skip_disruption_budget is None
    assert p.startup_boost is None and dict(p.container_boosts) == {}


def test_a_boost_without_cpu_is_no_boost_as_in_vpa() -> None:
    assert parse_policy(policy(startupBoost={})).startup_boost is None


def test_quantities_in_whole_millicores_as_numbers_or_strings() -> None:
    for value, milli in (("1", 1000), (2, 2000), (0.5, 500), ("1500m", 1500)):
        boost = {"cpu": {"type": "Quantity", "quantity": value}}
        assert parse_policy(policy(startupBoost=boost)).startup_boost == StartupBoost(
            "Quantity", quantity=milli
        )


def test_auto_is_accepted_and_reported_as_deprecated() -> None:
    p = parse_policy(policy(updateMode="Auto"))
    assert p.update_mode == "Recreate"
    assert p.deprecations and "Auto" in p.deprecations[0]


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"evictionRequirements": {"resources": ["cpu"]}}, "evictionRequirements", "list"),
        ({"evictionRequirements": ["x"]}, "evictionRequirements[0]", "object"),
        (
            {
                "evictionRequirements": [
                    {"resources": [], "changeRequirement": "TargetLowerThanRequests"}
                ]
            },
            "evictionRequirements[0].resources",
            "non-empty",
        ),
        (
            {
                "evictionRequirements": [
                    {"resources": ["gpu"], "changeRequirement": "TargetLowerThanRequests"}
                ]
            },
            "evictionRequirements[0].resources",
            "cpu and memory",
        ),
        (
            {"evictionRequirements": [{"resources": ["cpu"], "changeRequirement": "Higher"}]},
            "evictionRequirements[0].changeRequirement",
            "TargetHigherThanRequests",
        ),
        (
            {"evictionRequirements": [{"resources": ["cpu"]}]},
            "evictionRequirements[0].changeRequirement",
            "required",
        ),
        (
            {
                "evictionRequirements": [
                    {"resources": ["cpu"], "changeRequirement": "TargetLowerThanRequests", "x": 1}
                ]
            },
            "evictionRequirements[0].x",
            "unknown",
        ),
        ({"evictAfterOOMSeconds": 0}, "evictAfterOOMSeconds", ">= 1"),
        ({"evictAfterOOMSeconds": "60"}, "evictAfterOOMSeconds", "whole number"),
        ({"evictAfterOOMSeconds": True}, "evictAfterOOMSeconds", "whole number"),
        ({"inPlaceSkipDisruptionBudget": "yes"}, "inPlaceSkipDisruptionBudget", "true or false"),
        ({"startupBoost": []}, "startupBoost", "object"),
        ({"startupBoost": {"memory": {}}}, "startupBoost.memory", "unknown"),
        ({"startupBoost": {"cpu": {"factor": 2}}}, "startupBoost.cpu.type", "Factor, Quantity"),
        ({"startupBoost": {"cpu": {"type": "Factor"}}}, "startupBoost.cpu.factor", "required"),
        (
            {"startupBoost": {"cpu": {"type": "Factor", "factor": 0}}},
            "startupBoost.cpu.factor",
            ">= 1",
        ),
        (
            {"startupBoost": {"cpu": {"type": "Factor", "factor": 1.5}}},
            "startupBoost.cpu.factor",
            "whole",
        ),
        (
            {"startupBoost": {"cpu": {"type": "Factor", "factor": 2, "quantity": "1"}}},
            "startupBoost.cpu.quantity",
            "only with type Quantity",
        ),
        ({"startupBoost": {"cpu": {"type": "Quantity"}}}, "startupBoost.cpu.quantity", "required"),
        (
            {"startupBoost": {"cpu": {"type": "Quantity", "quantity": "0.0005"}}},
            "startupBoost.cpu.quantity",
            "whole number of millicores",
        ),
        (
            {"startupBoost": {"cpu": {"type": "Quantity", "quantity": "lots"}}},
            "startupBoost.cpu.quantity",
            "lots",
        ),
        (
            {"startupBoost": {"cpu": {"type": "Quantity", "quantity": "1", "durationSeconds": -1}}},
            "startupBoost.cpu.durationSeconds",
            ">= 0",
        ),
        (
            {
                "containerPolicies": [
                    {"containerName": "app", "startupBoost": {"cpu": {"type": "X"}}}
                ]
            },
            "containerPolicies[0].startupBoost.cpu.type",
            "Factor, Quantity",
        ),
    ],
)
def test_each_bad_field_is_named(fields: dict[str, Any], field: str, words: str) -> None:
    found = errors(policy(**fields))
    assert field in found, found
    assert words in found[field]


def test_every_problem_is_reported_at_once() -> None:
    found = errors(
        policy(
            evictAfterOOMSeconds=-5,
            inPlaceSkipDisruptionBudget=1,
            startupBoost={"cpu": {"type": "Factor"}},
            updateMode="InPlaceOnly",
        )
    )
    assert set(found) == {
        "evictAfterOOMSeconds",
        "inPlaceSkipDisruptionBudget",
        "startupBoost.cpu.factor",
        "updateMode",
    }


# --- observationWindow ---------------------------------------------------------------------------


def test_observation_window_is_read_and_defaults_where_left_out() -> None:
    from app.core.update_policy import ObservationWindow

    p = parse_policy(policy(observationWindow={"minIntervalSeconds": 600, "windowSeconds": 7200}))
    assert p.observation_window == ObservationWindow(
        min_history_seconds=None,
        min_interval_seconds=600,
        window_seconds=7200,
        max_replacements_per_replica=3,
    )
    full = parse_policy(
        policy(
            observationWindow={
                "minHistorySeconds": 86400,
                "minIntervalSeconds": 0,
                "windowSeconds": 1,
                "maxReplacementsPerReplica": 1,
            }
        )
    )
    assert full.observation_window == ObservationWindow(86400, 0, 1, 1)
    assert parse_policy(policy()).observation_window is None


@pytest.mark.parametrize(
    ("window", "field", "message"),
    [
        ("1h", "observationWindow", "must be an object such as {windowSeconds: 3600}"),
        ({"windowSeconds": 0}, "observationWindow.windowSeconds", "from 1 to 604800"),
        ({"windowSeconds": "3600"}, "observationWindow.windowSeconds", "whole number"),
        ({"minHistorySeconds": -1}, "observationWindow.minHistorySeconds", "from 0 to 604800"),
        ({"minIntervalSeconds": 1.5}, "observationWindow.minIntervalSeconds", "whole number"),
        ({"minIntervalSeconds": True}, "observationWindow.minIntervalSeconds", "whole number"),
        (
            {"maxReplacementsPerReplica": 0},
            "observationWindow.maxReplacementsPerReplica",
            "from 1 to 1000",
        ),
        ({"window": 60}, "observationWindow.window", "unknown field"),
    ],
)
def test_a_bad_observation_window_is_named_by_its_field(
    window: Any, field: str, message: str
) -> None:
    found = errors(policy(observationWindow=window))
    assert field in found and message in found[field], found
