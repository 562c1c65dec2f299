"""Policy documents: good ones parse into what gets applied; bad ones name every field."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from app.core.quantity import amount as quantity_amount
from app.documents.policy import PolicyInvalid, parse_policy

GOOD = {
    "name": "web",
    "namespace": "shop",
    "target": {"kind": "Deployment", "name": "web"},
    "updateMode": "Auto",
    "minReplicas": 2,
    "containerPolicies": [
        {
            "containerName": "app",
            "minAllowed": {"cpu": "100m", "memory": "128Mi"},
            "maxAllowed": {"cpu": "2"},
        },
        {"containerName": "*", "mode": "Off"},
        {
            "containerName": "proxy",
            "controlledResources": ["memory"],
            "controlledValues": "RequestsOnly",
        },
    ],
}


def test_good_policy() -> None:
    p = parse_policy(GOOD)
    assert (p.namespace, p.target_kind, p.target_name, p.update_mode) == (
        "shop",
        "Deployment",
        "web",
        "Recreate",
    )
    app, star, proxy = p.container_policies
    assert app.min_allowed == {"cpu": 100, "memory": 134_217_728}
    assert app.max_allowed == {"cpu": 2000}
    assert star.mode == "Off"
    assert proxy.controlled_resources == ("memory",)
    assert proxy.controlled_values == "RequestsOnly"


def test_cluster_default_needs_no_target() -> None:
    p = parse_policy({"name": "default", "namespace": "*", "updateMode": "Initial"})
    assert p.target_kind is None and p.container_policies == ()


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"name": "Web_1"}, "name", "lower-case"),
        ({"namespace": None}, "namespace", "required"),
        ({"target": {"kind": "Pod", "name": "x"}}, "target.kind", "one of"),
        ({"target": {"kind": "Deployment"}}, "target.name", "required"),
        ({"target": "web"}, "target", "must be an object"),
        ({"updateMode": "Sometimes"}, "updateMode", "not one of"),
        ({"updateMode": False}, "updateMode", 'unquoted Off as false; quote it: updateMode: "Off"'),
        ({"updateMode": True}, "updateMode", "boolean (YAML reads unquoted On, Off, Yes, No"),
        ({"containerPolicies": [{"mode": False}]}, "containerPolicies[0].mode", 'mode: "Off"'),
        (
            {"containerPolicies": [{"controlledValues": False}]},
            "containerPolicies[0].controlledValues",
            "expected one of RequestsAndLimits, RequestsOnly",
        ),
        ({"minReplicas": 0}, "minReplicas", ">= 1"),
        ({"minReplicas": True}, "minReplicas", ">= 1"),
        ({"colour": "red"}, "colour", "unknown field"),
        ({"containerPolicies": {}}, "containerPolicies", "must be a list"),
        (
            {"containerPolicies": [{"minAllowed": {"cpu": "lots"}}]},
            "containerPolicies[0].minAllowed.cpu",
            "not a Kubernetes quantity",
        ),
        (
            {"containerPolicies": [{"minAllowed": {"cpu": "-1"}}]},
            "containerPolicies[0].minAllowed.cpu",
            "negative",
        ),
        (
            {"containerPolicies": [{"maxAllowed": {"gpu": "1"}}]},
            "containerPolicies[0].maxAllowed.gpu",
            "unknown resource",
        ),
        (
            {"containerPolicies": [{"minAllowed": {"cpu": "2"}, "maxAllowed": {"cpu": "1"}}]},
            "containerPolicies[0].minAllowed.cpu",
            "greater than maxAllowed",
        ),
        ({"containerPolicies": [{"mode": "Manual"}]}, "containerPolicies[0].mode", "not one of"),
        (
            {"containerPolicies": [{"controlledResources": ["disk"]}]},
            "containerPolicies[0].controlledResources",
            "list of cpu",
        ),
        (
            {"containerPolicies": [{"controlledValues": "LimitsOnly"}]},
            "containerPolicies[0].controlledValues",
            "not one of",
        ),
        (
            {"containerPolicies": [{"containerName": "a"}, {"containerName": "a"}]},
            "containerPolicies[1].containerName",
            "twice",
        ),
        (
            {"containerPolicies": [{"containerName": "a", "cpu": "1"}]},
            "containerPolicies[0].cpu",
            "unknown field",
        ),
        ({"namespace": "*"}, "target", "cannot have a target"),
        (
            {"containerPolicies": [{"integerCPU": "true"}]},
            "containerPolicies[0].integerCPU",
            "true or false",
        ),
    ],
)
def test_bad_fields_are_named(change: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(PolicyInvalid) as err:
        parse_policy({**GOOD, **change})
    fields = {e.field: e.message for e in err.value.errors}
    assert field in fields, fields
    assert message in fields[field]


def test_every_error_is_reported_at_once() -> None:
    with pytest.raises(PolicyInvalid) as err:
        parse_policy({"name": "", "namespace": "", "updateMode": "x", "minReplicas": -1})
    assert {e.field for e in err.value.errors} == {"name", "namespace", "updateMode", "minReplicas"}


def test_not_an_object() -> None:
    with pytest.raises(PolicyInvalid):
        parse_policy(["web"])


@pytest.mark.parametrize(
    ("resource", "text", "amount"),
    [
        ("cpu", "250m", 250),
        ("cpu", "1.5", 1500),
        ("cpu", "0.1m", 1),
        ("cpu", 2, 2000),
        ("memory", "512Mi", 536_870_912),
        ("memory", "1G", 10**9),
        ("memory", "1.5", 2),
    ],
)
def test_quantities_round_up(resource: str, text: str, amount: int) -> None:
    assert quantity_amount(resource, text) == amount


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({**GOOD, "name": "web\n"}, "name"),
        ({**GOOD, "namespace": "shop\n"}, "namespace"),
        ({**GOOD, "target": {"kind": "Deployment", "name": "web\n"}}, "target.name"),
        (
            {**GOOD, "containerPolicies": [{"containerName": "app\n"}]},
            "containerPolicies[0].containerName",
        ),
    ],
)
def test_a_trailing_newline_is_not_part_of_a_valid_name(doc: dict[str, object], field: str) -> None:
    with pytest.raises(PolicyInvalid) as e:
        parse_policy(doc)
    assert [err.field for err in e.value.errors] == [field]


def test_naive_database_times_are_utc_whatever_the_local_zone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SQLite hands back naive datetimes of what was stored in UTC; read as local time, a policy
    changed a minute ago would look hours old (or in the future) to the updater's settle check."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        stored = datetime(2026, 11, 23, 12, 0, 0)  # naive, UTC
        p = parse_policy(
            {"name": "web", "namespace": "shop", "updateMode": "Recreate"},
            created=stored,
            changed=stored + timedelta(minutes=5),
        )
        expected = datetime(2026, 11, 23, 12, 0, 0, tzinfo=UTC).timestamp()
        assert p.created == expected
        assert p.changed == expected + 300
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
