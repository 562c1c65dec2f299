"""The conditions of a workload's recommendation (app/core/conditions.py), from what the
recommender knows: VPA's types set as VPA's recommender sets them, rightsizer's own, each with a
reason and a message."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from app.core.conditions import (
    CONFIG_DEPRECATED,
    CONFIG_UNSUPPORTED,
    FETCHING_HISTORY,
    LIMITED_BY_LIMIT_RANGE,
    LIMITED_BY_POLICY,
    LOW_CONFIDENCE,
    NO_PODS_MATCHED,
    RECOMMENDATION_PROVIDED,
    TYPES,
    Condition,
    WorkloadFacts,
    limit_range_notes,
    recommender_conditions,
    sort_key,
    target_problem,
)
from app.core.policy import Policy
from app.core.quantity import amount
from app.core.recommendation import Recommendation
from app.core.resources import Resources
from app.core.sizing.limitrange import LimitRangeItem, parse_limit_range
from app.core.sizing.patch import UPDATES_ANNOTATION
from app.core.update_mode import UpdateMode
from tests.support.pods import container, pod

MI = 1024 * 1024
REC = Recommendation(
    Resources(250, 256 * MI),
    Resources(100, 128 * MI),
    Resources(500, 512 * MI),
    Resources(250, 256 * MI),
)
POLICY = Policy("web", "shop", "Deployment", "web", update_mode=UpdateMode.RECREATE)


def by_type(conditions: list[Condition]) -> dict[str, Condition]:
    return {c.type: c for c in conditions}


def test_a_workload_with_a_recommendation_has_it_provided_and_nothing_else() -> None:
    facts = WorkloadFacts({"app": REC}, {"app": 86400.0})
    assert recommender_conditions(facts, POLICY, 3600) == [
        Condition(RECOMMENDATION_PROVIDED, "True")
    ]


def test_no_pods_is_reported_as_vpa_reports_it() -> None:
    facts = WorkloadFacts({}, {}, has_pods=False)
    found = by_type(recommender_conditions(facts, POLICY, 3600))
    assert found[NO_PODS_MATCHED] == Condition(
        NO_PODS_MATCHED, "True", "NoPodsMatched", "No pods match it"
    )
    provided = found[RECOMMENDATION_PROVIDED]
    assert (provided.status, provided.reason) == ("False", "NoPodsMatched")


def test_pods_without_usage_yet_say_so() -> None:
    provided = by_type(recommender_conditions(WorkloadFacts(), None, 3600))[RECOMMENDATION_PROVIDED]
    assert (provided.status, provided.reason) == ("False", "NoUsage")


def test_an_unusable_target_is_config_unsupported() -> None:
    facts = WorkloadFacts({}, {}, has_pods=False, target_problem="Cannot read target")
    found = by_type(recommender_conditions(facts, POLICY, 3600))
    assert found[CONFIG_UNSUPPORTED].message == "Cannot read target"
    assert found[RECOMMENDATION_PROVIDED].reason == CONFIG_UNSUPPORTED


def test_short_history_is_low_confidence_naming_the_containers() -> None:
    facts = WorkloadFacts({"app": REC, "log": REC}, {"app": 600.0, "log": 7200.0})
    low = by_type(recommender_conditions(facts, POLICY, 3600))[LOW_CONFIDENCE]
    assert low.reason == "ShortHistory"
    assert "app (under 1h)" in low.message and "log" not in low.message


def test_the_short_history_message_moves_once_an_hour_not_every_run() -> None:
    def message(app_seconds: float) -> str:
        facts = WorkloadFacts({"app": REC}, {"app": app_seconds})
        return by_type(recommender_conditions(facts, POLICY, 2 * 86400))[LOW_CONFIDENCE].message

    assert message(60) == message(59 * 60)  # one run a minute: one row written, not 59
    assert message(3600) == message(3600 + 59 * 60) != message(59 * 60)
    assert "app (1h)" in message(3600) and "app (23h)" in message(86399)
    assert "app (1d)" in message(86400) and message(86400) == message(86400 + 23 * 3600)


def test_fetching_deprecated_and_policy_limits() -> None:
    capped = replace(REC, target=Resources(100, 256 * MI))  # maxAllowed cpu 100m
    auto = replace(POLICY, deprecations=("updateMode Auto is deprecated",))
    facts = WorkloadFacts({"app": capped}, {"app": 86400.0}, fetching=True)
    found = by_type(recommender_conditions(facts, auto, 3600))
    assert found[FETCHING_HISTORY].status == "True"
    assert found[CONFIG_DEPRECATED].message == "updateMode Auto is deprecated"
    assert found[LIMITED_BY_POLICY].message == "app: cpu 250m capped at maxAllowed 100m"


def test_target_problems() -> None:
    assert target_problem("Deployment", "ghost", None) == (
        "Cannot read target Deployment ghost: it does not exist"
    )
    owned: dict[str, Any] = {
        "metadata": {
            "name": "web-5d9",
            "ownerReferences": [{"kind": "Deployment", "name": "web", "controller": True}],
        }
    }
    problem = target_problem("ReplicaSet", "web-5d9", owned)
    assert problem is not None and "parent controller (Deployment web)" in problem
    assert target_problem("Deployment", "web", {"metadata": {"name": "web"}}) is None


def ranges(*items: dict[str, Any]) -> list[LimitRangeItem]:
    return parse_limit_range({"spec": {"limits": list(items)}}, amount)


def test_limit_range_notes_say_what_caps_a_new_pod() -> None:
    p = pod(container("app", {"cpu": "100m", "memory": "256Mi"}))
    caps = ranges({"type": "Container", "max": {"cpu": "200m"}})  # default limit: the max
    [note] = limit_range_notes(p, {"app": REC}, POLICY, caps)
    assert note == "app: cpu capped to fit max in container LimitRange"
    facts = WorkloadFacts({"app": REC}, {"app": 86400.0}, limit_range_notes=[note])
    limited = by_type(recommender_conditions(facts, POLICY, 3600))[LIMITED_BY_LIMIT_RANGE]
    assert (limited.reason, limited.message) == ("LimitRange", note)
    assert limit_range_notes(p, {"app": REC}, POLICY, ()) == []
    # mode Off: what a sizing mode would give, all the same
    assert limit_range_notes(p, {"app": REC}, replace(POLICY, update_mode=UpdateMode.OFF), caps)


def test_a_pod_already_capped_keeps_its_recorded_notes() -> None:
    record = {
        "policy": "shop/web",
        "containers": {
            "app": {
                "target": {"cpu": "250m", "memory": "256Mi"},
                "requests": {"cpu": "200m", "memory": "256Mi"},
                "notes": ["cpu capped to fit max in container LimitRange"],
            }
        },
    }
    p = pod(
        container("app", {"cpu": "200m", "memory": "256Mi"}),
        annotations={UPDATES_ANNOTATION: json.dumps(record)},
    )
    caps = ranges({"type": "Container", "max": {"cpu": "200m"}})
    assert limit_range_notes(p, {"app": REC}, POLICY, caps) == [
        "app: cpu capped to fit max in container LimitRange"
    ]


def test_types_are_shown_in_one_order() -> None:
    assert sorted(reversed(TYPES), key=sort_key) == list(TYPES)
    assert sort_key("SomethingElse") == len(TYPES)
