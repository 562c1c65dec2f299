"""The conditions of a workload's recommendation, no I/O: VPA 1.7's status.conditions and
rightsizer's own, each with a reason and a message, as the API, the CLI and the dashboard show.

VPA's types (vertical-pod-autoscaler pkg/apis/autoscaling.k8s.io/v1/types.go), set as its
recommender sets them (pkg/recommender/model/vpa.go updateConditionsLocked; input/cluster_feeder.go
getSelector and validateTargetRef):
- RecommendationProvided: True when some container has a recommendation, else False with the
  reason (NoPodsMatched, ConfigUnsupported, or NoUsage while pods have reported nothing yet).
- NoPodsMatched: the workload has no live pod ("No pods match this VPA object").
- ConfigUnsupported: the policy's target cannot be used: it does not exist, or it has a parent
  controller (a ReplicaSet of a Deployment, a Job of a CronJob: VPA wants the topmost one).
- ConfigDeprecated: the policy says something deprecated (updateMode Auto, VPA 1.7).
- LowConfidence and FetchingHistory, which VPA declares and never sets: here, some container has
  less history than the updater needs to act (RIGHTSIZER_UPDATER_MIN_HISTORY_SECONDS), and the
  recommender is loading Prometheus history for the workload.
rightsizer's own: LimitedByPolicy (minAllowed/maxAllowed changed a target), LimitedByLimitRange
(a new pod would get less or more than the target because of the namespace's LimitRanges),
CappedToNode (the target was brought down to fit the largest node the pods may run on, less its
DaemonSets: app.core.sizing.node_fit),
HeldBackByBudget (the updater left pods for the disruption budget or minReplicas),
ResizeInfeasible (an in-place resize cannot be done) and HeldBackByObservationWindow (the updater
leaves the workload alone for a while after its own changes: too many of them, or its pods were
OOM-killed or went unready since; app.core.sizing.observation).

The recommender writes the types of RECOMMENDER_TYPES, the updater those of UPDATER_TYPES; each
run replaces what it wrote before (app.store.conditions). Only conditions that hold are kept, and
RecommendationProvided whether it holds or not, as VPA keeps it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from app.core.policy import Policy
from app.core.quantity import parse_amount, readable
from app.core.recommendation import Recommendation
from app.core.sizing.limitrange import LimitRangeItem
from app.core.sizing.patch import UPDATES_ANNOTATION, PodInvalid, size_pod
from app.core.update_mode import UpdateMode

RECOMMENDATION_PROVIDED = "RecommendationProvided"
LOW_CONFIDENCE = "LowConfidence"
NO_PODS_MATCHED = "NoPodsMatched"
FETCHING_HISTORY = "FetchingHistory"
CONFIG_UNSUPPORTED = "ConfigUnsupported"
CONFIG_DEPRECATED = "ConfigDeprecated"
LIMITED_BY_LIMIT_RANGE = "LimitedByLimitRange"
LIMITED_BY_POLICY = "LimitedByPolicy"
HELD_BACK_BY_BUDGET = "HeldBackByBudget"
RESIZE_INFEASIBLE = "ResizeInfeasible"
HELD_BACK_BY_OBSERVATION = "HeldBackByObservationWindow"
CAPPED_TO_NODE = "CappedToNode"

RECOMMENDER_TYPES = (
    RECOMMENDATION_PROVIDED,
    LOW_CONFIDENCE,
    NO_PODS_MATCHED,
    FETCHING_HISTORY,
    CONFIG_UNSUPPORTED,
    CONFIG_DEPRECATED,
    LIMITED_BY_LIMIT_RANGE,
    LIMITED_BY_POLICY,
    CAPPED_TO_NODE,
)
UPDATER_TYPES = (HELD_BACK_BY_BUDGET, RESIZE_INFEASIBLE, HELD_BACK_BY_OBSERVATION)
TYPES = RECOMMENDER_TYPES + UPDATER_TYPES  # the order they are shown in

# Controllers whose own controller VPA wants as the target instead (cluster_feeder.go).
PARENT_KINDS = {"ReplicaSet": ("Deployment",), "Job": ("CronJob",)}


@dataclass(frozen=True)
class Condition:
    type: str
    status: str  # "True" or "False"
    reason: str = ""
    message: str = ""


@dataclass(frozen=True)
class WorkloadFacts:
    """What the recommender knows of one workload in a run."""

    recommendations: Mapping[str, Recommendation] = field(default_factory=dict)
    history: Mapping[str, float] = field(default_factory=dict)  # seconds of samples, per container
    has_pods: bool = True  # a live pod of it exists
    target_problem: str | None = None  # why its policy's target cannot be used
    fetching: bool = False  # Prometheus history is being loaded for it
    limit_range_notes: Sequence[str] = ()  # what the LimitRanges change for a new pod
    node_cap: str | None = None  # why its recommendation was capped to fit a node


def _duration(seconds: float) -> str:
    if seconds >= 86400:
        return f"{seconds / 86400:.1f}d"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f}h"
    return f"{seconds / 60:.0f}m"


def _history_held(seconds: float) -> str:
    """A container's history in whole hours (whole days from one day on), "under 1h" before
    the first: the LowConfidence message moves at most once an hour, so the recommender does
    not rewrite every young workload's condition row at every run (the exact span is in the
    API's `history`)."""
    if seconds < 3600:
        return "under 1h"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h"
    return f"{int(seconds // 86400)}d"


