"""Required node affinity: whether a node is one a pod may run on, and the node a daemon pod is for.

Re-derived from kubernetes/kubernetes:

- `staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go`
  (`GetRequiredNodeAffinity`, `RequiredNodeAffinity.Match`, `LazyErrorNodeSelector.Match`): the
  pod's `nodeSelector` must match the node's labels, and then, when the pod has
  `spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`, one of its
  `nodeSelectorTerms` (ORed) must match. An empty term (no matchExpressions, no matchFields)
  matches nothing, and so does a selector with no term left. Within a term everything is ANDed:
  `matchExpressions` on the node's labels (In, NotIn, Exists, DoesNotExist, Gt, Lt, as
  apimachinery's `labels.Requirement.Matches`: NotIn and DoesNotExist match a node without the
  label; Gt and Lt compare the label's value read as an integer, and a value that is not one
  never matches) and `matchFields` on the node's fields (only `metadata.name`, with In or NotIn
  and exactly one value). A term that does not parse (an unknown operator, In without values,
  Gt with a value that is no integer, a matchFields value list not of one) matches nothing.
- `pkg/controller/daemon/util/daemonset_util.go`: `ReplaceDaemonSetPodNodeNameNodeAffinity` (the
  DaemonSet controller binds each pod to its node through this affinity, which kube-scheduler
  then honours, instead of setting `spec.nodeName`) and `GetTargetNodeName` (the node a daemon
  pod is for: its `spec.nodeName`, else the single value of its first `metadata.name In`
  matchFields requirement).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

Obj = dict[str, Any]
OBJECT_NAME_FIELD = "metadata.name"  # metav1.ObjectNameField
_INTEGER = re.compile(r"[+-]?[0-9]+")  # what strconv.ParseInt(v, 10, 64) accepts
_INT64 = 2**63


def _integer(text: Any) -> int | None:
    if not isinstance(text, str) or not _INTEGER.fullmatch(text):
        return None
    value = int(text)
    return value if -_INT64 <= value < _INT64 else None


def _expression_matches(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool | None:
    """One matchExpressions requirement against node labels; None when it does not parse
    (labels.NewRequirement's checks: values for In/NotIn, none for Exists/DoesNotExist, one
    integer for Gt/Lt)."""
    key, op = expr.get("key"), expr.get("operator")
    values = expr.get("values") or []
    if not isinstance(key, str) or not key or not isinstance(values, list):
        return None
    if op in ("In", "NotIn"):
        if not values:
            return None
        has = key in labels and labels[key] in values
        return has if op == "In" else not has
    if op in ("Exists", "DoesNotExist"):
        if values:
            return None
        return bool((key in labels) == (op == "Exists"))
    if op in ("Gt", "Lt"):
        bound = _integer(values[0]) if len(values) == 1 else None
        if bound is None:
            return None
        value = _integer(labels.get(key))
        if value is None:
            return False
        return value > bound if op == "Gt" else value < bound
    return None


def _field_matches(expr: Mapping[str, Any], fields: Mapping[str, str]) -> bool | None:
    """One matchFields requirement (In or NotIn, exactly one value); None when it does not parse."""
    op, values = expr.get("operator"), expr.get("values") or []
    if op not in ("In", "NotIn") or not isinstance(values, list) or len(values) != 1:
        return None
    key = str(expr.get("key"))
    equal = key in fields and fields[key] == values[0]
    return equal if op == "In" else not equal


def term_matches(term: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """One NodeSelectorTerm against a node; an empty or unparsable term matches nothing."""
    expressions = term.get("matchExpressions") or []
    fields_ = term.get("matchFields") or []
    if not expressions and not fields_:
        return False
    labels = (node.get("metadata") or {}).get("labels") or {}
    name = (node.get("metadata") or {}).get("name") or ""
    node_fields = {OBJECT_NAME_FIELD: name} if name else {}
    verdicts = [_expression_matches(e, labels) for e in expressions]
    # nodeSelectorTerm.match: the fields are only checked when the node has any
    if node_fields:
        verdicts += [_field_matches(f, node_fields) for f in fields_]
    elif any(_field_matches(f, {}) is None for f in fields_):
        return False
    return all(v is True for v in verdicts)


def required_affinity(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The pod's requiredDuringSchedulingIgnoredDuringExecution node selector, if any."""
    affinity = ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    return required if isinstance(required, Mapping) else None


def matches_node(pod: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """RequiredNodeAffinity.Match: the nodeSelector, then the required node affinity's terms."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    selector = (pod.get("spec") or {}).get("nodeSelector") or {}
    if any(labels.get(k) != v for k, v in selector.items()):
        return False
    required = required_affinity(pod)
    if required is None:
        return True
    return any(term_matches(t, node) for t in required.get("nodeSelectorTerms") or [])


def with_node_affinity(spec: Obj, node_name: str) -> Obj:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the pod spec with its required node affinity
    replaced by one term selecting `node_name` (preferred terms and other affinities kept)."""
    term = {"matchFields": [{"key": OBJECT_NAME_FIELD, "operator": "In", "values": [node_name]}]}
    out = dict(spec)
    affinity = copy.deepcopy(spec.get("affinity") or {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [term]
        }
    else:
        required["nodeSelectorTerms"] = [term]
    out["affinity"] = affinity
    return out


def target_node_name(pod: Mapping[str, Any]) -> str | None:
    """GetTargetNodeName: spec.nodeName, else the node of the first `metadata.name In [node]`
    matchFields requirement of the required node affinity; None where Go returns an error (no
    such requirement, or one whose values are not exactly one)."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    required = required_affinity(pod)
    if required is None:
        return None
    for term in required.get("nodeSelectorTerms") or []:
        for expr in term.get("matchFields") or []:
            if expr.get("key") == OBJECT_NAME_FIELD and expr.get("operator") == "In":
                values = expr.get("values") or []
                return str(values[0]) if len(values) == 1 else None
    return None
