"""Reading a pod's JSON (as the API server or an informer serves it) into plain values, no I/O.

One reading for every part that looks at pods: the webhook and the updater (which containers are
sized, their requests and limits), the recommender (CPU samples are weighted by the request) and
the updater's gates (which pods are live, running, ready). Quantities are read with
`app.core.quantity.amount`, kube-apiserver's grammar; a malformed one reads as unset.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.core.quantity import amount

Obj = dict[str, Any]


@dataclass(frozen=True)
class ContainerResources:
    """Millicores and bytes; None where the pod does not set it."""

    cpu_request: int | None = None
    memory_request: int | None = None
    cpu_limit: int | None = None
    memory_limit: int | None = None

    def requests(self) -> dict[str, int]:
        """The requests that are set, by resource name."""
        pairs = (("cpu", self.cpu_request), ("memory", self.memory_request))
        return {k: v for k, v in pairs if v is not None}

    def limits(self) -> dict[str, int]:
        """The limits that are set, by resource name."""
        pairs = (("cpu", self.cpu_limit), ("memory", self.memory_limit))
        return {k: v for k, v in pairs if v is not None}


def parse_time(text: str | None) -> float | None:
    """An RFC 3339 timestamp as unix seconds; None when absent or malformed."""
    if not text:
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def _amount(resource: str, value: Any) -> int | None:
    if value is None:
        return None
    try:
        return amount(resource, value)
    except ValueError:
        return None


def is_sidecar(init_container: Any) -> bool:
    """An init container with restartPolicy Always: a native sidecar, which keeps running."""
    return isinstance(init_container, Mapping) and init_container.get("restartPolicy") == "Always"


def app_containers(pod: Obj) -> list[Obj]:
    """Regular containers and restartable (sidecar) init containers: the ones that keep running."""
    spec = pod.get("spec") or {}
    sidecars = [c for c in spec.get("initContainers") or [] if is_sidecar(c)]
    return [*(spec.get("containers") or []), *sidecars]


def plain_init_containers(pod: Obj) -> list[Obj]:
    """Init containers that run to completion (not sidecars): never resized, yet they count for
    the QoS class and for LimitRanger."""
    spec = pod.get("spec") or {}
    return [c for c in spec.get("initContainers") or [] if not is_sidecar(c)]


def resources_of(resources: Any) -> ContainerResources:
    """One `resources` block (a container's or the pod-level spec.resources)."""
    res = resources if isinstance(resources, dict) else {}
    req, lim = res.get("requests") or {}, res.get("limits") or {}
    return ContainerResources(
        _amount("cpu", req.get("cpu")),
        _amount("memory", req.get("memory")),
        _amount("cpu", lim.get("cpu")),
        _amount("memory", lim.get("memory")),
    )


def container_resources(pod: Obj) -> dict[str, ContainerResources]:
    """Requests and limits of the app containers (`app_containers`), by container name."""
    return {c.get("name", ""): resources_of(c.get("resources")) for c in app_containers(pod)}


def condition(pod: Obj, type_: str) -> dict[str, Any] | None:
    """The pod's condition of this type when its status is "True", else None."""
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == type_ and c.get("status") == "True":
            return dict(c)
    return None


def is_running(pod: Obj) -> bool:
    """Phase Running and not being deleted."""
    return (pod.get("status") or {}).get("phase") == "Running" and not (
        pod.get("metadata") or {}
    ).get("deletionTimestamp")


def is_live(pod: Obj) -> bool:
    """Scheduled, not terminal, not being deleted: the pods VPA's updater lists
    (spec.nodeName!=, status.phase!=Succeeded,Failed). Only these are counted or touched."""
    return (
        bool((pod.get("spec") or {}).get("nodeName"))
        and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        and not (pod.get("metadata") or {}).get("deletionTimestamp")
    )


def is_ready(pod: Obj) -> bool:
    """Running with a true Ready condition: available, as PodDisruptionBudgets count it."""
    return is_running(pod) and condition(pod, "Ready") is not None


def pod_ref(pod: Obj) -> str:
    """namespace/name, for logs and the audit trail."""
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}"
