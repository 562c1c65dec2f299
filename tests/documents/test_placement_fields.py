"""A policy's `placement` (app/documents/placement_fields.py): `default` or `waterLevel`, a bad
value named with the field, stored as None for the default."""

from __future__ import annotations

from typing import Any

import pytest

from app.documents.placement_fields import placement_document, stored_placement
from app.documents.policy import PolicyInvalid, parse_policy


def doc(**fields: Any) -> dict[str, Any]:
    return {"name": "web", "namespace": "shop", **fields}


def test_default_when_not_written_or_null() -> None:
    assert parse_policy(doc()).placement == "default"
    assert parse_policy(doc(placement=None)).placement == "default"


@pytest.mark.parametrize("value", ["default", "waterLevel"])
def test_each_value_is_kept(value: str) -> None:
    assert parse_policy(doc(placement=value)).placement == value


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("WaterLevel", "'WaterLevel'"),
        ("water-level", "'water-level'"),
        (1, "1"),
        (True, "a boolean"),
    ],
)
def test_a_bad_value_is_named(value: Any, shown: str) -> None:
    with pytest.raises(PolicyInvalid) as e:
        parse_policy(doc(placement=value, updateMode="Sometimes"))
    fields = {err.field: err.message for err in e.value.errors}
    assert fields["placement"] == f"{shown} is not one of default, waterLevel"
    assert "updateMode" in fields  # every problem at once


def test_stored_as_none_for_the_default_and_read_back() -> None:
    assert stored_placement(doc()) is None
    assert stored_placement(doc(placement="default")) is None
    assert stored_placement(doc(placement="waterLevel")) == "waterLevel"
    assert placement_document(None) == {}
    assert placement_document("waterLevel") == {"placement": "waterLevel"}
