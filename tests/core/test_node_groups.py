"""DaemonSets per node group, pure (app/core/node_groups.py): a node's group, the node a daemon pod
is for (Kubernetes' GetTargetNodeName), the workloads a policy groups, and what a pod is sized
from."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.core.node_groups import (
    NO_GROUP,
    NodeGroupRecommendations,
    grouping_label,
    node_group,
    target_node_name,
)
from app.core.policy import Policy
from app.core.recommendation import Recommendation
from app.core.resources import Resources
from app.core.workload_key import WorkloadKey

TYPE = "node.kubernetes.io/instance-type"


def rec(cpu: int, memory: int) -> Recommendation:
    r = Resources(cpu, memory)
    return Recommendation(r, r, r, r)


def daemon_pod(node: str, *, bound: str | None = None, extra_terms: int = 0) -> dict[str, Any]:
    """As the DaemonSet controller creates it (ReplaceDaemonSetPodNodeNameNodeAffinity)."""
    terms: list[dict[str, Any]] = [
        {"matchExpressions": [{"key": "x", "operator": "Exists"}]} for _ in range(extra_terms)
    ]
    terms.append({"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]})
    spec: dict[str, Any] = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
            }
        }
    }
    if bound:
        spec["nodeName"] = bound
    return {"spec": spec}


def test_a_nodes_group_is_its_label_value_or_the_group_of_the_unlabelled() -> None:
    assert node_group({TYPE: "m5.large"}, TYPE) == "m5.large"
    assert node_group({TYPE: ""}, TYPE) == ""  # an empty value is a value
    assert node_group({"zone": "a"}, TYPE) == NO_GROUP == "<none>"


def test_only_daemonsets_are_grouped_and_only_by_their_policys_label() -> None:
    p = Policy("p", "ops", node_group_label=TYPE)
    assert grouping_label(p, WorkloadKey("ops", "DaemonSet", "agent")) == TYPE
    assert grouping_label(p, WorkloadKey("ops", "Deployment", "web")) is None
    assert grouping_label(Policy("p", "ops"), WorkloadKey("ops", "DaemonSet", "agent")) is None
    assert grouping_label(None, WorkloadKey("ops", "DaemonSet", "agent")) is None


def test_target_node_name_as_kubernetes_reads_it() -> None:
    assert target_node_name(daemon_pod("n1")) == "n1"
    assert target_node_name(daemon_pod("n1", bound="n2")) == "n2"  # spec.nodeName first
    assert target_node_name(daemon_pod("n1", extra_terms=2)) == "n1"  # in any term
    assert target_node_name({"spec": {}}) is None
    assert target_node_name({}) is None
    assert target_node_name({"spec": {"affinity": "nonsense"}}) is None
    two = daemon_pod("n1")
    fields = two["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    fields["nodeSelectorTerms"][0]["matchFields"][0]["values"] = ["n1", "n2"]
    assert target_node_name(two) is None  # "the matchFields value ... is not unique"
    not_in = daemon_pod("n1")
    term = not_in["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    term["nodeSelectorTerms"][0]["matchFields"][0]["operator"] = "NotIn"
    assert target_node_name(not_in) is None


@given(st.text(min_size=1, max_size=30), st.integers(0, 3))
def test_a_daemon_pods_node_is_read_back_whatever_else_its_affinity_holds(
    node: str, extra: int
) -> None:
    assert target_node_name(daemon_pod(node, extra_terms=extra)) == node


def test_a_pod_gets_its_groups_recommendation_per_container_else_the_whole_daemonsets() -> None:
    whole = {"agent": rec(100, 100), "sidecar": rec(10, 10)}
    groups = NodeGroupRecommendations(
        TYPE,
        {"m5.4xlarge": {"agent": rec(400, 300)}, NO_GROUP: {"agent": rec(50, 50)}},
    )
    recs, group = groups.for_node({TYPE: "m5.4xlarge"}, whole)
    assert group == "m5.4xlarge"
    assert recs == {"agent": rec(400, 300), "sidecar": rec(10, 10)}  # sidecar: no group value
    assert groups.for_node({}, whole) == ({"agent": rec(50, 50), "sidecar": rec(10, 10)}, NO_GROUP)
    assert groups.for_node({TYPE: "m7.metal"}, whole) == (whole, "m7.metal")  # a new node type
    assert groups.for_node(None, whole) == (whole, None)  # the node is not known
