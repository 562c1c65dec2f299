"""A node's JSON read into a frozen view, no I/O: what the updater's fit check reads of a node.

`NodeView.parse` runs at the kube boundary (app.kube.cluster.ClusterView.node_views); the
updater's planning (app.core.sizing.plan.node_rooms) reads only views. The proportional scaler
reads node JSON itself (app.core.scaling.proportional.cluster_status): it serves the offline
preview from node files too, and counts allocatable CPU in nanocores, as the
cluster-proportional-autoscaler does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.core.quantity import amount_or_none
from app.core.wire import entries, section, text

Taint = tuple[str, str, str]  # key, value ("" when unset), effect


@dataclass(frozen=True, slots=True)
class NodeView:
    name: str
    labels: tuple[tuple[str, str], ...]  # sorted by key
    unschedulable: bool  # spec.unschedulable: cordoned
    ready: bool  # a Ready condition with status "True"
    taints: tuple[Taint, ...]  # every effect
    cpu_allocatable: int | None  # millicores; absent is 0, None when malformed
    memory_allocatable: int | None  # bytes; the same
    # status.declaredFeatures: the features its kubelet declares (NodeDeclaredFeatures, 1.35+),
    # e.g. InPlacePodLevelResourcesVerticalScaling (app.core.sizing.podlevel_resize)
    declared_features: tuple[str, ...] = ()

    @classmethod
    def parse(cls, node: Mapping[str, Any]) -> NodeView:
        meta, spec, status = (section(node, k) for k in ("metadata", "spec", "status"))
        alloc = section(status, "allocatable")
        return cls(
            name=text(meta.get("name")),
            labels=tuple(sorted((str(k), str(v)) for k, v in section(meta, "labels").items())),
            unschedulable=bool(spec.get("unschedulable")),
            ready=any(
                c.get("type") == "Ready" and c.get("status") == "True"
                for c in entries(status, "conditions")
            ),
            taints=tuple(
                (str(t.get("key", "")), str(t.get("value") or ""), str(t.get("effect", "")))
                for t in entries(spec, "taints")
            ),
            cpu_allocatable=amount_or_none("cpu", alloc.get("cpu", "0")),
            memory_allocatable=amount_or_none("memory", alloc.get("memory", "0")),
            declared_features=tuple(
                str(f) for f in status.get("declaredFeatures") or () if isinstance(f, str)
            ),
        )

    @property
    def takes_pods(self) -> bool:
        """Schedulable (not cordoned) and Ready: a node a new or resized pod may land on."""
        return self.ready and not self.unschedulable
