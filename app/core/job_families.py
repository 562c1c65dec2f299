"""Job families: short-lived Jobs learned as one workload, so each new Job's pods start sized
(kubernetes/autoscaler#3975, #6745; KRR's GroupedJob).

A Job lives minutes and the next one has another name, so learning per Job learns nothing the
next one can use. rightsizer learns per family instead:

- the Jobs of a CronJob are the CronJob's (already so by the owner walk, app.core.owners: the
  CronJob is the topmost well-known controller, as in VPA's controller fetcher);
- a bare Job (no controller above it) whose pods carry the label `rightsizer.io/job-family`
  belongs to the family of that label's value, the workload `<namespace>/JobFamily/<value>`,
  whatever the Job's name. Without the label a bare Job is its own workload, as before.

The updater never evicts or resizes the pods of a Job, a CronJob or a family (`never_updated`):
an evicted Job pod restarts the Job's work (or fails it, counting against its backoffLimit), and
the family's next Job gets the recommendation at admission anyway. A policy whose updateMode
asks for more than Initial for them gets a warning saying so (app.core.policy_warnings).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from app.core.update_mode import UpdateMode

FAMILY_LABEL = "rightsizer.io/job-family"
FAMILY_KIND = "JobFamily"
JOB_KINDS = frozenset({"Job", "CronJob", FAMILY_KIND})
# A label value (k8s.io/apimachinery validation IsValidLabelValue), non-empty: a family's name.
_VALUE = re.compile(r"(?=.{1,63}\Z)[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")


def family_name(labels: Any) -> str | None:
    """The family a bare Job's pod belongs to, from its labels; None without a valid one."""
    if not isinstance(labels, Mapping):
        return None
    value = labels.get(FAMILY_LABEL)
    return value if isinstance(value, str) and _VALUE.fullmatch(value) else None


def never_updated(kind: str) -> bool:
    """Whether the updater leaves the pods of a workload of `kind` alone (Jobs and families)."""
    return kind in JOB_KINDS


def _names_family(selector: Any) -> bool:
    """Whether a selector as written (`matchLabels`, `matchExpressions`) reads the family label."""
    if not isinstance(selector, Mapping):
        return False
    labels = selector.get("matchLabels")
    if isinstance(labels, Mapping) and FAMILY_LABEL in labels:
        return True
    exprs = selector.get("matchExpressions")
    return isinstance(exprs, list) and any(
        isinstance(e, Mapping) and e.get("key") == FAMILY_LABEL for e in exprs
    )


def mode_warning(kind: str | None, selector: Any, update_mode: str) -> str | None:
    """The warning of a policy whose updateMode asks the updater to act on Jobs' pods, which it
    never does: one naming a Job or CronJob, or selecting a family by its label."""
    if not UpdateMode.of(update_mode).updates_running:
        return None
    if kind in ("Job", "CronJob"):
        what = f"a {kind}'s pods"
    elif _names_family(selector):
        what = f"the pods of a Job family ({FAMILY_LABEL})"
    else:
        return None
    return (
        f"updateMode {update_mode}: rightsizer never evicts or resizes {what}; each new Job's "
        "pods are sized at admission, as with Initial"
    )
