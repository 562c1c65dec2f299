"""Label selectors (metav1.LabelSelector) matched as Kubernetes matches them, and the labels of a
workload's pod template as its pods show them.

Matching re-derives apimachinery `pkg/apis/meta/v1/helpers.go` (LabelSelectorAsSelector: every
matchLabels pair is an `In` requirement with one value, all requirements AND-ed, an empty selector
matches everything) and `pkg/labels/selector.go` (Requirement.Matches: `In` needs the key with one
of the values, `NotIn` is true when the key is absent or holds another value, `Exists` and
`DoesNotExist` look at the key only). Validation of the document is app.documents.selector.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")

# The labels controllers add to the pods they create, which their templates do not have:
# pod-template-hash (Deployment, apps/v1 DefaultDeploymentUniqueLabelKey),
# controller-revision-hash (StatefulSet and DaemonSet, ControllerRevisionHashLabelKey),
# pod-template-generation (DaemonSet, deprecated), statefulset.kubernetes.io/pod-name and
# apps.kubernetes.io/pod-index (StatefulSet), the Job controller's controller-uid, job-name and
# their batch.kubernetes.io/ forms and job-completion-index, and Argo Rollouts'
# rollouts-pod-template-hash.
CONTROLLER_LABELS = frozenset(
    {
        "pod-template-hash",
        "controller-revision-hash",
        "pod-template-generation",
        "statefulset.kubernetes.io/pod-name",
        "apps.kubernetes.io/pod-index",
        "controller-uid",
        "job-name",
        "batch.kubernetes.io/controller-uid",
        "batch.kubernetes.io/job-name",
        "batch.kubernetes.io/job-completion-index",
        "rollouts-pod-template-hash",
    }
)


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # one of OPERATORS
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "In":
            return self.key in labels and labels[self.key] in self.values
        if self.operator == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if self.operator == "Exists":
            return self.key in labels
        return self.key not in labels  # DoesNotExist


@dataclass(frozen=True)
class LabelSelector:
    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)

    @property
    def size(self) -> int:
        return len(self.requirements)


def template_labels(pod_labels: Mapping[str, str] | None) -> dict[str, str]:
    """A pod's labels without those its controllers added: its template's labels."""
    return {k: v for k, v in (pod_labels or {}).items() if k not in CONTROLLER_LABELS}
