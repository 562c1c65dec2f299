"""Each node's labels (and what a pod's fit needs of it), kept in memory for the webhook by a
list+watch informer.

A DaemonSet sized per node group (app.core.node_groups) gets, for each new pod, the recommendation
of the group of the node the pod is for: the webhook reads that node's labels here, one dict read,
never a request to the API server while the pod waits. Only names and labels are kept (a node's
status is most of its JSON). Until the informer has listed, or when nodes cannot be listed, a node
is unknown and the pod gets the DaemonSet-wide recommendation; in the cache's first seconds a
lookup may wait for the first listing (`wait_listed`). The taints, `unschedulable`, allocatable
and Ready condition are kept too: the webhook caps a pod to fit the largest node it may run on
(app.core.sizing.node_fit, `views`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from kubernetes import client

from app.core.nodes import NodeView
from app.kube.informer import Informer, Obj
from app.kube.node_views import NodeViews

STARTUP = 30.0  # seconds after its start in which a lookup may wait for the first listing


def trim_node_labels(node: Obj) -> Obj:
    meta = node.get("metadata") or {}
    labels = meta.get("labels")
    spec, status = node.get("spec") or {}, node.get("status") or {}
    conditions, allocatable = status.get("conditions"), status.get("allocatable")
    allocatable = allocatable if isinstance(allocatable, dict) else {}
    ready = [
        {"type": "Ready", "status": c.get("status")}
        for c in (conditions if isinstance(conditions, list) else [])
        if isinstance(c, dict) and c.get("type") == "Ready"
    ]
    return {
        "metadata": {
            "name": meta.get("name"),
            "labels": dict(labels) if isinstance(labels, dict) else {},
        },
        "spec": {k: spec[k] for k in ("taints", "unschedulable") if k in spec},
        "status": {
            "allocatable": {k: v for k, v in allocatable.items() if k in ("cpu", "memory")},
            "conditions": ready,
        },
    }


class NodeLabelCache:
    """`cache(node)` -> that node's labels, or None when the node is not known (yet)."""

    def __init__(self, api: client.ApiClient, watch_timeout: int = 300) -> None:
        core = client.CoreV1Api(api)
        self._started = time.monotonic()
        self.informer = Informer(
            "webhook-nodes", core.list_node, watch_timeout=watch_timeout, transform=trim_node_labels
        )
        self._views = NodeViews(self.informer)  # each node parsed once while unchanged

    def __call__(self, name: str) -> Mapping[str, str] | None:
        node: Any = self.informer.get("", name)
        return None if node is None else node["metadata"]["labels"]

    def views(self) -> list[NodeView]:
        """Every node as last listed and watched."""
        return self._views.views()

    @property
    def version(self) -> str:
        return self.informer.resource_version

    @property
    def synced(self) -> bool:
        return self.informer.synced.is_set()

    def start(self) -> NodeLabelCache:
        self._started = time.monotonic()
        self.informer.start()
        return self

    def wait_listed(self, timeout: float) -> bool:
        """Waits up to `timeout` for the first listing, only in the cache's first STARTUP
        seconds: nodes that cannot be listed (no permission) must not slow every pod after."""
        if self.synced:
            return True
        left = self._started + STARTUP - time.monotonic()
        return left > 0 and self.informer.wait_synced(min(timeout, left))

    def wait_synced(self, timeout: float) -> bool:
        return self.informer.wait_synced(timeout)

    def stop(self) -> None:
        self.informer.stop()
