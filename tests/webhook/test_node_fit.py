"""POST /mutate caps a new pod's requests to fit the largest node it may run on, less the
DaemonSets there (kubernetes/autoscaler #4515, #7147, AEP #7397), from the webhook's node and
DaemonSet caches, and says so in the answer's audit annotation (SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from app.core.nodes import NodeView
from app.core.sizing.fit import Placement
from app.core.sizing.node_fit import DaemonTemplate
from app.webhook import webhook_of
from app.webhook.node_fit import NodeFit
from tests.support.pods import amounts, apply_strictly, assert_valid_pod, container, pod
from tests.support.reviews import (
    MI,
    add_policy,
    add_recommendation,
    patch_of,
    post,
    refresh,
    review,
)

GI = 1024 * MI


def node(name: str, cpu: str, memory: str, taints: list[dict[str, str]] | None = None) -> NodeView:
    return NodeView.parse(
        {
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {"taints": taints or []},
            "status": {
                "allocatable": {"cpu": cpu, "memory": memory},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }
    )


class Nodes:
    def __init__(self, *views: NodeView) -> None:
        self.list, self.version = list(views), "1"

    def views(self) -> list[NodeView]:
        return self.list

    def wait_listed(self, timeout: float) -> bool:
        return True


class Daemons:
    version = "1"

    def templates(self) -> list[DaemonTemplate]:
        return [DaemonTemplate("shop", "agent", Placement(), (500, GI))]

    def wait_listed(self, timeout: float) -> bool:
        return True


GPU_TAINT = {"key": "gpu", "value": "true", "effect": "NoSchedule"}
NODES = Nodes(
    node("small-0", "2", "4Gi"),
    node("big-0", "8", "32Gi"),
    node("gpu-0", "64", "256Gi", [GPU_TAINT]),
)


def answer_for(client: FlaskClient, p: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    body = post(client, review(p)).get_json()["response"]
    patched = apply_strictly(p, patch_of(body))
    assert_valid_pod(patched)
    return body, patched["spec"]["containers"][0]


def setup(app: Flask) -> None:
    add_policy("Initial")
    add_recommendation("app", 16000, 64 * GI)  # more than any node but the tainted one
    refresh(app)
    webhook_of(app).node_fit = NodeFit(NODES, Daemons())


def test_a_pod_larger_than_every_node_it_may_run_on_is_capped_at_the_largest(
    app: Flask, client: FlaskClient
) -> None:
    setup(app)
    p = pod(container("app", {"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"}))
    body, c = answer_for(client, p)
    # big-0: 8 cpu, 32Gi, less the agent DaemonSet's 500m and 1Gi
    assert amounts(c, "requests") == {"cpu": 7500, "memory": 31 * GI}
    assert amounts(c, "limits") == {"cpu": 15000, "memory": 31 * GI}  # ratios kept
    note = body["auditAnnotations"]["capped-to-node"]
    assert "capped to node big-0 (cpu 7500m, memory 31Gi allocatable less its DaemonSets)" in note


def test_a_pod_tolerating_a_larger_node_is_not_capped(app: Flask, client: FlaskClient) -> None:
    setup(app)
    tolerating = [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
    p = pod(container("app", {"cpu": "1", "memory": "1Gi"}))
    p["spec"]["tolerations"] = tolerating
    body, c = answer_for(client, p)
    assert amounts(c, "requests") == {"cpu": 16000, "memory": 64 * GI}
    assert "capped-to-node" not in body.get("auditAnnotations", {})


def test_a_node_selector_caps_at_the_node_it_names(app: Flask, client: FlaskClient) -> None:
    setup(app)
    p = pod(container("app", {"cpu": "1", "memory": "1Gi"}))
    p["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "small-0"}
    _, c = answer_for(client, p)
    assert amounts(c, "requests") == {"cpu": 1500, "memory": 3 * GI}


def test_without_nodes_known_the_pod_gets_its_recommendation(
    app: Flask, client: FlaskClient
) -> None:
    setup(app)
    webhook_of(app).node_fit = NodeFit(Nodes(), Daemons())  # not listed (yet), or not allowed
    _, c = answer_for(client, pod(container("app", {"cpu": "1", "memory": "1Gi"})))
    assert amounts(c, "requests") == {"cpu": 16000, "memory": 64 * GI}


def daemon_pod(daemonset: str, node_name: str) -> dict[str, Any]:
    """As the DaemonSet controller creates it: its node in a required node affinity."""
    p = pod(container("app", {"cpu": "100m", "memory": "256Mi"}))
    p["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "name": daemonset,
            "uid": "6f1b7c9e-0000-4000-8000-000000000002",
            "controller": True,
        }
    ]
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    p["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }
    return p


def test_a_daemonset_pod_is_capped_at_its_own_node_less_the_other_daemonsets(
    app: Flask, client: FlaskClient
) -> None:
    for name in ("logger", "agent"):
        add_policy("Initial", name=name, target_kind="DaemonSet", target_name=name)
        add_recommendation("app", 4000, 8 * GI, workload=("shop", "DaemonSet", name))
    refresh(app)
    webhook_of(app).node_fit = NodeFit(NODES, Daemons())
    # small-0: 2 cpu, 4Gi, less the agent DaemonSet's 500m and 1Gi
    body, c = answer_for(client, daemon_pod("logger", "small-0"))
    assert amounts(c, "requests") == {"cpu": 1500, "memory": 3 * GI}
    assert "capped to node small-0" in body["auditAnnotations"]["capped-to-node"]
    # the agent's own pod is not counted against itself
    _, c = answer_for(client, daemon_pod("agent", "small-0"))
    assert amounts(c, "requests") == {"cpu": 2000, "memory": 4 * GI}
    # on big-0 it fits: its recommendation as it is
    _, c = answer_for(client, daemon_pod("logger", "big-0"))
    assert amounts(c, "requests") == {"cpu": 4000, "memory": 8 * GI}
    # a node not known: nothing to cap at
    _, c = answer_for(client, daemon_pod("logger", "gone-0"))
    assert amounts(c, "requests") == {"cpu": 4000, "memory": 8 * GI}
