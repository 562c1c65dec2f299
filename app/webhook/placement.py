"""`placement: waterLevel` (docs/policies.md, "Placement"): the JSON Patch operations that give a
new pod the water-level scheduler, a second kube-scheduler calling rightsizer's extender.

Only a pod that names no scheduler, or kube-scheduler's own (`default-scheduler`, the name the
API server's defaulting gives a pod without one), is changed: a pod asking for another scheduler
keeps it. A pod that already names the water-level scheduler (the webhook's second pass, with
`reinvocationPolicy: IfNeeded`) gets nothing more, so the answer is idempotent. The name was
checked as a DNS subdomain when the setting was read, as kube-apiserver's pod validation checks
`spec.schedulerName`, so the patch never makes a pod it would refuse.

The change is recorded in the pod's `rightsizer.io/placement` annotation (the policy that asked
for it) and in the answer's audit annotation `placement`. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.policy import WATER_LEVEL, Policy
from app.core.sizing.patch import escape_pointer

DEFAULT_SCHEDULER = "default-scheduler"  # kube-apiserver's default for spec.schedulerName
PLACEMENT_ANNOTATION = "rightsizer.io/placement"


@dataclass(frozen=True)
class Placement:
    """What the webhook adds to a pod's patch to send it to the water-level scheduler."""

    operations: tuple[dict[str, Any], ...]
    note: str  # for the pod's annotation and the audit annotation


def placement_for(
    pod: Mapping[str, Any],
    policy: Policy,
    scheduler: str,
    sizing: Sequence[Mapping[str, Any]] = (),
) -> Placement | None:
    """The operations to apply after `sizing` (the sizing patch's operations), or None when the
    pod keeps its scheduler: no `scheduler` configured, a policy of another placement, a pod
    naming another scheduler (or this one already), or a pod without a spec object."""
    if not scheduler or policy.placement != WATER_LEVEL:
        return None
    spec = pod.get("spec")
    if not isinstance(spec, Mapping):
        return None
    current = spec.get("schedulerName")
    if current not in (None, "", DEFAULT_SCHEDULER):
        return None
    note = f"{WATER_LEVEL}: policy {policy.namespace}/{policy.name} set schedulerName {scheduler}"
    ops: list[dict[str, Any]] = [{"op": "add", "path": "/spec/schedulerName", "value": scheduler}]
    ops += _annotation_ops(pod, sizing, note)
    return Placement(tuple(ops), note)


def _annotation_ops(
    pod: Mapping[str, Any], sizing: Sequence[Mapping[str, Any]], note: str
) -> list[dict[str, Any]]:
    """Sets the annotation, creating `metadata` and its `annotations` only where neither the pod
    nor the sizing operations before these have them (a second `add` of the whole map would wipe
    what sizing wrote into it)."""
    paths = {op.get("path") for op in sizing}
    meta = pod.get("metadata")
    has_meta = isinstance(meta, Mapping) or "/metadata" in paths
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    has_annotations = isinstance(annotations, Mapping) or "/metadata/annotations" in paths
    ops: list[dict[str, Any]] = []
    if not has_meta:
        ops.append({"op": "add", "path": "/metadata", "value": {}})
    if not has_annotations:
        ops.append({"op": "add", "path": "/metadata/annotations", "value": {}})
    # `add` on an existing member replaces it (RFC 6902, 4.1)
    path = f"/metadata/annotations/{escape_pointer(PLACEMENT_ANNOTATION)}"
    ops.append({"op": "add", "path": path, "value": note})
    return ops
