"""Reading node JSON into a view (app.core.nodes.NodeView): what the updater's fit check reads."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.nodes import NodeView
from app.kube.cluster import trim_node


def node(**status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "n1", "labels": {"zone": "b", "arch": "arm64"}},
        "spec": {
            "taints": [
                {"key": "dedicated", "value": "batch", "effect": "NoSchedule"},
                {"key": "soon-gone", "effect": "PreferNoSchedule"},
            ]
        },
        "status": {
            "allocatable": {"cpu": "3920m", "memory": "15Gi"},
            "conditions": [{"type": "Ready", "status": "True"}],
            **status,
        },
    }


def test_a_ready_node_with_its_labels_taints_and_allocatable() -> None:
    view = NodeView.parse(node())
    assert view == NodeView(
        name="n1",
        labels=(("arch", "arm64"), ("zone", "b")),
        unschedulable=False,
        ready=True,
        taints=(("dedicated", "batch", "NoSchedule"), ("soon-gone", "", "PreferNoSchedule")),
        cpu_allocatable=3920,
        memory_allocatable=15 * 2**30,
    )
    assert view.takes_pods


def test_cordoned_or_not_ready_nodes_take_no_pods() -> None:
    cordoned = node()
    cordoned["spec"]["unschedulable"] = True
    assert not NodeView.parse(cordoned).takes_pods
    assert not NodeView.parse(node(conditions=[{"type": "Ready", "status": "Unknown"}])).takes_pods
    assert not NodeView.parse(node(conditions=None)).takes_pods


@pytest.mark.parametrize(
    ("allocatable", "cpu", "memory"),
    [
        ({}, 0, 0),  # absent counts as nothing free
        ({"cpu": "lots", "memory": "1Gi"}, None, 2**30),  # malformed: unknown
        ({"cpu": None, "memory": -1}, None, None),
    ],
)
def test_allocatable_absent_is_zero_and_malformed_is_unknown(
    allocatable: dict[str, Any], cpu: int | None, memory: int | None
) -> None:
    view = NodeView.parse(node(allocatable=allocatable))
    assert (view.cpu_allocatable, view.memory_allocatable) == (cpu, memory)


def test_fields_of_the_wrong_type_read_as_absent() -> None:
    view = NodeView.parse({"metadata": "x", "spec": {"taints": "all"}, "status": []})
    assert (view.name, view.labels, view.taints, view.ready) == ("", (), (), False)


def test_the_features_its_kubelet_declares_are_read_and_kept_by_the_cache() -> None:
    """status.declaredFeatures (NodeDeclaredFeatures): whether the node resizes pod-level
    resources in place (app.core.sizing.podlevel_resize)."""
    declared = node(declaredFeatures=["InPlacePodLevelResourcesVerticalScaling", 7])
    assert NodeView.parse(trim_node(declared)).declared_features == (
        "InPlacePodLevelResourcesVerticalScaling",
    )
    assert NodeView.parse(node()).declared_features == ()
