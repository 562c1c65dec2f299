"""Cluster objects -> recommender samples (no I/O): PodMetrics, pod requests, OOM kills.

CPU samples are weighted by the container's current CPU request, so the pod object is needed next
to its metrics. An OOM kill shows up as a container whose lastState is `terminated` with reason
`OOMKilled` and whose restartCount grew since we last looked; the memory it hit is its limit
(or, without a limit, its request).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.kube.quantity import quantity_amount, quantity_float

log = logging.getLogger(__name__)
Obj = dict[str, Any]


@dataclass(frozen=True)
class ContainerResources:
    """Millicores and bytes; None where the pod does not set it."""

    cpu_request: int | None = None
    memory_request: int | None = None
    cpu_limit: int | None = None
    memory_limit: int | None = None


@dataclass(frozen=True)
class Usage:
    pod: str
    container: str
    time: float
    cpu_cores: float | None
    memory_bytes: float | None


@dataclass(frozen=True)
class OomKill:
    pod: str
    container: str
    time: float
    memory_bytes: float


def parse_time(text: str | None) -> float | None:
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
        return quantity_amount(resource, value)
    except ValueError:
        return None


def app_containers(pod: Obj) -> list[Obj]:
    """Regular containers and restartable (sidecar) init containers: the ones that keep running."""
    spec = pod.get("spec") or {}
    sidecars = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    return [*(spec.get("containers") or []), *sidecars]


def container_resources(pod: Obj) -> dict[str, ContainerResources]:
    out = {}
    for c in app_containers(pod):
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        out[c.get("name", "")] = ContainerResources(
            _amount("cpu", req.get("cpu")),
            _amount("memory", req.get("memory")),
            _amount("cpu", lim.get("cpu")),
            _amount("memory", lim.get("memory")),
        )
    return out


def usage_from_metrics(item: Obj) -> list[Usage]:
    """One PodMetrics item -> a usage per container; malformed values are skipped and logged."""
    meta = item.get("metadata") or {}
    pod = meta.get("name") or ""
    t = parse_time(item.get("timestamp"))
    if t is None:
        log.warning("PodMetrics %s/%s has no valid timestamp; skipped", meta.get("namespace"), pod)
        return []
    out = []
    for c in item.get("containers") or []:
        usage = c.get("usage") or {}
        try:
            cpu = quantity_float(usage["cpu"]) if "cpu" in usage else None
            mem = quantity_float(usage["memory"]) if "memory" in usage else None
        except ValueError as e:
            log.warning(
                "PodMetrics %s/%s container %s: %s; skipped",
                meta.get("namespace"),
                pod,
                c.get("name"),
                e,
            )
            continue
        out.append(Usage(pod, c.get("name") or "", t, cpu, mem))
    return out


def new_oom_kills(pod: Obj, restarts_seen: dict[tuple[str, str, str], int]) -> list[OomKill]:
    """OOM kills not reported before; updates restarts_seen (key: namespace, pod uid, container)."""
    meta, status = pod.get("metadata") or {}, pod.get("status") or {}
    resources = container_resources(pod)
    out = []
    for cs in [
        *(status.get("containerStatuses") or []),
        *(status.get("initContainerStatuses") or []),
    ]:
        name = cs.get("name") or ""
        key = (meta.get("namespace") or "", meta.get("uid") or meta.get("name") or "", name)
        restarts = int(cs.get("restartCount") or 0)
        previous = restarts_seen.get(key)
        restarts_seen[key] = restarts
        if previous is not None and restarts <= previous:
            continue
        term = (cs.get("lastState") or {}).get("terminated") or {}
        if term.get("reason") != "OOMKilled" or restarts == 0:
            continue
        res = resources.get(name, ContainerResources())
        memory = res.memory_limit or res.memory_request
        t = parse_time(term.get("finishedAt"))
        if memory is None or t is None:
            continue
        out.append(OomKill(meta.get("name") or "", name, t, float(memory)))
    return out
