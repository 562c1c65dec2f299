"""The disruption controller's expected pod count (pkg/controller/disruption/disruption.go
getExpectedPodCount, getExpectedScale): with an integer minAvailable, the pods the budget
selects; with maxUnavailable or a percentage, the sum of the scales of the pods' controllers (a
ReplicaSet's, or its Deployment's, a StatefulSet's), pods without a controller not counted. A
budget that expects no pods allows no disruption (updatePdbStatus)."""

from __future__ import annotations

from typing import Any

from app.simulator.apiserver.resources import DEPLOYMENT, REPLICASET, STATEFULSET
from app.simulator.apiserver.store import Store


def _controller(meta: dict[str, Any]) -> dict[str, Any] | None:
    return next((o for o in meta.get("ownerReferences") or [] if o.get("controller")), None)


def _scale(store: Store, ns: str, ref: dict[str, Any]) -> tuple[str, int] | None:
    """(uid, replicas) of the controller the finders find for a pod's controllerRef."""
    if ref.get("kind") == "ReplicaSet":
        rs = store.get(REPLICASET, ns, ref.get("name", ""))
        if rs is None:
            return None
        owner = _controller(rs.obj["metadata"])
        if owner and owner.get("kind") == "Deployment":
            deploy = store.get(DEPLOYMENT, ns, owner.get("name", ""))
            if deploy is None:
                return None
            return deploy.obj["metadata"]["uid"], int(deploy.obj["spec"].get("replicas", 1))
        return rs.obj["metadata"]["uid"], int(rs.obj["spec"].get("replicas", 1))
    if ref.get("kind") == "StatefulSet":
        sts = store.get(STATEFULSET, ns, ref.get("name", ""))
        if sts is None:
            return None
        return sts.obj["metadata"]["uid"], int(sts.obj["spec"].get("replicas", 1))
    return None


def expected_pods(store: Store, spec: dict[str, Any], pods: list[dict[str, Any]]) -> int:
    min_available = spec.get("minAvailable")
    if "maxUnavailable" not in spec and not (
        isinstance(min_available, str) and min_available.endswith("%")
    ):
        return len(pods)
    scales: dict[str, int] = {}
    for pod in pods:
        ref = _controller(pod["metadata"])
        if ref is None:
            continue  # an unmanaged pod
        found = _scale(store, pod["metadata"].get("namespace", ""), ref)
        if found is not None:
            scales[found[0]] = found[1]
    return sum(scales.values())
