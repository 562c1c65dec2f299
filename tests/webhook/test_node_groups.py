"""POST /mutate for DaemonSet pods sized per node group (SQLite and PostgreSQL): a new pod gets the
recommendation of the group of the node its affinity names (as the DaemonSet controller writes
it), the DaemonSet-wide one when the node or its group is unknown or the policy groups by another
label, and a Deployment's pod is never grouped."""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from app.webhook import webhook_of
from tests.support.node_groups import TYPE, add_group
from tests.support.pods import amounts, apply_strictly, container
from tests.support.reviews import (
    MI,
    add_policy,
    add_recommendation,
    patch_of,
    post,
    refresh,
    review,
)

DS = ("shop", "DaemonSet", "agent")
NODES = {"small-0": {TYPE: "m5.large"}, "large-0": {TYPE: "m5.4xlarge"}, "bare-0": {}}


def daemon_pod(node: str) -> dict[str, Any]:
    """As the DaemonSet controller creates it: its node in a required node affinity."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": "agent-",
            "namespace": "shop",
            "labels": {"app": "agent"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "DaemonSet",
                    "name": "agent",
                    "uid": "6f1b7c9e-0000-4000-8000-000000000002",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": [node]}
                                ]
                            }
                        ]
                    }
                }
            },
            "containers": [container("agent", {"cpu": "100m", "memory": "256Mi"})],
        },
    }


def sized(client: FlaskClient, pod: dict[str, Any]) -> dict[str, int]:
    body = post(client, review(pod)).get_json()["response"]
    patched = apply_strictly(pod, patch_of(body))
    return amounts(patched["spec"]["containers"][0], "requests")


def setup(app: Flask, label: str | None = TYPE) -> None:
    add_policy(
        "Initial",
        name="agent",
        target_kind="DaemonSet",
        target_name="agent",
        node_group_label=label,
    )
    add_recommendation("agent", 300, 500 * MI, workload=DS)  # the DaemonSet-wide one
    add_group("m5.large", 60, 300 * MI, namespace="shop")
    add_group("m5.4xlarge", 240, 900 * MI, namespace="shop")
    add_group("<none>", 50, 280 * MI, namespace="shop")
    webhook_of(app).node_labels = NODES.get
    refresh(app)


def test_each_new_pod_gets_the_size_of_its_nodes_group(app: Flask, client: FlaskClient) -> None:
    setup(app)
    assert sized(client, daemon_pod("small-0")) == {"cpu": 60, "memory": 300 * MI}
    assert sized(client, daemon_pod("large-0")) == {"cpu": 240, "memory": 900 * MI}
    assert sized(client, daemon_pod("bare-0")) == {"cpu": 50, "memory": 280 * MI}  # no label


def test_an_unknown_node_or_group_gets_the_daemonset_wide_size(
    app: Flask, client: FlaskClient
) -> None:
    setup(app)
    NODES["metal-0"] = {TYPE: "m7.metal"}  # a node type without a recommendation yet
    try:
        assert sized(client, daemon_pod("metal-0")) == {"cpu": 300, "memory": 500 * MI}
    finally:
        del NODES["metal-0"]
    assert sized(client, daemon_pod("gone-0")) == {"cpu": 300, "memory": 500 * MI}
    unbound = daemon_pod("small-0")
    del unbound["spec"]["affinity"]  # no node named: Kubernetes' GetTargetNodeName errs
    assert sized(client, unbound) == {"cpu": 300, "memory": 500 * MI}
    webhook_of(app).node_labels = None  # nodes not watched (no cluster)
    assert sized(client, daemon_pod("large-0")) == {"cpu": 300, "memory": 500 * MI}


def test_groups_of_another_label_or_of_a_policy_without_one_are_not_used(
    app: Flask, client: FlaskClient
) -> None:
    setup(app, label="topology.kubernetes.io/zone")
    assert sized(client, daemon_pod("large-0")) == {"cpu": 300, "memory": 500 * MI}


def test_a_pod_admitted_before_the_nodes_are_listed_waits_for_them(
    app: Flask, client: FlaskClient
) -> None:
    setup(app)
    listed: dict[str, dict[str, str]] = {}
    hook = webhook_of(app)
    hook.node_labels = listed.get
    waits: list[float] = []

    def first_listing(timeout: float) -> bool:  # the informer lists while the pod waits
        waits.append(timeout)
        listed.update(NODES)
        return True

    hook.node_sync = first_listing
    assert sized(client, daemon_pod("large-0")) == {"cpu": 240, "memory": 900 * MI}
    assert waits == [1.0]  # FIRST_LOAD_WAIT, once
    assert sized(client, daemon_pod("small-0")) == {"cpu": 60, "memory": 300 * MI}
    assert waits == [1.0]  # listed: no more waiting
