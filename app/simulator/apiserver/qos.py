"""A pod's QoS class as kube-apiserver computes it.

Re-derived from kubernetes/kubernetes pkg/apis/core/helper/qos/qos.go (ComputePodQOS, GetPodQOS):
pod-level resources, when set, decide alone; otherwise requests and limits of every regular AND
init container count (ephemeral containers cannot have resources). Only cpu and memory, and only
quantities above zero, count. Guaranteed needs cpu and memory limits on every container and the
summed requests equal to the summed limits; BestEffort has no request or limit at all.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from app.simulator.apiserver import quantity

QOS_RESOURCES = ("cpu", "memory")


def _amounts(values: dict[str, Any] | None) -> dict[str, Decimal]:
    out = {}
    for name, q in (values or {}).items():
        if name in QOS_RESOURCES:
            amount = quantity.parse(q)
            if amount > 0:
                out[name] = amount
    return out


def _add(total: dict[str, Decimal], values: dict[str, Decimal]) -> None:
    for name, amount in values.items():
        total[name] = total.get(name, Decimal(0)) + amount


def compute(pod: dict[str, Any]) -> str:
    spec = pod.get("spec") or {}
    requests: dict[str, Decimal] = {}
    limits: dict[str, Decimal] = {}
    guaranteed = True
    pod_level = spec.get("resources") or {}
    if _amounts(pod_level.get("requests")) or _amounts(pod_level.get("limits")):
        _add(requests, _amounts(pod_level.get("requests")))
        lim = _amounts(pod_level.get("limits"))
        _add(limits, lim)
        if lim and not set(QOS_RESOURCES) <= set(lim):
            guaranteed = False
    else:
        for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
            res = c.get("resources") or {}
            _add(requests, _amounts(res.get("requests")))
            lim = _amounts(res.get("limits"))
            _add(limits, lim)
            if not set(QOS_RESOURCES) <= set(lim):
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    matched = all(limits.get(n) == v for n, v in requests.items())
    if guaranteed and matched and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"


def of(pod: dict[str, Any]) -> str:
    """GetPodQOS: the class recorded in status.qosClass, else computed."""
    return str((pod.get("status") or {}).get("qosClass") or compute(pod))