def policy_limits(recs: Mapping[str, Recommendation]) -> list[str]:
    """What minAllowed/maxAllowed changed, per container: target vs uncapped target."""
    notes = []
    for name, rec in sorted(recs.items()):
        for res in ("cpu", "memory"):
            before, after = getattr(rec.uncapped_target, res), getattr(rec.target, res)
            if after != before:
                how = "raised to minAllowed" if after > before else "capped at maxAllowed"
                notes.append(f"{name}: {res} {readable(res, before)} {how} {readable(res, after)}")
    return notes


def recommender_conditions(
    facts: WorkloadFacts, policy: Policy | None, low_confidence_seconds: float
) -> list[Condition]:
    """The conditions of RECOMMENDER_TYPES that hold, and RecommendationProvided."""
    out = []
    recs = facts.recommendations
    if facts.target_problem is not None:
        out.append(Condition(CONFIG_UNSUPPORTED, "True", "TargetUnsupported", facts.target_problem))
    if not facts.has_pods:
        out.append(Condition(NO_PODS_MATCHED, "True", NO_PODS_MATCHED, "No pods match it"))
    if recs:
        out.append(Condition(RECOMMENDATION_PROVIDED, "True"))
    elif facts.target_problem is not None:
        out.append(
            Condition(RECOMMENDATION_PROVIDED, "False", CONFIG_UNSUPPORTED, facts.target_problem)
        )
    elif not facts.has_pods:
        out.append(Condition(RECOMMENDATION_PROVIDED, "False", NO_PODS_MATCHED, "No pods match it"))
    else:
        out.append(
            Condition(RECOMMENDATION_PROVIDED, "False", "NoUsage", "no usage sample recorded yet")
        )
    if facts.fetching:
        out.append(
            Condition(
                FETCHING_HISTORY, "True", "LoadingHistory", "loading usage history from Prometheus"
            )
        )
    short = {c: s for c, s in sorted(facts.history.items()) if s < low_confidence_seconds}
    if recs and short:
        listed = ", ".join(f"{c} ({_history_held(s)})" for c, s in short.items())
        out.append(
            Condition(
                LOW_CONFIDENCE,
                "True",
                "ShortHistory",
                f"less than {_duration(low_confidence_seconds)} of usage history: {listed}; "
                "the updater does not act on it yet",
            )
        )
    if policy is not None and policy.deprecations:
        out.append(
            Condition(CONFIG_DEPRECATED, "True", "DeprecatedField", "; ".join(policy.deprecations))
        )
    if facts.limit_range_notes:
        out.append(
            Condition(
                LIMITED_BY_LIMIT_RANGE, "True", "LimitRange", "; ".join(facts.limit_range_notes)
            )
        )
    if notes := policy_limits(recs):
        out.append(Condition(LIMITED_BY_POLICY, "True", "ContainerPolicy", "; ".join(notes)))
    if facts.node_cap is not None:
        out.append(Condition(CAPPED_TO_NODE, "True", "LargestNode", facts.node_cap))
    return out


def target_problem(kind: str, name: str, found: Mapping[str, Any] | None) -> str | None:
    """Why a policy's target cannot be used (`found`: the object, None when it does not exist)."""
    if found is None:
        return f"Cannot read target {kind} {name}: it does not exist"
    meta = found.get("metadata")
    refs = meta.get("ownerReferences") if isinstance(meta, Mapping) else None
    for ref in refs if isinstance(refs, list) else []:
        if (
            isinstance(ref, Mapping)
            and ref.get("controller") is True
            and ref.get("kind") in PARENT_KINDS.get(kind, ())
        ):
            return (
                f"The target {kind} {name} has a parent controller ({ref.get('kind')} "
                f"{ref.get('name')}) but it should point to the topmost controller"
            )
    return None


def limit_range_notes(
    pod: Mapping[str, Any],
    recs: Mapping[str, Recommendation],
    policy: Policy,
    ranges: Sequence[LimitRangeItem],
) -> list[str]:
    """What the namespace's LimitRanges change in what a new pod like `pod` would get: the notes
    of the webhook's patch (app.core.sizing.patch) built afresh, as in a mode that sizes; for a
    container that already holds that, the notes the webhook recorded when it sized it."""
    if not ranges or not recs:
        return []
    meta = pod.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    annotations = annotations if isinstance(annotations, Mapping) else {}
    fresh = {
        **pod,
        "metadata": {
            **(meta if isinstance(meta, Mapping) else {}),
            "annotations": {k: v for k, v in annotations.items() if k != UPDATES_ANNOTATION},
        },
    }
    sizing = (
        policy
        if policy.update_mode.sizes_new_pods
        else replace(policy, update_mode=UpdateMode.INITIAL)
    )
    try:
        patch = size_pod(fresh, recs, sizing, ranges, parse=parse_amount)
    except PodInvalid:
        return []
    notes = {u.name: list(u.notes) for u in patch.updates}
    for name, record in _recorded(annotations).items():
        if name in recs and name not in notes:
            notes[name] = [str(n) for n in record.get("notes") or []]
    out = [f"{n}: {note}" for n, ns in sorted(notes.items()) for note in ns if "LimitRange" in note]
    if patch.reason == "unfit" and patch.detail:
        out.append(f"a new pod would be left unsized: {patch.detail}")
    return list(dict.fromkeys(out))


def _recorded(annotations: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The containers of the webhook's updates annotation; garbage reads as none."""
    try:
        doc = json.loads(annotations.get(UPDATES_ANNOTATION) or "")
    except (ValueError, TypeError, RecursionError):
        return {}
    containers = doc.get("containers") if isinstance(doc, dict) else None
    if not isinstance(containers, dict):
        return {}
    return {str(k): v for k, v in containers.items() if isinstance(v, dict)}


def sort_key(type_: str) -> int:
    return TYPES.index(type_) if type_ in TYPES else len(TYPES)
