"""`recommender` and `recommenderParams` in policy documents, and their reference in
docs/policies.md: every strategy and every parameter, with its default and range, as the code has
them."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest

from app.config import ENVIRONMENT, recommender_env_var
from app.core.policy import Policy
from app.core.recommend.settings import RecommenderSettings
from app.core.recommend.strategies import NAMES, REGISTRY, VPA, Param, chosen, configure
from app.core.recommend.strategies.base import ROUNDING_PARAMS
from app.documents.policy import PolicyInvalid, parse_policy

DOC = (Path(__file__).parents[2] / "docs" / "policies.md").read_text()
SECTION = DOC.split("## Recommender", 1)[1].split("\n## ", 1)[0]
BASE = {"name": "web", "namespace": "shop"}


def default_text(p: Param) -> str:
    """A parameter's default as documented: its value, or the setting it falls back to."""
    if p.default is None:
        assert p.inherits is not None
        return p.inherits
    if isinstance(p.default, bool):
        return "true" if p.default else "false"
    return f"{p.default:g}"


def test_every_parameter_of_every_strategy_is_documented_as_the_code_has_it() -> None:
    rows = set(re.findall(r"^\| `([^`]+)` \| `([^`]+)` \| `([^`]+)` \| ([^|]+) \|", SECTION, re.M))
    expected = {
        ("every" if p in ROUNDING_PARAMS else name, p.name, default_text(p), p.allowed())
        for name in NAMES
        for p in REGISTRY[name].params
    }
    assert {(a, b, c, d.strip()) for a, b, c, d in rows} == expected
    for name in NAMES:
        assert f"| `{name}`" in SECTION  # and each strategy in the table of what it does
    for name in NAMES:
        assert set(ROUNDING_PARAMS) <= set(REGISTRY[name].params)  # "every" means every


def test_a_parameter_falling_back_to_a_setting_names_its_variable() -> None:
    documented = set(ENVIRONMENT) | {
        recommender_env_var(f.name) for f in fields(RecommenderSettings)
    }
    for name in NAMES:
        for p in REGISTRY[name].params:
            if p.setting is not None:
                assert p.inherits == recommender_env_var(p.setting)
            if p.default is None:
                assert p.inherits in documented


def test_the_strategy_and_its_parameters_are_parsed() -> None:
    p = parse_policy(
        {**BASE, "recommender": "balanced", "recommenderParams": {"memoryTimeAboveWeight": 20}}
    )
    assert p.recommender.name == "balanced"
    assert p.recommender.params["memoryTimeAboveWeight"] == 20.0
    assert parse_policy(BASE).recommender.name == "vpa"


@pytest.mark.parametrize(
    ("name", "params"),
    [
        (None, None),
        ("vpa", {"oomBumpUpRatio": 1.5, "memoryAggregationIntervalCount": 4}),
        ("krr-simple", {"cpuPercentile": 90}),
        ("balanced", {"memoryTimeAboveWeight": 20, "historyDuration": 48}),
    ],
)
def test_a_policy_holds_the_choice_the_recommender_makes_the_documents_strategy_of(
    name: str | None, params: dict[str, float] | None
) -> None:
    """The policy holds plain values (app.core.strategy_choice); the strategy made of them is the
    one the document configures, defaults included."""
    doc = {**BASE, "recommender": name, "recommenderParams": params}
    choice = parse_policy({k: v for k, v in doc.items() if v is not None}).recommender
    assert chosen(choice) == configure(name, params)
    assert chosen(choice).params == choice.params
    assert chosen(Policy("web", "shop").recommender) == VPA


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({"recommender": 3}, "recommender"),
        ({"recommender": "vpa", "recommenderParams": {"x": 1}}, "recommenderParams.x"),
        ({"recommenderParams": {"cpuPercentile": 90}}, "recommenderParams.cpuPercentile"),
        ({"recommender": "krr-simple", "recommenderParams": "fast"}, "recommenderParams"),
        (
            {"recommender": "krr-simple", "recommenderParams": {"pointsRequired": 0}},
            "recommenderParams.pointsRequired",
        ),
    ],
)
def test_a_bad_field_is_named(doc: dict[str, object], field: str) -> None:
    with pytest.raises(PolicyInvalid) as e:
        parse_policy({**BASE, **doc})
    assert [err.field for err in e.value.errors] == [field]
