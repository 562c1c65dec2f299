"""A policy's `clusters` (app.documents.cluster_target): names or a label selector, each bad
field named; app.core.cluster_target matches a cluster by name, id or labels."""

from __future__ import annotations

from typing import Any

import pytest

from app.documents.cluster_target import parse_cluster_target
from app.documents.fields import FieldError
from app.documents.policy import PolicyInvalid, parse_policy

POLICY = {"name": "web", "namespace": "shop"}


@pytest.mark.parametrize(
    ("clusters", "field"),
    [
        ("prod", "clusters"),
        ({}, "clusters"),
        ({"names": ["a"], "selector": {}}, "clusters"),
        ({"names": []}, "clusters.names"),
        ({"names": ["a", ""]}, "clusters.names[1]"),
        ({"names": ["a", 7]}, "clusters.names[1]"),
        ({"selector": {"matchLabels": {"env": 1}}}, "clusters.selector.matchLabels.env"),
        ({"selector": {"matchLables": {}}}, "clusters.selector.matchLables"),
        ({"selector": {}, "other": 1}, "clusters.other"),
    ],
)
def test_a_bad_target_names_its_field(clusters: Any, field: str) -> None:
    with pytest.raises(PolicyInvalid) as e:
        parse_policy({**POLICY, "clusters": clusters})
    assert field in {err.field for err in e.value.errors}


@pytest.mark.parametrize(
    ("clusters", "east", "west"),
    [
        ({"names": ["east"]}, True, False),
        ({"names": ["uid-west"]}, False, True),
        ({"selector": {"matchLabels": {"env": "prod"}}}, True, False),
        ({"selector": {"matchExpressions": [{"key": "env", "operator": "Exists"}]}}, True, True),
        ({"selector": {}}, True, True),
    ],
)
def test_a_target_matches_by_name_id_or_labels(clusters: Any, east: bool, west: bool) -> None:
    parse_policy({**POLICY, "clusters": clusters})  # valid
    errors: list[FieldError] = []
    target = parse_cluster_target({"clusters": clusters}, errors)
    assert target is not None and errors == []
    assert target.matches("east", "uid-east", {"env": "prod"}) is east
    assert target.matches("west", "uid-west", {"env": "dev"}) is west
