"""Required node affinity and the daemon pod's target node (app/simulator/control/nodeaffinity.py),
pure: kube-scheduler's NodeAffinity filter and the DaemonSet controller's node binding, as
component-helpers' nodeaffinity.go and pkg/controller/daemon/util/daemonset_util.go decide."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.simulator.control.nodeaffinity import (
    matches_node,
    target_node_name,
    term_matches,
    with_node_affinity,
)


def node(name: str = "n1", **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}}


def pod(*terms: dict[str, Any], selector: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c"}]}
    if terms:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}
            }
        }
    if selector:
        spec["nodeSelector"] = selector
    return {"spec": spec}


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": op, "values": list(values)}]}


def test_expressions_match_labels_as_label_requirements_do() -> None:
    n = node(size="large", cores="16")
    assert term_matches(expr("size", "In", "large", "xl"), n)
    assert not term_matches(expr("size", "In", "small"), n)
    assert term_matches(expr("zone", "NotIn", "a"), n)  # NotIn matches a node without the label
    assert not term_matches(expr("size", "NotIn", "large"), n)
    assert term_matches(expr("size", "Exists"), n)
    assert term_matches(expr("zone", "DoesNotExist"), n)
    assert term_matches(expr("cores", "Gt", "8"), n)
    assert not term_matches(expr("cores", "Lt", "8"), n)
    assert not term_matches(expr("size", "Gt", "8"), n)  # not an integer: no match
    assert not term_matches(expr("zone", "Lt", "8"), n)  # no label: no match


def test_terms_that_do_not_parse_or_are_empty_match_nothing() -> None:
    n = node(size="large")
    assert not term_matches({}, n)  # an empty term selects no node
    assert not term_matches(expr("size", "In"), n)  # In without values
    assert not term_matches(expr("size", "Exists", "large"), n)  # Exists with values
    assert not term_matches(expr("size", "Gt", "x"), n)  # Gt with a value that is no integer
    assert not term_matches(expr("size", "Near", "large"), n)  # unknown operator
    two = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1", "n2"]}]}
    assert not term_matches(two, n)  # matchFields takes exactly one value


def test_terms_are_ored_and_requirements_of_a_term_anded() -> None:
    n = node("n1", size="large")
    name_in = {"key": "metadata.name", "operator": "In", "values": ["n1"]}
    both = {"matchExpressions": [{"key": "size", "operator": "In", "values": ["small"]}]}
    both["matchFields"] = [name_in]
    assert not term_matches(both, n)  # the name matches, the label does not
    assert matches_node(pod(both, {"matchFields": [name_in]}), n)  # the second term does
    assert not matches_node(pod({}), n)  # a required affinity with only an empty term
    not_in = {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}
    assert not matches_node(pod(not_in), n) and matches_node(pod(not_in), node("n2"))


def test_node_selector_and_affinity_must_both_match() -> None:
    n = node(size="large", zone="a")
    assert matches_node(pod(selector={"zone": "a"}), n)
    assert not matches_node(pod(expr("size", "In", "large"), selector={"zone": "b"}), n)
    assert matches_node(pod(expr("size", "In", "large"), selector={"zone": "a"}), n)
    assert matches_node(pod(), n)  # neither: every node


def test_daemon_pod_affinity_replaces_only_the_required_terms() -> None:
    preferred = [{"weight": 1, "preference": expr("size", "In", "large")}]
    spec: dict[str, Any] = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [expr("size", "In", "large")]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": preferred,
            },
            "podAntiAffinity": {"x": 1},
        }
    }
    out = with_node_affinity(spec, "n7")
    na = out["affinity"]["nodeAffinity"]
    assert na["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n7"]}]}
        ]
    }
    assert na["preferredDuringSchedulingIgnoredDuringExecution"] == preferred
    assert out["affinity"]["podAntiAffinity"] == {"x": 1}
    # the template it came from is left as it was
    assert spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [expr("size", "In", "large")]
    }


def test_target_node_name_prefers_the_bound_node_then_reads_the_affinity() -> None:
    bound = {"spec": {"nodeName": "n2", **with_node_affinity({}, "n1")}}
    assert target_node_name(bound) == "n2"
    assert target_node_name({"spec": with_node_affinity({}, "n1")}) == "n1"
    assert target_node_name({"spec": {}}) is None  # no affinity: Go's error
    assert target_node_name(pod(expr("size", "In", "large"))) is None  # no matchFields
    two = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}
    assert target_node_name(pod(two)) is None  # not unique: Go's error
    other = {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["a"]}]}
    assert target_node_name(pod(other, {"matchFields": two["matchFields"][:1]})) is None


names = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True)


@given(names, names, st.booleans())
def test_a_daemon_pod_targets_and_fits_exactly_its_node(
    target: str, other: str, had_affinity: bool
) -> None:
    spec: dict[str, Any] = {"containers": [{"name": "c"}]}
    if had_affinity:
        spec = pod(expr("size", "In", "small"))["spec"]
    p = {"spec": with_node_affinity(spec, target)}
    assert target_node_name(p) == target
    assert matches_node(p, node(target, size="large"))
    assert matches_node(p, node(other)) == (other == target)
