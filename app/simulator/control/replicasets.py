"""The ReplicaSet controller's status, pure (kubernetes/kubernetes
`pkg/controller/replicaset/replica_set_utils.go` calculateStatus, and `IsPodAvailable` of
`pkg/api/v1/pod/util.go` for minReadySeconds)."""

from __future__ import annotations

from typing import Any

from app.simulator.apiserver import selectors
from app.simulator.workload.clock import parse_rfc3339, rfc3339


def ready_since(pod: dict[str, Any]) -> float | None:
    """When the pod's Ready condition became True; None if it is not ready."""
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            if cond.get("status") != "True":
                return None
            ts = cond.get("lastTransitionTime")
            return parse_rfc3339(ts) if ts else 0.0
    return None


def is_available(pod: dict[str, Any], min_ready_seconds: int, now: float) -> bool:
    """IsPodAvailable: ready, and for longer than minReadySeconds."""
    since = ready_since(pod)
    if since is None:
        return False
    return min_ready_seconds == 0 or since + min_ready_seconds < now


def replicaset_status(
    rs: dict[str, Any], pods: list[dict[str, Any]], now: float, error: str | None
) -> dict[str, Any]:
    """calculateStatus: counts of the ReplicaSet's active pods (zero counts but `replicas` left
    out, omitempty), and the ReplicaFailure condition while creating pods fails."""
    sel = selectors.from_label_selector_object(rs["spec"].get("selector"))
    min_ready = int(rs["spec"].get("minReadySeconds") or 0)
    status: dict[str, Any] = {
        "replicas": len(pods),
        "fullyLabeledReplicas": sum(
            1 for p in pods if selectors.matches(sel, p["metadata"].get("labels"))
        ),
        "readyReplicas": sum(1 for p in pods if ready_since(p) is not None),
        "availableReplicas": sum(1 for p in pods if is_available(p, min_ready, now)),
        "observedGeneration": rs["metadata"].get("generation", 1),
    }
    status = {k: v for k, v in status.items() if v or k == "replicas"}
    conditions = [dict(c) for c in (rs.get("status") or {}).get("conditions") or []]
    failure = next((c for c in conditions if c.get("type") == "ReplicaFailure"), None)
    if error is not None and failure is None:
        want = rs["spec"].get("replicas", 1)
        reason = "FailedCreate" if len(pods) < want else "FailedDelete"
        conditions.append(
            {
                "type": "ReplicaFailure",
                "status": "True",
                "lastTransitionTime": rfc3339(now),
                "reason": reason,
                "message": error,
            }
        )
    elif error is None and failure is not None:
        conditions.remove(failure)
    if conditions:
        status["conditions"] = conditions
    return status
