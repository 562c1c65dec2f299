"""DaemonSets sized per node group, no I/O: which group a pod is in, which recommendation it gets.

A DaemonSet runs one pod on every node, and its pods on large nodes often use far more than those
on small ones (a log shipper, a node exporter, a CNI agent; VPA issue #5928). A policy's
`nodeGroupLabel` (e.g. `node.kubernetes.io/instance-type`) makes the recommender keep, beside the
DaemonSet-wide recommendation, one per node group: the value of that label on the node a pod runs
on. Pods on nodes without the label form one group of their own, `NO_GROUP` (`<none>`, which no
label value can be: a value holds only alphanumerics, `-`, `_` and `.`). Only DaemonSets are
grouped: the pods of other workloads are not tied to a node, and a Deployment's pod is admitted
before the scheduler picks one.

A new pod is sized from the group of the node it is for (`target_node_name`, the DaemonSet
controller's affinity) and a running one from the group of the node it runs on
(`NodeGroupRecommendations.for_node`); a container whose group has no recommendation yet (a new
node type, or too few samples) gets the DaemonSet-wide one, as does every container of a pod whose
node is unknown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.core.pods import PodView
from app.core.policy import Policy
from app.core.recommendation import Recommendation
from app.core.workload_key import WorkloadKey

NO_GROUP = "<none>"  # the group of pods on nodes without the label
GROUPED_KINDS = ("DaemonSet",)
OBJECT_NAME_FIELD = "metadata.name"  # metav1.ObjectNameField


def node_group(labels: Mapping[str, str], label: str) -> str:
    """The group of a node with these labels: the label's value, or NO_GROUP without it."""
    value = labels.get(label)
    return NO_GROUP if value is None else value


def grouping_label(policy: Policy | None, w: WorkloadKey) -> str | None:
    """The node label that groups the workload's pods: its policy's `nodeGroupLabel` when it is
    a DaemonSet, else None (sized as a whole)."""
    if policy is None or w.kind not in GROUPED_KINDS:
        return None
    return policy.node_group_label


def target_node_name(pod: Mapping[str, Any]) -> str | None:
    """The node a pod is for, re-derived from Kubernetes' `GetTargetNodeName`
    (pkg/controller/daemon/util/daemonset_util.go): its `spec.nodeName` when bound, else the one
    value of the first `metadata.name` `In` requirement among the `matchFields` of its required
    node affinity's terms, which the DaemonSet controller sets on every pod it creates
    (`ReplaceDaemonSetPodNodeNameNodeAffinity`). None where Kubernetes answers an error: no such
    affinity or requirement, or one whose values are not exactly one."""
    spec = pod.get("spec")
    if not isinstance(spec, Mapping):
        return None
    bound = spec.get("nodeName")
    if isinstance(bound, str) and bound:
        return bound
    affinity = spec.get("affinity")
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, Mapping) else None
    required = (
        node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(node_affinity, Mapping)
        else None
    )
    terms = required.get("nodeSelectorTerms") if isinstance(required, Mapping) else None
    for term in terms if isinstance(terms, list) else []:
        fields = term.get("matchFields") if isinstance(term, Mapping) else None
        for expr in fields if isinstance(fields, list) else []:
            if (
                isinstance(expr, Mapping)
                and expr.get("key") == OBJECT_NAME_FIELD
                and expr.get("operator") == "In"
            ):
                values = expr.get("values")
                if not isinstance(values, list) or len(values) != 1:
                    return None
                return str(values[0])
    return None


@dataclass(frozen=True)
class NodeGroupRecommendations:
    """A DaemonSet's recommendations per node group: `groups[group][container]`, and per group
    the seconds of usage its shortest-lived container's recommendation rests on."""

    label: str  # the node label whose values name the groups
    groups: Mapping[str, Mapping[str, Recommendation]] = field(default_factory=dict)
    history: Mapping[str, float] = field(default_factory=dict)

    def for_node(
        self, node_labels: Mapping[str, str] | None, whole: Mapping[str, Recommendation]
    ) -> tuple[Mapping[str, Recommendation], str | None]:
        """What a pod on a node with `node_labels` is sized from, and its group (None: the node
        is unknown). Per container its group's recommendation, else the DaemonSet-wide one; the
        group's own mapping when it has every container (see `merged`)."""
        if node_labels is None:
            return whole, None
        group = node_group(node_labels, self.label)
        own = self.groups.get(group)
        if not own:
            return whole, group
        if whole.keys() <= own.keys():
            return own, group
        return {**whole, **own}, group

    def merged(self, whole: Mapping[str, Recommendation]) -> NodeGroupRecommendations:
        """The same groups, each completed with the DaemonSet-wide recommendation of the
        containers it has none for: built once (a snapshot does it as it loads), `for_node` then
        hands out the same mapping for every pod of a group."""
        return NodeGroupRecommendations(
            self.label, {g: {**whole, **own} for g, own in self.groups.items()}, self.history
        )


@dataclass(frozen=True)
class SizedPods:
    """Pods of one DaemonSet sized from the same recommendations: those of `group` (None: the
    DaemonSet-wide ones, for pods on unknown nodes or in a group without its own)."""

    group: str | None
    recommendations: Mapping[str, Recommendation]
    pods: tuple[PodView, ...]
    history: float | None  # the group's history in seconds (None: the DaemonSet-wide one)


def pods_by_group(
    groups: NodeGroupRecommendations,
    whole: Mapping[str, Recommendation],
    pods: Iterable[PodView],
    node_labels: Mapping[str, Mapping[str, str]],
) -> list[SizedPods]:
    """The running pods of a grouped DaemonSet, by what each is sized from (`for_node` on the
    node it runs on, as the webhook sized it on the node it was for), groups in name order and
    the DaemonSet-wide set first."""
    merged = groups.merged(whole)
    sets: dict[str | None, list[PodView]] = {}
    for pod in pods:
        labels = node_labels.get(pod.node_name) if pod.node_name else None
        _, group = merged.for_node(labels, whole)
        sets.setdefault(group if group in merged.groups else None, []).append(pod)
    return [
        SizedPods(
            g,
            merged.groups[g] if g is not None else whole,
            tuple(members),
            merged.history.get(g) if g is not None else None,
        )
        for g, members in sorted(sets.items(), key=lambda kv: (kv[0] is not None, kv[0] or ""))
    ]
