"""A policy's `nodeGroupLabel` (app/documents/node_group_fields.py): a node label key as Kubernetes
validates one, only where the policy may govern a DaemonSet, stored as written."""

from __future__ import annotations

from typing import Any

import pytest

from app.documents.policy import PolicyInvalid, parse_policy

TYPE = "node.kubernetes.io/instance-type"


def doc(**fields: Any) -> dict[str, Any]:
    return {
        "name": "agent",
        "namespace": "ops",
        "target": {"kind": "DaemonSet", "name": "agent"},
        **fields,
    }


@pytest.mark.parametrize("label", [TYPE, "pool", "example.com/tier", "a" * 63, "x.y_z-1"])
def test_a_label_key_groups_the_daemonset(label: str) -> None:
    assert parse_policy(doc(nodeGroupLabel=label)).node_group_label == label


def test_no_label_or_null_is_sized_as_a_whole() -> None:
    assert parse_policy(doc()).node_group_label is None
    assert parse_policy(doc(nodeGroupLabel=None)).node_group_label is None


@pytest.mark.parametrize(
    ("label", "message"),
    [
        ("", "must be a non-empty label key"),
        (7, "must be a non-empty label key"),
        ("-pool", "a qualified name must consist of"),
        ("a" * 64, "at most 63 characters"),
        ("Example.com/tier", "the prefix must be a DNS subdomain"),
        ("/tier", "the prefix must be a DNS subdomain"),
        ("a/b/c", "the prefix must be a DNS subdomain"),
    ],
)
def test_a_bad_label_key_is_named(label: Any, message: str) -> None:
    with pytest.raises(PolicyInvalid) as e:
        parse_policy(doc(nodeGroupLabel=label))
    [error] = e.value.errors
    assert error.field == "nodeGroupLabel"
    assert error.message.startswith("must be a node label key: ")
    assert message in error.message


def test_only_a_policy_that_may_govern_a_daemonset_takes_one() -> None:
    with pytest.raises(PolicyInvalid) as e:
        parse_policy(doc(target={"kind": "Deployment", "name": "web"}, nodeGroupLabel=TYPE))
    [error] = e.value.errors
    assert (error.field, error.message) == (
        "nodeGroupLabel",
        "only a DaemonSet's pods are sized per node group; target.kind is Deployment",
    )
    namespace_wide = {"name": "all", "namespace": "ops", "nodeGroupLabel": TYPE}
    assert parse_policy(namespace_wide).node_group_label == TYPE
    default = {"name": "all", "namespace": "*", "nodeGroupLabel": TYPE}
    assert parse_policy(default).node_group_label == TYPE
