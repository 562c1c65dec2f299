"""Mutations counted per workload, written to the audit trail in batches.

The webhook answers without touching the database, so it cannot write an audit event per pod (at
1000 pods a second that would also bury the trail). Each review that patches a pod adds one to its
workload's counter in memory (a lock and a dict update); the cache's refresh thread flushes the
counters every `interval` seconds as one `mutate` event per workload ("set requests on 12 new
pods"). When the database is down the counts are kept and merged into the next flush, so nothing is
lost and nothing waits; past `max_workloads` distinct workloads, further ones are dropped and
counted in `rightsizer_webhook_audit_dropped_total` rather than growing memory without end.
An event's time is the admission of the first pod it counts (`from` and `to` in its details
span them all), not the time of the flush that wrote it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from app.core.workload_key import WorkloadKey
from app.webhook.metrics import AUDIT_DROPPED, AUDIT_FLUSHES

log = logging.getLogger(__name__)

ACTOR = "rightsizer/webhook"


@dataclass(frozen=True)
class MutationCount:
    workload: WorkloadKey
    policy: str
    pods: int
    first: float  # Unix time of the first and last counted mutation
    last: float
    boosted: int = 0  # of which were given a CPU startup boost (app.core.sizing.boost)
    placed: int = 0  # pods given the water-level scheduler (app.webhook.placement), sized or not

    def merged(self, other: MutationCount) -> MutationCount:
        return replace(
            self,
            policy=other.policy or self.policy,
            pods=self.pods + other.pods,
            boosted=self.boosted + other.boosted,
            placed=self.placed + other.placed,
            first=min(self.first, other.first),
            last=max(self.last, other.last),
        )

    @property
    def admitted(self) -> datetime:
        """When the first counted pod was admitted: the event's time (not the flush's, which may
        come a minute later, after the updater's next eviction)."""
        return datetime.fromtimestamp(self.first, UTC)

    def message(self) -> str:
        parts = []
        if self.pods or not self.placed:
            text = f"set requests on {self.pods} new pod{'s' if self.pods != 1 else ''}"
            if self.boosted:
                text += f", {self.boosted} with a CPU startup boost"
            parts.append(text)
        if self.placed:
            s = "s" if self.placed != 1 else ""
            parts.append(f"gave {self.placed} new pod{s} the water-level scheduler")
        return "; ".join(parts)

    def details(self) -> dict[str, object]:
        return {
            "pods": self.pods,
            "boosted": self.boosted,
            "placed": self.placed,
            "policy": self.policy,
            "from": _iso(self.first),
            "to": _iso(self.last),
        }


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")


Store = Callable[[Sequence[MutationCount]], None]  # writes them all in one transaction, or raises


class MutationCounter:
    def __init__(
        self,
        store: Store,
        interval: float = 60.0,
        max_workloads: int = 10000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store, self.interval, self.max_workloads, self.clock = (
            store,
            interval,
            max_workloads,
            clock,
        )
        self._counts: dict[WorkloadKey, MutationCount] = {}
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._last_flush = clock()
        self._failing = False

    def count(
        self,
        workload: WorkloadKey,
        policy: str,
        boosted: bool = False,
        *,
        sized: bool = True,
        placed: bool = False,
    ) -> None:
        """One patched pod of `workload`: its requests set (`sized`), `boosted` at start or not,
        given the water-level scheduler (`placed`) or not (the hot path: no I/O)."""
        now = self.clock()
        with self._lock:
            current = self._counts.get(workload)
            if current is not None:
                self._counts[workload] = MutationCount(
                    workload,
                    policy,
                    current.pods + sized,
                    current.first,
                    now,
                    current.boosted + boosted,
                    current.placed + placed,
                )
            elif len(self._counts) < self.max_workloads:
                self._counts[workload] = MutationCount(
                    workload, policy, int(sized), now, now, int(boosted), int(placed)
                )
            else:
                AUDIT_DROPPED.inc()

    def pending(self) -> dict[WorkloadKey, MutationCount]:
        with self._lock:
            return dict(self._counts)

    def maybe_flush(self) -> bool | None:
        """Flushes when `interval` has passed since the last flush; None when it was not due."""
        if self.clock() - self._last_flush < self.interval:
            return None
        return self.flush()

    def flush(self) -> bool:
        """Writes the counts so far; on failure keeps them for the next flush. True when written
        (or nothing to write)."""
        with self._flush_lock:
            self._last_flush = self.clock()
            with self._lock:
                batch, self._counts = self._counts, {}
            if not batch:
                return True
            try:
                self.store(sorted(batch.values(), key=lambda c: c.workload))
            except Exception as e:
                AUDIT_FLUSHES.labels("failed").inc()
                self._put_back(batch)
                if not self._failing:
                    self._failing = True
                    log.warning(
                        "cannot write webhook audit events (%s: %s); keeping the counts of %d "
                        "workloads for the next try",
                        type(e).__name__,
                        e,
                        len(batch),
                    )
                return False
            AUDIT_FLUSHES.labels("ok").inc()
            if self._failing:
                self._failing = False
                log.info("webhook audit events written again")
            return True

    def _put_back(self, batch: dict[WorkloadKey, MutationCount]) -> None:
        """Merges unwritten counts with those counted meanwhile (newer policy names win)."""
        with self._lock:
            newer = self._counts
            merged = dict(batch)
            for w, c in newer.items():
                merged[w] = merged[w].merged(c) if w in merged else c
            if len(merged) > self.max_workloads:
                keep = sorted(merged, key=lambda w: merged[w].last, reverse=True)
                dropped = keep[self.max_workloads :]
                AUDIT_DROPPED.inc(sum(max(merged[w].pods, merged[w].placed) for w in dropped))
                merged = {w: merged[w] for w in keep[: self.max_workloads]}
            self._counts = merged
