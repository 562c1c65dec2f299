"""Which workload a pod belongs to, from its ownerReferences: the topmost well-known or scalable
controller, as VPA finds it.

Re-derived from kubernetes/autoscaler `vertical-pod-autoscaler/pkg/target/controller_fetcher/
controller_fetcher.go` (FindTopMostWellKnownOrScalable): start at the pod's controller and walk up
the controller references; every controller on the way that is well-known (the six kinds
rightsizer watches: Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob, known by their
name as VPA knows them) or scalable (its kind has a `/scale` subresource, from discovery) becomes
the answer, so the last one wins: a pod of a ReplicaSet of a Deployment is the Deployment's, a
pod of a ReplicaSet an Argo Rollout owns is the Rollout's (`Rollout.argoproj.io`). A pod whose
controllers are neither (a Node for a static pod, an operator's CR without /scale) has no
workload. A well-known controller's parent is read from its cached object (`lookup`); a scalable
one's would come from its Scale, whose metadata carries no ownerReferences in Kubernetes, so the
walk stops there, as VPA's does. An ownership cycle gives no workload.

The webhook must answer without calling the API server, and pods created from `generateName` have
no name yet, so when a cache misses (a controller created a moment ago), the pod's own metadata
decides: a ReplicaSet named `<deployment>-<pod-template-hash>` (the hash is also the pod's
`pod-template-hash` label) belongs to that Deployment, any other controller is its own top.
Without discovery (`scalable` None) every controller counts as scalable.

A pod whose topmost controller is a bare Job (none above it) and that carries the label
`rightsizer.io/job-family` belongs to that Job family instead (app.core.job_families).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from app.core.job_families import FAMILY_KIND, family_name
from app.core.wire import entries, section
from app.core.workload_key import WELL_KNOWN_GROUPS, WorkloadKey, kind_key

Lookup = Callable[[str, str, str], dict[str, Any] | None]  # (namespace, kind, name) -> object
Scalable = Callable[[str, str], bool]  # (group, kind) -> has a /scale subresource
# Kinds that are never a workload: VPA skips them before asking for a scale (a Node owns the
# mirror pods of static pods).
NEVER = frozenset({"Node"})
MAX_DEPTH = 10


def controller_ref(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Pods reach the webhook as raw JSON: a field of the wrong type counts as absent."""
    refs = entries(section(obj, "metadata"), "ownerReferences")
    return next((ref for ref in refs if ref.get("controller")), None)


def _group(api_version: Any) -> str:
    """The group of an apiVersion (`apps/v1` -> apps, `v1` -> core "")."""
    if isinstance(api_version, str) and "/" in api_version:
        return api_version.split("/", 1)[0]
    return ""


def _key(ref: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(group, kind, name) of a controller reference; None when it names nothing."""
    kind, name = ref.get("kind"), ref.get("name")
    if not isinstance(kind, str) or not isinstance(name, str) or not kind or not name:
        return None
    return _group(ref.get("apiVersion")), kind, name


def workload_of_pod(
    pod: Mapping[str, Any],
    namespace: str | None = None,
    lookup: Lookup | None = None,
    scalable: Scalable | None = None,
) -> WorkloadKey | None:
    """None for a pod without a controller (a bare pod has no workload to learn for), or whose
    controllers are neither well-known nor scalable."""
    meta = section(pod, "metadata")
    own_ns = meta.get("namespace")
    ns = namespace or (own_ns if isinstance(own_ns, str) else None) or "default"
    ref = controller_ref(pod)
    key = _key(ref) if ref is not None else None
    if key is None:
        return None

    def counts(k: tuple[str, str, str]) -> bool:
        group, kind, _ = k
        if kind in WELL_KNOWN_GROUPS:
            return True
        return kind not in NEVER and (scalable is None or scalable(group, kind))

    top = key if counts(key) else None
    seen = {key}
    for _ in range(MAX_DEPTH):
        parent = _parent(key, ns, meta, lookup)
        if parent is None:
            break
        if parent in seen:
            return None  # "Cycle detected in ownership chain"
        seen.add(parent)
        if counts(parent):
            top = parent
        key = parent
    if top is None:
        return None
    if top[1] == "Job":  # a Job, whatever the group, as kind_key knows it
        family = family_name(section(meta, "labels"))
        if family is not None:  # a bare Job of a family (app.core.job_families)
            return WorkloadKey(ns, FAMILY_KIND, family)
    return WorkloadKey(ns, kind_key(top[0], top[1]), top[2])


def _parent(
    key: tuple[str, str, str],
    ns: str,
    pod_meta: Mapping[str, Any],
    lookup: Lookup | None,
) -> tuple[str, str, str] | None:
    """The controller of a well-known controller, from the cache, else from the pod's labels
    (a ReplicaSet's Deployment); a scalable controller has none (see the module's docstring)."""
    _, kind, name = key
    if kind not in WELL_KNOWN_GROUPS:
        return None
    owner = lookup(ns, kind, name) if lookup is not None else None
    if owner is not None:
        ref = controller_ref(owner)
        return _key(ref) if ref is not None else None
    if kind == "ReplicaSet" and key == _first(pod_meta):
        pod_hash = section(pod_meta, "labels").get("pod-template-hash")
        if (
            isinstance(pod_hash, str)
            and pod_hash
            and name.endswith("-" + pod_hash)
            and len(name) > len(pod_hash) + 1
        ):
            return "apps", "Deployment", name[: -len(pod_hash) - 1]
    return None


def _first(pod_meta: Mapping[str, Any]) -> tuple[str, str, str] | None:
    ref = next((r for r in entries(pod_meta, "ownerReferences") if r.get("controller")), None)
    return _key(ref) if ref is not None else None
