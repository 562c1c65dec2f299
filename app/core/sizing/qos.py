"""A pod's QoS class by Kubernetes' rule, from amounts (millicores / bytes).

Re-derived from kubernetes/kubernetes pkg/apis/core/helper/qos/qos.go (ComputePodQOS): when the
pod has pod-level resources they alone decide; otherwise every regular AND init container counts
(a plain init container without resources makes a pod Burstable however its app containers are
sized). Only cpu and memory above zero count. Guaranteed: cpu and memory limits on every counted
container and, summed over them, requests equal to limits. BestEffort: no request or limit at all.
A limit without a request counts as a request of the same amount, as the API server defaults it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

Resources = Mapping[str, Mapping[str, int]]  # {"requests": {...}, "limits": {...}}
QOS_RESOURCES = ("cpu", "memory")


def _positive(values: Mapping[str, int] | None) -> dict[str, int]:
    return {k: v for k, v in (values or {}).items() if k in QOS_RESOURCES and v and v > 0}


def pod_qos(containers: Iterable[Resources], pod_level: Resources | None = None) -> str:
    """Guaranteed, Burstable or BestEffort. `containers`: every regular and init container's
    {"requests", "limits"}; `pod_level`: the pod's spec.resources, if any."""
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    guaranteed = True
    level = pod_level or {}
    if _positive(level.get("requests")) or _positive(level.get("limits")):
        groups: list[Resources] = [level]
    else:
        groups = list(containers)
    for c in groups:
        lim = _positive(c.get("limits"))
        req = {**lim, **_positive(c.get("requests"))}
        for k, v in req.items():
            requests[k] = requests.get(k, 0) + v
        for k, v in lim.items():
            limits[k] = limits.get(k, 0) + v
        if (lim or c is not level) and not set(QOS_RESOURCES) <= set(lim):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    matched = all(limits.get(k) == v for k, v in requests.items())
    return "Guaranteed" if guaranteed and matched and len(requests) == len(limits) else "Burstable"
