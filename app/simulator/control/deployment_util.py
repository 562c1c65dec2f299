"""The Deployment controller's arithmetic, pure: fenceposts, revisions and their annotations,
proportional scaling, status and conditions.

Re-derived from kubernetes/kubernetes `pkg/controller/deployment/util/deployment_util.go` (and the
status calculation of `pkg/controller/deployment/sync.go` and `progress.go`); names follow it.
Objects are the JSON dicts the store holds; nothing here reads or writes the store.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from app.simulator.control.objects import semantic
from app.simulator.workload.clock import parse_rfc3339, rfc3339

REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
HASH_LABEL = "pod-template-hash"  # apps.DefaultDeploymentUniqueLabelKey
MAX_REV_HISTORY_CHARS = 2000  # maxRevHistoryLengthInChars (deployment_controller.go)
MAX_INT32 = 2**31 - 1

# Condition reasons (deployment_util.go)
NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
RS_UPDATED = "ReplicaSetUpdated"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"
FAILED_RS_CREATE = "ReplicaSetCreateError"
MIN_AVAILABLE = "MinimumReplicasAvailable"
MIN_UNAVAILABLE = "MinimumReplicasUnavailable"

# annotationsToSkip: never copied from a Deployment to its ReplicaSets.
_SKIP_ANNOTATIONS = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        REVISION,
        REVISION_HISTORY,
        DESIRED_REPLICAS,
        MAX_REPLICAS,
        "deprecated.deployment.rollback.to",
    }
)


# --- int-or-percent and fenceposts -------------------------------------------------------------


def scaled_value(value: Any, total: int, *, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent: an int, or "N%" of `total` rounded up or down."""
    if isinstance(value, str):
        pct = int(value.removesuffix("%"))
        exact = pct * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    return int(value)


def replicas(obj: dict[str, Any]) -> int:
    value = (obj.get("spec") or {}).get("replicas", 1)
    return int(value) if isinstance(value, int) else 1


def is_rolling_update(d: dict[str, Any]) -> bool:
    strategy: dict[str, Any] = d["spec"].get("strategy") or {}
    return bool(strategy.get("type", "RollingUpdate") == "RollingUpdate")


