"""The metrics wire format -> recommender samples (no I/O): PodMetrics items, OOM kills.

The one place that reads metrics.k8s.io PodMetrics (app.kube.cluster only fetches them) and a
pod's container statuses for OOM kills, from its view (app.core.pods.PodView).

CPU samples are weighted by the container's current CPU request, so the pod object is needed next
to its metrics. An OOM kill shows up as a container whose lastState is `terminated` with reason
`OOMKilled` and whose restartCount grew since we last looked; the memory it hit is its limit
(or, without a limit, its request).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from app.core.pods import ContainerResources, Obj, PodView, parse_time
from app.core.quantity import amount_float

log = logging.getLogger(__name__)


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
            cpu = amount_float(usage["cpu"]) if "cpu" in usage else None
            mem = amount_float(usage["memory"]) if "memory" in usage else None
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


def new_oom_kills(pod: PodView, restarts_seen: dict[tuple[str, str, str], int]) -> list[OomKill]:
    """OOM kills not reported before; updates restarts_seen (key: namespace, pod uid, container)."""
    resources = pod.resources()
    out = []
    for cs in pod.statuses:
        key = (pod.namespace, pod.uid or pod.name, cs.name)
        previous = restarts_seen.get(key)
        restarts_seen[key] = cs.restart_count
        if previous is not None and cs.restart_count <= previous:
            continue
        term = cs.last_termination
        if term is None or term.reason != "OOMKilled" or cs.restart_count == 0:
            continue
        res = resources.get(cs.name, ContainerResources())
        memory = res.memory_limit or res.memory_request
        if memory is None or term.finished is None:
            continue
        out.append(OomKill(pod.name, cs.name, term.finished, float(memory)))
    return out
