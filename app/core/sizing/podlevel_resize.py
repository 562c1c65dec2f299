"""Whether a Kubernetes release resizes a pod with pod-level resources in place (KEP-5419), pure.

Re-derived from kubernetes/kubernetes (read at v1.33.13, v1.34.4 and v1.37.2):

- pkg/features/kube_features.go: InPlacePodLevelResourcesVerticalScaling is alpha (off by
  default) in 1.35 and beta (on by default) from 1.36. It needs InPlacePodVerticalScaling,
  PodLevelResources and NodeDeclaredFeatures (beta, on, in 1.36; GA in 1.37).
- pkg/apis/core/validation/validation.go, ValidatePodResize: before 1.35, any resize of a pod that
  sets `spec.resources` (before or after) is refused, "pods with pod-level resources cannot be
  resized" (422); from 1.35 the same pod is refused unless the gate is on ("resize of pods with
  pod-level resources is forbidden when InPlacePodLevelResourcesVerticalScalingEnabled feature
  gate is disabled"). With it on, validatePodLevelResourcesResize refuses removing pod-level
  resources or one of their requests or limits, and changing any resource but cpu and memory;
  the QoS class may not change (pod-level values decide it when set) and the containers must
  stay within the pod-level values (validatePodResourceConsistency).
- pkg/registry/core/pod/strategy.go, dropNonResizeUpdates: the resize subresource keeps the sent
  `spec.resources` only while the gate is on.
- plugin/pkg/admission/nodedeclaredfeatures (NodeDeclaredFeatureValidator, on with
  NodeDeclaredFeatures) and k8s.io/component-helpers nodedeclaredfeatures/features/
  inplacepodresize (pod_level_resource_resize.go): an update that changes `spec.resources` of a
  bound pod needs its node to list "InPlacePodLevelResourcesVerticalScaling" in
  `status.declaredFeatures` (what its kubelet declares when its own gate is on); else 403,
  "pod update requires features InPlacePodLevelResourcesVerticalScaling which are not available
  on node ...". A resize of the containers alone needs no declared feature.
- The kubelet (pkg/kubelet/allocation/handlers.go) marks a pod-level resize Infeasible when its
  gate is off; from the gate on it reports the pod-level values in force in `status.resources`
  and the pod's admitted requests in `status.allocatedResources` (pkg/kubelet/kubelet_pods.go).

So, known before asking: before 1.35 never; in 1.35 only on a node declaring the feature (the
gate, off by default, was turned on); from 1.36, a change of the pod-level values only on a node
declaring it. An unknown release leaves the answer to the API server.
"""

from __future__ import annotations

from collections.abc import Collection

FEATURE = "InPlacePodLevelResourcesVerticalScaling"
ALPHA = 35  # the release the gate appeared in, off by default
BETA = 36  # the release it is on by default from


def pod_level_refusal(
    minor: int | None,
    changes_pod_level: bool,
    node: str,
    declared: Collection[str] | None,
) -> str | None:
    """Why Kubernetes 1.`minor` would refuse to resize in place a pod that sets pod-level
    resources, or None when it may accept it. `changes_pod_level`: the resize changes
    `spec.resources` (not only the containers); `declared`: the `status.declaredFeatures` of the
    pod's node `node` (None: the node is not known, and the API server's answer decides)."""
    if minor is None:
        return None
    if minor < ALPHA:
        return (
            f"Kubernetes 1.{minor} cannot resize a pod with pod-level resources in place "
            f"({FEATURE}, KEP-5419, arrived in 1.{ALPHA})"
        )
    node_has = declared is not None and FEATURE in declared
    if minor < BETA:
        if node_has:
            return None  # the alpha gate was turned on for this node (and so the cluster)
        return (
            f"Kubernetes 1.{minor} resizes a pod with pod-level resources in place only with the "
            f"alpha {FEATURE} feature gate, off by default, and node {node} does not declare it"
        )
    if changes_pod_level and declared is not None and not node_has:
        return (
            f"node {node} does not declare {FEATURE} (its kubelet has the gate off or is older "
            f"than 1.{ALPHA}): Kubernetes 1.{minor} refuses to resize pod-level resources there"
        )
    return None