def resolve_fenceposts(d: dict[str, Any]) -> tuple[int, int]:
    """ResolveFenceposts: (maxSurge rounded up, maxUnavailable rounded down) of the desired
    replicas; both 0 makes maxUnavailable 1 (surge might not fit a quota)."""
    rolling = (d["spec"].get("strategy") or {}).get("rollingUpdate") or {}
    desired = replicas(d)
    surge = scaled_value(rolling.get("maxSurge", 0), desired, round_up=True)
    unavailable = scaled_value(rolling.get("maxUnavailable", 0), desired, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(d: dict[str, Any]) -> int:
    return resolve_fenceposts(d)[0] if is_rolling_update(d) else 0


def max_unavailable(d: dict[str, Any]) -> int:
    if not is_rolling_update(d) or replicas(d) == 0:
        return 0
    return min(resolve_fenceposts(d)[1], replicas(d))


# --- replica sets ------------------------------------------------------------------------------


def rs_replicas(rs: dict[str, Any] | None) -> int:
    return 0 if rs is None else replicas(rs)


def rs_status(rs: dict[str, Any] | None, field: str) -> int:
    return 0 if rs is None else int((rs.get("status") or {}).get(field, 0))


def replica_count(rss: Sequence[dict[str, Any] | None]) -> int:
    """GetReplicaCountForReplicaSets: the sum of spec.replicas."""
    return sum(rs_replicas(rs) for rs in rss)


def actual_count(rss: Sequence[dict[str, Any] | None]) -> int:
    """GetActualReplicaCountForReplicaSets: the sum of status.replicas."""
    return sum(rs_status(rs, "replicas") for rs in rss)


def available_count(rss: Sequence[dict[str, Any] | None]) -> int:
    return sum(rs_status(rs, "availableReplicas") for rs in rss)


def ready_count(rss: Sequence[dict[str, Any] | None]) -> int:
    return sum(rs_status(rs, "readyReplicas") for rs in rss)


def active(rss: Sequence[dict[str, Any] | None]) -> list[dict[str, Any]]:
    """controller.FilterActiveReplicaSets: those with replicas to run."""
    return [rs for rs in rss if rs is not None and rs_replicas(rs) > 0]


def by_creation(rs: dict[str, Any]) -> tuple[str, str]:
    """ReplicaSetsByCreationTimestamp: oldest first, then by name."""
    meta = rs["metadata"]
    return meta.get("creationTimestamp", ""), meta["name"]


def revision(obj: dict[str, Any]) -> int:
    try:
        return int(((obj.get("metadata") or {}).get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


def max_revision(rss: list[dict[str, Any]]) -> int:
    return max((revision(rs) for rs in rss), default=0)


def template_without_hash(template: dict[str, Any]) -> dict[str, Any]:
    meta = dict(template.get("metadata") or {})
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k != HASH_LABEL}
    meta.pop("labels", None)
    if labels:
        meta["labels"] = labels
    return {**template, "metadata": meta}


def equal_ignore_hash(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """EqualIgnoreHash: the templates are equal but for the pod-template-hash label."""
    return bool(semantic(template_without_hash(a)) == semantic(template_without_hash(b)))


def find_new_replica_set(d: dict[str, Any], rss: list[dict[str, Any]]) -> dict[str, Any] | None:
    """FindNewReplicaSet: the oldest ReplicaSet whose template is the Deployment's."""
    for rs in sorted(rss, key=by_creation):
        if equal_ignore_hash(rs["spec"]["template"], d["spec"]["template"]):
            return rs
    return None


def find_active_or_latest(
    new_rs: dict[str, Any] | None, old_rss: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """FindActiveOrLatest: the only active ReplicaSet, else the newest when none is active."""
    if new_rs is None and not old_rss:
        return None
    newest_first = sorted(old_rss, key=by_creation, reverse=True)
    running = active([*newest_first, new_rs])
    if not running:
        return new_rs if new_rs is not None else newest_first[0]
    return running[0] if len(running) == 1 else None


def is_saturated(d: dict[str, Any], rs: dict[str, Any] | None) -> bool:
    if rs is None:
        return False
    desired = (rs["metadata"].get("annotations") or {}).get(DESIRED_REPLICAS, "")
    want = replicas(d)
    return (
        desired.isdigit()
        and rs_replicas(rs) == want
        and int(desired) == want
        and rs_status(rs, "availableReplicas") == want
    )


def new_rs_new_replicas(
    d: dict[str, Any], all_rss: Sequence[dict[str, Any] | None], new_rs: dict[str, Any]
) -> int:
    """NewRSNewReplicas: how far the new ReplicaSet may grow now (maxSurge above the desired
    total for a rolling update, everything for Recreate)."""
    want = replicas(d)
    if not is_rolling_update(d):
        return want
    rolling = (d["spec"].get("strategy") or {}).get("rollingUpdate") or {}
    surge = scaled_value(rolling.get("maxSurge", 0), want, round_up=True)
    current = replica_count(all_rss)
    if current >= want + surge:
        return rs_replicas(new_rs)
    scale_up = min(want + surge - current, want - rs_replicas(new_rs))
    return rs_replicas(new_rs) + scale_up


def replicas_annotations(d: dict[str, Any]) -> dict[str, str]:
    return {
        DESIRED_REPLICAS: str(replicas(d)),
        MAX_REPLICAS: str(replicas(d) + max_surge(d)),
    }


def replicas_annotations_need_update(rs: dict[str, Any], d: dict[str, Any]) -> bool:
    have = rs["metadata"].get("annotations") or {}
    return any(have.get(k) != v for k, v in replicas_annotations(d).items())


def set_new_replica_set_annotations(
    d: dict[str, Any], rs: dict[str, Any], new_revision: int, *, exists: bool
) -> bool:
    """SetNewReplicaSetAnnotations: copy the Deployment's own annotations, raise the revision
    to `new_revision` (keeping the earlier ones in revision-history when a rollback brings an
    old ReplicaSet back), and on creation the replicas annotations. True if anything changed."""
    ann = rs["metadata"].setdefault("annotations", {})
    changed = False
    for k, v in (d["metadata"].get("annotations") or {}).items():
        if k in _SKIP_ANNOTATIONS or ann.get(k) == v:
            continue
        ann[k] = v
        changed = True
    old = ann.get(REVISION)
    try:
        old_int = int(old) if old else 0
    except ValueError:
        return False
    if old_int < new_revision:
        ann[REVISION] = str(new_revision)
        changed = True
        if old is not None:
            _append_revision_history(ann, old)
    if not exists:
        for k, v in replicas_annotations(d).items():
            if ann.get(k) != v:
                ann[k] = v
                changed = True
    return changed


def _append_revision_history(ann: dict[str, str], old: str) -> None:
    history = ann.get(REVISION_HISTORY, "")
    if not history:
        ann[REVISION_HISTORY] = old
        return
    revisions = history.split(",")
    total = len(history) + len(old) + 1
    start = 0
    while total > MAX_REV_HISTORY_CHARS and start < len(revisions):
        total -= len(revisions[start]) + 1
        start += 1
    if total <= MAX_REV_HISTORY_CHARS:
        ann[REVISION_HISTORY] = ",".join([*revisions[start:], old])


def replica_set_proportion(rs: dict[str, Any], d: dict[str, Any], to_add: int, added: int) -> int:
    """GetReplicaSetProportion: this ReplicaSet's share of a scaling of a Deployment in the
    middle of a rollout, by its size relative to the Deployment's size before the scaling
    (its max-replicas annotation)."""
    if rs_replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = _replica_set_fraction(rs, d)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def _replica_set_fraction(rs: dict[str, Any], d: dict[str, Any]) -> int:
    if replicas(d) == 0:
        return -rs_replicas(rs)
    max_now = replicas(d) + max_surge(d)
    annotated = (rs["metadata"].get("annotations") or {}).get(MAX_REPLICAS, "")
    before = int(annotated) if annotated.isdigit() else 0
    if before == 0:
        before = int((d.get("status") or {}).get("replicas", 0))  # no annotation: current size
        if before == 0:
            return 0
    # integer.RoundToInt32: half away from zero
    exact = rs_replicas(rs) * max_now / before
    return math.floor(exact + 0.5) - rs_replicas(rs)


# --- status and conditions ---------------------------------------------------------------------


def has_progress_deadline(d: dict[str, Any]) -> bool:
    value = d["spec"].get("progressDeadlineSeconds")
    return isinstance(value, int) and value != MAX_INT32


def condition(status: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == type_), None)


def new_condition(type_: str, status: str, reason: str, message: str, now: float) -> dict[str, Any]:
    ts = rfc3339(now)
    return {
        "type": type_,
        "status": status,
        "lastUpdateTime": ts,
        "lastTransitionTime": ts,
        "reason": reason,
        "message": message,
    }


def set_condition(status: dict[str, Any], cond: dict[str, Any]) -> None:
    """SetDeploymentCondition: a condition with the same status and reason is left alone; the
    transition time survives a change of reason; the new condition goes last."""
    current = condition(status, cond["type"])
    if current and (current["status"], current.get("reason")) == (cond["status"], cond["reason"]):
        return
    if current and current["status"] == cond["status"]:
        cond = {**cond, "lastTransitionTime": current["lastTransitionTime"]}
    remove_condition(status, cond["type"])
    status.setdefault("conditions", []).append(cond)


def remove_condition(status: dict[str, Any], type_: str) -> None:
    kept = [c for c in status.get("conditions") or [] if c.get("type") != type_]
    if kept:
        status["conditions"] = kept
    else:
        status.pop("conditions", None)


def calculate_status(
    all_rss: Sequence[dict[str, Any] | None],
    new_rs: dict[str, Any] | None,
    d: dict[str, Any],
    now: float,
) -> dict[str, Any]:
    """calculateStatus (sync.go): counts from the ReplicaSets, the Available condition from
    maxUnavailable, other conditions carried over. Zero counts are left out (omitempty)."""
    available = available_count(all_rss)
    status: dict[str, Any] = {
        "observedGeneration": d["metadata"].get("generation", 1),
        "replicas": actual_count(all_rss),
        "updatedReplicas": actual_count([new_rs]),
        "readyReplicas": ready_count(all_rss),
        "availableReplicas": available,
        "unavailableReplicas": max(replica_count(all_rss) - available, 0),
    }
    status = {k: v for k, v in status.items() if v}
    old = d.get("status") or {}
    if "collisionCount" in old:
        status["collisionCount"] = old["collisionCount"]
    if old.get("conditions"):
        status["conditions"] = [dict(c) for c in old["conditions"]]
    if available >= replicas(d) - max_unavailable(d):
        cond = new_condition(
            "Available", "True", MIN_AVAILABLE, "Deployment has minimum availability.", now
        )
    else:
        cond = new_condition(
            "Available",
            "False",
            MIN_UNAVAILABLE,
            "Deployment does not have minimum availability.",
            now,
        )
    set_condition(status, cond)
    return status


def deployment_complete(d: dict[str, Any], status: dict[str, Any]) -> bool:
    want = replicas(d)
    return bool(
        status.get("updatedReplicas", 0) == want
        and status.get("replicas", 0) == want
        and status.get("availableReplicas", 0) == want
        and status.get("observedGeneration", 0) >= d["metadata"].get("generation", 1)
    )


def deployment_progressing(d: dict[str, Any], new: dict[str, Any]) -> bool:
    old = d.get("status") or {}

    def get(s: dict[str, Any], k: str) -> int:
        return int(s.get(k, 0))

    old_old = get(old, "replicas") - get(old, "updatedReplicas")
    new_old = get(new, "replicas") - get(new, "updatedReplicas")
    return (
        get(new, "updatedReplicas") > get(old, "updatedReplicas")
        or new_old < old_old
        or get(new, "readyReplicas") > get(old, "readyReplicas")
        or get(new, "availableReplicas") > get(old, "availableReplicas")
    )


def deployment_timed_out(d: dict[str, Any], status: dict[str, Any], now: float) -> bool:
    if not has_progress_deadline(d):
        return False
    cond = condition(status, "Progressing")
    if cond is None or cond.get("reason") == NEW_RS_AVAILABLE:
        return False
    if cond.get("reason") == TIMED_OUT:
        return True
    since = parse_rfc3339(cond["lastUpdateTime"])
    return since + int(d["spec"]["progressDeadlineSeconds"]) < now


def rollout_status(
    d: dict[str, Any],
    all_rss: Sequence[dict[str, Any] | None],
    new_rs: dict[str, Any] | None,
    now: float,
) -> dict[str, Any]:
    """syncRolloutStatus (progress.go): the status with the Progressing condition of the
    rollout (NewReplicaSetAvailable, ReplicaSetUpdated or ProgressDeadlineExceeded) and any
    ReplicaFailure of the new ReplicaSet."""
    status = calculate_status(all_rss, new_rs, d, now)
    if not has_progress_deadline(d):
        remove_condition(status, "Progressing")
    current = condition(d.get("status") or {}, "Progressing")
    complete_before = (
        status.get("replicas", 0) == status.get("updatedReplicas", 0)
        and current is not None
        and current.get("reason") == NEW_RS_AVAILABLE
    )
    if has_progress_deadline(d) and not complete_before:
        _progress(d, status, current, new_rs, now)
    failure = _replica_failure(all_rss, new_rs)
    if failure is not None:
        set_condition(status, failure)
    else:
        remove_condition(status, "ReplicaFailure")
    return status


def _progress(
    d: dict[str, Any],
    status: dict[str, Any],
    current: dict[str, Any] | None,
    new_rs: dict[str, Any] | None,
    now: float,
) -> None:
    name = d["metadata"]["name"]
    what = f'ReplicaSet "{new_rs["metadata"]["name"]}"' if new_rs else f'Deployment "{name}"'
    if deployment_complete(d, status):
        set_condition(
            status,
            new_condition(
                "Progressing", "True", NEW_RS_AVAILABLE, f"{what} has successfully progressed.", now
            ),
        )
    elif deployment_progressing(d, status):
        cond = new_condition("Progressing", "True", RS_UPDATED, f"{what} is progressing.", now)
        if current is not None:
            if current["status"] == "True":
                cond["lastTransitionTime"] = current["lastTransitionTime"]
            remove_condition(status, "Progressing")
        set_condition(status, cond)
    elif deployment_timed_out(d, status, now):
        set_condition(
            status,
            new_condition(
                "Progressing", "False", TIMED_OUT, f"{what} has timed out progressing.", now
            ),
        )


def _replica_failure(
    all_rss: Sequence[dict[str, Any] | None], new_rs: dict[str, Any] | None
) -> dict[str, Any] | None:
    """getReplicaFailures (progress.go): the new ReplicaSet's ReplicaFailure condition, else an
    old one's, as a Deployment condition."""
    ordered = [new_rs, *(rs for rs in all_rss if rs is not new_rs)]
    for rs in ordered:
        if rs is None:
            continue
        cond = condition(rs.get("status") or {}, "ReplicaFailure")
        if cond is not None:
            ts = cond.get("lastTransitionTime", "")
            return {
                "type": "ReplicaFailure",
                "status": cond["status"],
                "lastUpdateTime": ts,
                "lastTransitionTime": ts,
                "reason": cond.get("reason", ""),
                "message": cond.get("message", ""),
            }
    return None
