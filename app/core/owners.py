"""Which workload a pod belongs to, from its ownerReferences.

The webhook must answer without calling the API server, and pods created from `generateName` have
no name yet, so the answer comes from the pod's own metadata: a ReplicaSet named
`<deployment>-<pod-template-hash>` (the hash is also the pod's `pod-template-hash` label) belongs
to that Deployment. When a cache of controllers is at hand (`lookup`), it is asked first and its
ownerReferences are followed one more level (ReplicaSet -> Deployment, Job -> CronJob).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from app.core.recommend.model import WorkloadKey
from app.core.wire import entries, section

Lookup = Callable[[str, str, str], dict[str, Any] | None]  # (namespace, kind, name) -> object
FOLLOWED = {"ReplicaSet": "Deployment", "Job": "CronJob"}


def controller_ref(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Pods reach the webhook as raw JSON: a field of the wrong type counts as absent."""
    refs = entries(section(obj, "metadata"), "ownerReferences")
    return next((ref for ref in refs if ref.get("controller")), None)


def workload_of_pod(
    pod: Mapping[str, Any], namespace: str | None = None, lookup: Lookup | None = None
) -> WorkloadKey | None:
    """None for a pod without a controller (a bare pod has no workload to learn for)."""
    meta = section(pod, "metadata")
    own_ns = meta.get("namespace")
    ns = namespace or (own_ns if isinstance(own_ns, str) else None) or "default"
    ref = controller_ref(pod)
    if ref is None:
        return None
    kind, name = ref.get("kind"), ref.get("name")
    if not kind or not name or not isinstance(kind, str) or not isinstance(name, str):
        return None
    parent_kind = FOLLOWED.get(kind)
    if parent_kind is None:
        return WorkloadKey(ns, kind, name)
    if lookup is not None:
        owner = lookup(ns, kind, name)
        if owner is not None:
            parent = controller_ref(owner)
            if parent is not None and parent.get("kind") == parent_kind and parent.get("name"):
                return WorkloadKey(ns, parent_kind, str(parent["name"]))
            return WorkloadKey(ns, kind, name)
    if kind == "ReplicaSet":
        pod_hash = section(meta, "labels").get("pod-template-hash")
        if not isinstance(pod_hash, str):
            pod_hash = ""
        if pod_hash and name.endswith("-" + pod_hash) and len(name) > len(pod_hash) + 1:
            return WorkloadKey(ns, "Deployment", name[: -len(pod_hash) - 1])
    return WorkloadKey(ns, kind, name)
