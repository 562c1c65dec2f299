"""ControllerRevisions: the template history of StatefulSets and DaemonSets, pure.

Re-derived from kubernetes/kubernetes `pkg/controller/history/controller_history.go`
(NewControllerRevision, HashControllerRevision, ControllerRevisionName, FindEqualRevisions,
SortControllerRevisions) and the `getPatch`/`ApplyRevision` of `pkg/controller/statefulset/
stateful_set_utils.go` and `pkg/controller/daemon/update.go`: a revision's data is the strategic
merge patch `{"spec":{"template":{...,"$patch":"replace"}}}` that `kubectl rollout undo` applies
to go back to it.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from app.simulator.control.objects import semantic
from app.simulator.control.ownership import controller_ref

HASH_LABEL = "controller.kubernetes.io/hash"  # ControllerRevisionHashLabel
POD_REVISION_LABEL = "controller-revision-hash"  # apps.ControllerRevisionHashLabelKey
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery util/rand alphanums


def safe_encode_string(text: str) -> str:
    """rand.SafeEncodeString: each character mapped onto a vowel-free alphabet."""
    return "".join(_ALPHANUMS[ord(ch) % len(_ALPHANUMS)] for ch in text)


def fnv32(data: bytes) -> int:
    """hash/fnv New32 (FNV-1, 32 bits)."""
    h = 0x811C9DC5
    for byte in data:
        h = (h * 0x01000193) & 0xFFFFFFFF
        h ^= byte
    return h


def patch_of(template: dict[str, Any]) -> dict[str, Any]:
    """getPatch: the revision data restoring this pod template."""
    return {"spec": {"template": {**copy.deepcopy(template), "$patch": "replace"}}}


def template_of(revision: dict[str, Any]) -> dict[str, Any]:
    """ApplyRevision, for the only field a revision holds: its pod template."""
    template = dict(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    return copy.deepcopy(template)


def hash_revision(data: dict[str, Any], collision_count: int | None) -> str:
    """HashControllerRevision: FNV-1 of the data (and the collision count), safe-encoded."""
    raw = json.dumps(semantic(data), sort_keys=True, separators=(",", ":")).encode()
    if collision_count is not None:
        raw += str(collision_count).encode()
    return safe_encode_string(str(fnv32(raw)))


def new_revision(
    parent: dict[str, Any],
    template: dict[str, Any],
    revision: int,
    digest: str,
    label: str = HASH_LABEL,
) -> dict[str, Any]:
    """NewControllerRevision (StatefulSets; a DaemonSet's snapshot is the same but for the label
    and its hash): named `<parent>-<hash>`, labelled with the template's labels and the hash,
    owned by the parent, carrying the parent's annotations."""
    data = patch_of(template)
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    labels[label] = digest
    meta = parent["metadata"]
    cr: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": f"{meta['name'][:223]}-{digest}",
            "namespace": meta["namespace"],
            "labels": labels,
            "ownerReferences": [controller_ref(parent)],
        },
        "data": data,
        "revision": revision,
    }
    if meta.get("annotations"):
        cr["metadata"]["annotations"] = dict(meta["annotations"])
    return cr


def equal_revision(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """EqualRevision: the same hash label and semantically the same data."""
    la = (a["metadata"].get("labels") or {}).get(HASH_LABEL)
    lb = (b["metadata"].get("labels") or {}).get(HASH_LABEL)
    return la == lb and semantic(a.get("data")) == semantic(b.get("data"))


def sort_revisions(revisions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """SortControllerRevisions: by revision, then creation, then name."""
    return sorted(
        revisions,
        key=lambda r: (
            int(r.get("revision", 0)),
            r["metadata"].get("creationTimestamp", ""),
            r["metadata"]["name"],
        ),
    )


def next_revision(revisions: list[dict[str, Any]]) -> int:
    return max((int(r.get("revision", 0)) for r in revisions), default=0) + 1
