"""docs/policies.md describes every field and value the policy parser accepts, and its examples
are accepted (or, for the pitfall, refused) exactly as it says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from app.core.policy import CONTROLLED_VALUES, TARGET_KINDS
from app.core.recommendation import RESOURCES
from app.core.update_mode import UPDATE_MODES
from app.core.update_policy import BOOST_TYPES, CHANGE_REQUIREMENTS
from app.documents.policy import (
    CONTAINER_FIELDS,
    POLICY_FIELDS,
    PolicyInvalid,
    parse_policy,
)
from app.documents.selector import SELECTOR_FIELDS
from app.documents.stored import READ_ONLY
from app.documents.target import TARGET_FIELDS
from app.documents.update_fields import CPU_BOOST_FIELDS, REQUIREMENT_FIELDS, WINDOW_FIELDS

ROOT = Path(__file__).parents[2]
DOC = (ROOT / "docs" / "policies.md").read_text()
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", DOC, re.S)
FIELDS_TABLE = DOC.split("## Fields", 1)[1].split("\n## ", 1)[0]


def table_fields(text: str) -> set[str]:
    return {m for m in re.findall(r"^\| `([^`]+)` \|", text, re.M)}


def test_every_field_of_the_document_model_has_a_row() -> None:
    documented = table_fields(FIELDS_TABLE)
    expected = (
        POLICY_FIELDS
        | {f"target.{f}" for f in TARGET_FIELDS}
        | {f"target.selector.{f}" for f in SELECTOR_FIELDS}
        | {f"containerPolicies[].{f}" for f in CONTAINER_FIELDS}
        | {f"evictionRequirements[].{f}" for f in REQUIREMENT_FIELDS}
        | {"startupBoost.cpu"}
        | {f"startupBoost.cpu.{f}" for f in CPU_BOOST_FIELDS}
        | {f"observationWindow.{f}" for f, *_ in WINDOW_FIELDS}
        | (set(READ_ONLY) - {"status"})  # status: scalers only
    )
    assert expected - documented == set()
    assert documented - expected == set()  # nothing documented that the parser refuses


def test_every_value_of_an_enumerated_field_is_named() -> None:
    values = (*UPDATE_MODES, *TARGET_KINDS, *CONTROLLED_VALUES, *RESOURCES, "Auto", "*")
    for value in (*values, *CHANGE_REQUIREMENTS, *BOOST_TYPES):
        assert f"`{value}`" in DOC, value


def test_the_readme_links_the_reference() -> None:
    assert "(docs/policies.md)" in (ROOT / "README.md").read_text()


@pytest.mark.parametrize(
    "text", [b for lang, b in BLOCKS if lang == "yaml" and "updateMode: Off\n" not in b]
)
def test_every_example_is_accepted(text: str) -> None:
    for doc in yaml.safe_load_all(text):
        parse_policy(doc)


def test_the_unquoted_off_example_is_refused_with_the_documented_message() -> None:
    [pitfall] = [b for lang, b in BLOCKS if lang == "yaml" and "updateMode: Off\n" in b]
    [message] = [b.strip() for lang, b in BLOCKS if lang == "text" and "updateMode: false" in b]
    with pytest.raises(PolicyInvalid) as e:
        parse_policy(yaml.safe_load(pitfall))
    assert str(e.value) == message
    quoted = yaml.safe_load(pitfall.replace("updateMode: Off", 'updateMode: "Off"'))
    assert parse_policy(quoted).update_mode == "Off"


def test_defaults_are_the_parsers() -> None:
    p = parse_policy({"name": "a", "namespace": "b"})
    assert p.update_mode == "Off" and p.min_replicas is None and p.container_policies == ()
    [cp] = parse_policy(
        {"name": "a", "namespace": "b", "containerPolicies": [{}]}
    ).container_policies
    assert (cp.container_name, cp.mode, cp.controlled_values) == ("*", "Auto", "RequestsAndLimits")
    assert cp.controlled_resources == RESOURCES and cp.min_allowed == cp.max_allowed == {}
    row = {
        r.split(" | ")[0].strip("| `"): r.split(" | ")[1]
        for r in FIELDS_TABLE.splitlines()
        if r.startswith("| `")
    }
    assert row["updateMode"] == "`Off`"
    assert row["containerPolicies[].containerName"] == "`*`"
    assert row["containerPolicies[].mode"] == "`Auto`"
    assert row["containerPolicies[].controlledValues"] == "`RequestsAndLimits`"
    assert row["containerPolicies[].controlledResources"] == "`[cpu, memory]`"
