"""The workload of each pod, found once per pod template in a run instead of once per pod.

`workload_of_pod` (app/core/owners.py) reads, of a pod, only its namespace, its controller
reference and its `pod-template-hash` label (when the ReplicaSet is not cached); every other
step reads the cached controllers. Pods that agree on those three have the same workload for as
long as the caches do not move, so a memo kept for one run (the recommender's: 150,000 pods,
a few thousand templates) answers as the walk would. A pod without a controller reference
(the walk's answer is then None, at once), or whose owner fields are not plain strings, is
resolved on its own, unmemoised.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from app.core.pods import PodView
from app.core.recommend.model import WorkloadKey

MemoKey = tuple[str, str | None, str | None, str | None, str | None]


def memo_key(pod: PodView) -> MemoKey | None:
    """What of the pod its workload depends on; None when a field is not what the API sends."""
    meta = pod.wire.get("metadata")
    if not isinstance(meta, Mapping):
        return None
    refs = meta.get("ownerReferences")
    ref: Any = None
    if isinstance(refs, list):
        ref = next((r for r in refs if isinstance(r, Mapping) and r.get("controller")), None)
    labels = meta.get("labels")
    pod_hash = labels.get("pod-template-hash") if isinstance(labels, Mapping) else None
    fields = (
        (ref.get("apiVersion"), ref.get("kind"), ref.get("name")) if ref is not None else ()
    ) + (pod_hash,)
    if ref is None or not all(f is None or isinstance(f, str) for f in fields):
        return None
    return (pod.namespace, *fields)  # type: ignore[return-value]


class WorkloadMemo:
    """`resolve` (the cluster's owner walk) asked once per memo key; forgotten with the memo."""

    def __init__(self, resolve: Callable[[PodView], WorkloadKey | None]) -> None:
        self.resolve = resolve
        self.known: dict[MemoKey, WorkloadKey | None] = {}

    def __call__(self, pod: PodView) -> WorkloadKey | None:
        key = memo_key(pod)
        if key is None:
            return self.resolve(pod)
        try:
            return self.known[key]
        except KeyError:
            w = self.known[key] = self.resolve(pod)
            return w
