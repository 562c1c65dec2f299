"""The updater's removal of CPU startup boosts (VPA 1.7's startupBoost; app.core.sizing.boost
decides what and when): each pod Ready for the boost's duration is resized in place to what the
webhook gave it without the boost, in any update mode, within its workload's disruption budget
(not minReplicas, as VPA's CanUnboost) and the global eviction rate; then its annotation goes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from app.core.pods import PodView
from app.core.policy import Policy
from app.core.sizing.boost import BOOST_ANNOTATION, boosted, expired, remaining, unboost_body
from app.core.sizing.plan import describe_change
from app.core.sizing.priority import DisruptionBudget, TokenBucket
from app.core.workload_key import WorkloadKey
from app.kube.actions import ANSWER_LOST, MAY_BE_DONE, PodActions

log = logging.getLogger(__name__)

# The updater's audit and Event: (action, pod, reason, message, details, Event type)
Record = Callable[[str, PodView, str, str, dict[str, Any], str], None]


def remove_boosts(
    w: WorkloadKey,
    pods: Sequence[PodView],
    policy: Policy,
    budget: DisruptionBudget,
    now: float,
    still_leader: Callable[[], bool],
    bucket: TokenBucket,
    actions: PodActions,
    record: Record,
) -> tuple[int, int, int]:
    """(boosts removed, pods held back by the budget or the rate, resizes whose answer was lost)
    for the pods of `w`."""
    removed = held = lost = 0
    for pod in pods:
        if not boosted(pod):
            continue
        names = expired(pod, policy, now)
        resizing = pod.condition("PodResizePending") or pod.condition("PodResizeInProgress")
        if not names or resizing:
            continue
        if not budget.can_disrupt(False, pod.is_ready) or not bucket.take():
            held += 1
            continue
        if not still_leader():
            break
        body, details = unboost_body(pod, names)
        outcome = actions.resize(pod.namespace, pod.name, body)
        details = {"workload": str(w), **details}
        if outcome == "unanswered":  # it may have been resized: counted, the rest next run
            budget.record(False, pod.is_ready)
            lost += 1
            message = f"{describe_change('startup boost removal', details)}; {MAY_BE_DONE}"
            record("resize-unanswered", pod, ANSWER_LOST, message, details, "Warning")
            continue
        if outcome != "done":
            log.info("startup boost of %s not removed (%s)", pod.ref, outcome)
            continue
        budget.record(False, pod.is_ready)
        left = remaining(pod, names)
        if actions.annotate(pod.namespace, pod.name, BOOST_ANNOTATION, left) != "done":
            log.warning("startup boost of %s removed, its annotation not (next run)", pod.ref)
        removed += 1
        message = describe_change("startup boost removed", details)
        record("resize", pod, "RightsizerStartupBoostRemoved", message, details, "Normal")
    return removed, held, lost
