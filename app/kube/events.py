"""core/v1 Events as Kubernetes' own event recorder writes them.

`kubectl describe` finds an object's Events with a fieldSelector on the involved object's name,
namespace, kind **and uid**, so an Event whose `involvedObject` lacks the uid never shows there.
The reference is built as client-go does (`tools/reference/ref.go` `GetReference`: kind,
apiVersion, name, namespace, uid, resourceVersion of the object as the writer saw it), and the
Event as `tools/record/event.go` `makeEvent` does (count 1, first = last timestamp, `source`
and `reportingController` both the component).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

COMPONENT = "rightsizer"
MESSAGE_LIMIT = 1024  # rightsizer's own cap: a message is one line of `kubectl describe`


def object_reference(api_version: str, kind: str, meta: Mapping[str, Any]) -> dict[str, str]:
    """An ObjectReference to the object whose `metadata` is `meta` (uid and resourceVersion
    included when the object has them, as `GetReference` copies them)."""
    ref = {
        "apiVersion": api_version,
        "kind": kind,
        "name": str(meta.get("name") or ""),
        "namespace": str(meta.get("namespace") or ""),
    }
    for field in ("uid", "resourceVersion"):
        if meta.get(field):
            ref[field] = str(meta[field])
    return ref


def event_body(
    ref: Mapping[str, str], reason: str, message: str, type_: str = "Normal"
) -> dict[str, Any]:
    """The Event to POST in the involved object's namespace."""
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": f"{ref['name']}.", "namespace": ref["namespace"]},
        "involvedObject": dict(ref),
        "reason": reason,
        "message": message[:MESSAGE_LIMIT],
        "type": type_,
        "source": {"component": COMPONENT},
        "reportingComponent": COMPONENT,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }
