"""What the updater sends about a pod, as frozen values with their wire form (`to_dict`), no I/O.

- `ResizeBody`: the strategic merge patch of a pod's `resize` subresource (Kubernetes 1.33+): new
  requests and limits per container, matched by name (the merge key of containers). A native
  sidecar is an init container (restartPolicy Always) and the API server finds it under
  spec.initContainers only, so it is sent there.
- `EvictionBody`: a policy/v1 Eviction, POSTed to the pod's `eviction` subresource so that
  PodDisruptionBudgets apply. With the pod's uid as a precondition, only that pod is evicted: one
  that took its name since (a StatefulSet's replacement) is left alone (409 Precondition failed).

Amounts are written as the webhook's patch writes them (app.core.resources.format_cpu and
format_memory), so a resized pod holds exactly what a recreated one would.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.core.resources import format_cpu, format_memory

Obj = dict[str, Any]


def _quantities(values: Mapping[str, int]) -> dict[str, str]:
    return {r: format_cpu(v) if r == "cpu" else format_memory(v) for r, v in values.items()}


@dataclass(frozen=True)
class ContainerResize:
    """One container's new values: millicores and bytes by resource name."""

    name: str
    requests: Mapping[str, int]
    limits: Mapping[str, int]  # empty: the limits are left as they are

    def to_dict(self) -> Obj:
        resources: Obj = {"requests": _quantities(self.requests)}
        if self.limits:
            resources["limits"] = _quantities(self.limits)
        return {"name": self.name, "resources": resources}


@dataclass(frozen=True)
class PodLevelResize:
    """The pod-level `spec.resources` values that change (KEP-5419, 1.35+): millicores and
    bytes by resource name; the others are kept (a strategic merge patch merges the maps)."""

    requests: Mapping[str, int]
    limits: Mapping[str, int]

    def to_dict(self) -> Obj:
        resources: Obj = {}
        if self.requests:
            resources["requests"] = _quantities(self.requests)
        if self.limits:
            resources["limits"] = _quantities(self.limits)
        return resources


@dataclass(frozen=True)
class ResizeBody:
    containers: tuple[ContainerResize, ...] = ()  # under spec.containers
    init_containers: tuple[ContainerResize, ...] = ()  # native sidecars, under spec.initContainers
    pod_level: PodLevelResize | None = None  # under spec.resources

    def to_dict(self) -> Obj:
        spec: Obj = {}
        if self.containers:
            spec["containers"] = [c.to_dict() for c in self.containers]
        if self.init_containers:
            spec["initContainers"] = [c.to_dict() for c in self.init_containers]
        if self.pod_level is not None:
            spec["resources"] = self.pod_level.to_dict()
        return {"spec": spec}


@dataclass(frozen=True)
class EvictionBody:
    namespace: str
    name: str
    uid: str = ""  # the precondition; "" evicts whichever pod has the name

    def to_dict(self) -> Obj:
        body: Obj = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": self.name, "namespace": self.namespace},
        }
        if self.uid:
            body["deleteOptions"] = {"preconditions": {"uid": self.uid}}
        return body
