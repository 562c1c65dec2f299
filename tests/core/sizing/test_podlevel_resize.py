"""The releases' rules for resizing a pod with pod-level resources in place (KEP-5419)."""

from __future__ import annotations

import pytest

from app.core.sizing.podlevel_resize import FEATURE, pod_level_refusal

DECLARES = (FEATURE,)


@pytest.mark.parametrize("minor", [33, 34])
def test_releases_before_the_gate_refuse_any_resize_of_such_a_pod(minor: int) -> None:
    for changes in (True, False):
        why = pod_level_refusal(minor, changes, "n1", DECLARES)
        assert why is not None and f"1.{minor} cannot resize" in why and "KEP-5419" in why


def test_the_alpha_release_resizes_only_on_a_node_that_declares_the_feature() -> None:
    assert pod_level_refusal(35, True, "n1", DECLARES) is None
    for declared in ((), None, ("SomethingElse",)):
        why = pod_level_refusal(35, True, "n1", declared)
        assert why is not None and "off by default" in why and "node n1" in why
    # a resize of the containers alone is refused as well while the gate is off
    assert pod_level_refusal(35, False, "n1", ()) is not None


@pytest.mark.parametrize("minor", [36, 37])
def test_from_beta_a_pod_level_change_needs_a_node_declaring_the_feature(minor: int) -> None:
    assert pod_level_refusal(minor, True, "n1", DECLARES) is None
    why = pod_level_refusal(minor, True, "n1", ())
    assert why is not None and f"node n1 does not declare {FEATURE}" in why
    assert f"1.{minor}" in why


@pytest.mark.parametrize("minor", [36, 37])
def test_from_beta_the_containers_alone_resize_on_any_node(minor: int) -> None:
    assert pod_level_refusal(minor, False, "n1", ()) is None


def test_an_unknown_node_or_release_leaves_it_to_the_api_server() -> None:
    assert pod_level_refusal(37, True, "n1", None) is None
    assert pod_level_refusal(None, True, "n1", ()) is None
