"""No eviction loops: when the updater holds a workload back after its own changes, no I/O.

A workload's pods can be replaced again and again: a recommendation the new pods never get, or
new pods that are OOM-killed or crash after each change, bring the same eviction back run after
run (kubernetes/autoscaler #9362; AEP-9936 proposes an observation window). The policy's
`observationWindow` (docs/policies.md, "Observation window") says how long the updater watches
before it acts and after it acted:

- `minHistorySeconds`: the recommendation's history needed before the first change (the
  updater's RIGHTSIZER_UPDATER_MIN_HISTORY_SECONDS when unset);
- `minIntervalSeconds`: the time from the start of one change (pods updated to new values) to
  the next; pods still being updated to the values of the current change go on;
- `windowSeconds` and `maxReplacementsPerReplica`: the workload is held back while rightsizer
  replaced (evicted or resized) its pods more than `maxReplacementsPerReplica` x replicas times
  in the last `windowSeconds`, and for `windowSeconds` after a change when a container of its
  pods was OOM-killed since, or restarted since and the pod is not ready.

Only the changes made since the policy itself last changed count: a policy change resumes the
workload at once. The changes come from the audit trail (app.store.audit), so a restart
forgets none of them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.pods import PodView
from app.core.update_policy import ObservationWindow

# The condition's reasons (type HeldBackByObservationWindow, app.core.conditions)
TOO_MANY = "TooManyReplacements"
OOM_AFTER_CHANGE = "OOMKilledAfterChange"
UNREADY_AFTER_CHANGE = "UnreadyAfterChange"
MIN_INTERVAL = "MinInterval"

DEFAULT = ObservationWindow()


@dataclass(frozen=True)
class Change:
    """One pod of a workload evicted or resized by the updater: when, and to what requests
    (`values_key` of them)."""

    time: float
    values: str


@dataclass(frozen=True)
class Hold:
    """Why the workload is held back, until when (unix seconds)."""

    reason: str
    message: str
    until: float


def values_key(requests: Mapping[str, Mapping[str, int]]) -> str:
    """The requests a change gives each container, as one comparable string."""
    return json.dumps(
        {name: dict(sorted(r.items())) for name, r in sorted(requests.items())},
        separators=(",", ":"),
    )


def hold(
    window: ObservationWindow,
    changes: Sequence[Change],
    pods: Iterable[PodView],
    replicas: int,
    since: float,
    now: float,
) -> Hold | None:
    """Whether the workload is held back now, whatever it would change to: `changes` in time
    order, `replicas` its configured replicas, `since` when its policy last changed (earlier
    changes do not count)."""
    counted = [c.time for c in changes if c.time >= since and c.time > now - window.window_seconds]
    if not counted:
        return None
    limit = window.max_replacements_per_replica * max(replicas, 1)
    if len(counted) > limit:
        # held until no more than `limit` are left in the window
        until = counted[len(counted) - limit - 1] + window.window_seconds
        return Hold(
            TOO_MANY,
            f"pods replaced {len(counted)} times in the last {window.window_seconds}s, more than "
            f"{window.max_replacements_per_replica} per replica ({max(replicas, 1)} replicas)",
            until,
        )
    last = counted[-1]
    until = last + window.window_seconds
    for pod in pods:
        for s in pod.statuses:
            t = s.last_termination
            # a termination's time has whole seconds: one in the change's second counts
            if t is None or t.finished is None or t.finished < last - 1:
                continue
            if t.reason == "OOMKilled":
                return Hold(
                    OOM_AFTER_CHANGE,
                    f"{pod.name}: container {s.name} OOM-killed after rightsizer's last change",
                    until,
                )
            if pod.is_running and not pod.is_ready:
                return Hold(
                    UNREADY_AFTER_CHANGE,
                    f"{pod.name}: container {s.name} restarted ({t.reason or 'terminated'}) "
                    "after rightsizer's last change and the pod is not ready",
                    until,
                )
    return None


def change_started(changes: Sequence[Change], since: float) -> dict[str, float]:
    """When pods were first updated to each of the values, among the changes after `since`."""
    out: dict[str, float] = {}
    for c in changes:
        if c.time >= since:
            out.setdefault(c.values, c.time)
    return out


def interval_hold(
    window: ObservationWindow, changes: Sequence[Change], values: str, since: float, now: float
) -> Hold | None:
    """A pod to be updated to `values`: held while these are new values (no pod was updated to
    them since `since`) and the last change began less than `minIntervalSeconds` ago."""
    if window.min_interval_seconds <= 0:
        return None
    started = change_started(changes, since)
    if not started or values in started:
        return None
    last = max(started.values())
    until = last + window.min_interval_seconds
    if now >= until:
        return None
    return Hold(
        MIN_INTERVAL,
        f"the last change began {max(now - last, 0):.0f}s ago; the policy's "
        f"minIntervalSeconds is {window.min_interval_seconds}",
        until,
    )


def recorded_change(details: Mapping[str, Any], time: float) -> tuple[str, Change] | None:
    """The workload (its WorkloadKey as text) and the change of an updater audit row's details
    (app.core.sizing.plan.change_details); None for what is no change of its values (a startup
    boost removed: app.core.sizing.boost) or a row without them."""
    workload, after = details.get("workload"), details.get("after")
    if not isinstance(workload, str) or not isinstance(after, Mapping) or details.get("boost"):
        return None
    # the pod-level requests (POD_VIEW) too: a change of those alone is a change of values
    requests = {
        name: v.get("requests") or {} for name, v in after.items() if isinstance(v, Mapping)
    }
    return workload, Change(time, values_key(requests))


class ChangeLedger:
    """The updater's changes of the last `horizon` seconds, per workload, in time order: loaded
    from the audit trail at the first run (and again when a policy's window reaches further back
    than what was loaded), then added to as the updater acts."""

    def __init__(self) -> None:
        self.changes: dict[str, list[Change]] = {}
        self.since: float | None = None  # loaded from this time on; None: not loaded yet

    def covers(self, since: float) -> bool:
        return self.since is not None and self.since <= since

    def load(self, since: float, rows: Iterable[tuple[float, Mapping[str, Any]]]) -> None:
        """Replaces what it holds by the audit rows (time, details) from `since` on."""
        self.changes, self.since = {}, since
        for time, details in sorted(rows, key=lambda r: r[0]):
            self.add(details, time)

    def add(self, details: Mapping[str, Any], time: float) -> None:
        found = recorded_change(details, time)
        if found is not None:
            w, change = found
            self.changes.setdefault(w, []).append(change)

    def of(self, workload: str) -> list[Change]:
        return self.changes.get(workload, [])

    def forget_before(self, since: float) -> None:
        """Drops the changes older than `since` (what no window reaches any more)."""
        for w in list(self.changes):
            kept = [c for c in self.changes[w] if c.time >= since]
            if kept:
                self.changes[w] = kept
            else:
                del self.changes[w]
        if self.since is not None:
            self.since = max(self.since, since)
