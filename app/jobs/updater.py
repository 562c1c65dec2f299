"""The updater job: replace or resize running pods far from their recommendation (VPA updater).

This module gates each run, acts and records; what to do is decided by app.core.sizing.plan (pure,
unit-tested there). Per workload whose policy is Recreate, InPlaceOrRecreate or InPlace: pods
qualify by app.core.sizing.priority (and the policy's evictionRequirements), are taken scale-ups
first, and at most int(replicas x tolerance) per owner per run are disrupted; owners with fewer
live pods than minReplicas are left alone (unless in-place resizes skip the budget,
app.core.sizing.inplace). InPlace never evicts: what cannot be resized is reported and left.
Under any policy, a pod's CPU startup boost is removed in place once it is due
(app.jobs.boost_removal); evictions are sent a few at a time (app.jobs.evictions). New
values come from the same patch builder the webhook uses, so a resized pod gets exactly what a
recreated one would.

The pods of Jobs, CronJobs and Job families are never evicted or resized, whatever the policy
(app.core.job_families): the webhook sizes each new Job's pods.

Safety first: nothing happens while the webhook is not registered (an evicted pod would come
back unchanged), for recommendations with less than `min_history` of data (a policy's
observationWindow.minHistorySeconds instead, when set), when the new requests fit on no node, or
while the workload's observation window holds it back after the updater's own changes (too many
of them, or pods OOM-killed or not ready since: app.core.sizing.observation, its memory the audit
trail). New requests are capped by the namespace's LimitRanges exactly as the
webhook caps them: a pod that holds what the webhook would give it is never evicted to get more,
which would bring it back with the same values, run after run. Evictions go through the
Eviction API, so PodDisruptionBudgets apply; a refusal (429) is retried next run, never turned
into a delete.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from app.core.bodies import EvictionBody
from app.core.conditions import (
    HELD_BACK_BY_BUDGET,
    HELD_BACK_BY_OBSERVATION,
    RESIZE_INFEASIBLE,
    UPDATER_TYPES,
    Condition,
)
from app.core.job_families import never_updated
from app.core.node_groups import pods_by_group
from app.core.pods import PodView
from app.core.policy import Policy
from app.core.recommendation import Recommendation
from app.core.sizing.fit import NodeRoom
from app.core.sizing.inplace import InfeasibleAttempts, skips_budget
from app.core.sizing.limitrange import LimitRangeItem
from app.core.sizing.observation import DEFAULT as DEFAULT_WINDOW
from app.core.sizing.observation import ChangeLedger, Hold, hold, interval_hold, values_key
from app.core.sizing.plan import (
    POD_VIEW,
    Candidate,
    PodKeys,
    SizedMemo,
    change_details,
    configured_replicas,
    describe_change,
    node_rooms,
    not_resizable,
    placement_moves,
    pod_level_not_resizable,
    resize_body,
    stuck_resize,
    workload_candidates,
)
from app.core.sizing.priority import DisruptionBudget, ResizeWatch, TokenBucket
from app.core.update_policy import MAX_WINDOW_SECONDS, ObservationWindow
from app.core.workload_key import WorkloadKey
from app.jobs.boost_removal import remove_boosts
from app.jobs.evictions import EvictionSender
from app.jobs.workload_pods import live_pods_by_workload
from app.kube.actions import ANSWER_LOST, MAY_BE_DONE, PodActions
from app.kube.cluster import ClusterView
from app.kube.limitranges import LimitRangeCache
from app.settings import Settings
from app.store import audit
from app.store.conditions import save_conditions
from app.store.policies import InvalidPolicyLog
from app.store.session import SessionFactory
from app.store.snapshot import RowMemo, Snapshot, carry_forward, history_seconds, load_snapshot

log = logging.getLogger(__name__)
ACTOR = "rightsizer/updater"  # of its audit events


class UpdaterJob:
    name = "updater"

    def __init__(
        self,
        sessions: SessionFactory,
        cluster: ClusterView,
        actions: PodActions,
        settings: Settings,
        webhook_registered: Callable[[], bool],
        clock: Callable[[], float] = time.time,
        limit_ranges: LimitRangeCache | None = None,
    ) -> None:
        # Its part of the settings (app/settings.py UpdaterJobSettings), the namespaces never
        # sized, and how long a changed policy waits: every webhook process reloads policies on
        # this period, and until then a pod evicted under a new or changed policy would come
        # back without it and be disrupted twice (0: no wait).
        options = settings.updater
        self.sessions, self.cluster, self.actions, self.options = (
            sessions,
            cluster,
            actions,
            options,
        )
        self.never_sized = settings.cluster.never_sized
        self.policy_settle_seconds = 2 * settings.webhook.cache_refresh_seconds
        self.limit_ranges = limit_ranges  # None: size without LimitRanges (tests, no cluster)
        self.interval = options.interval
        self.webhook_registered, self.clock = webhook_registered, clock
        if options.dry_run:
            # Dry run is a promise: whatever actions were passed, nothing is changed in the cluster.
            actions.dry_run = True
        self.bucket = TokenBucket(options.evictions_per_second, options.eviction_burst, clock)
        self.sender = EvictionSender(actions.send_eviction, options.evictions_in_flight)
        self._boost_tools = (self.bucket, actions, self._record)  # app.jobs.boost_removal
        self.resizing = ResizeWatch()
        self.infeasible = InfeasibleAttempts()  # InPlace: resizes not to try again as they were
        # The previous run's snapshot and the patches ranked from it: a run reuses the objects
        # of what did not change, and the patch and priority of each pod shape ranked from them.
        self.snapshot: Snapshot | None = None
        self.row_memo = RowMemo()  # what the last load built from each recommendation row
        self.sized_memo = SizedMemo()
        self.tally = Tally()
        # this run's conditions per workload: type -> (reason, message)
        self.notes: dict[WorkloadKey, dict[str, tuple[str, str]]] = {}
        self.invalid_policies = InvalidPolicyLog("updater")  # each bad row logged once
        self.node_labels: dict[str, dict[str, str]] = {}  # this run's nodes' labels
        self.node_features: dict[str, tuple[str, ...]] = {}  # their status.declaredFeatures
        # The updater's own changes per workload, from the audit trail (observation windows),
        # and the holds already told in a Warning Event (one Event when a hold begins).
        self.ledger = ChangeLedger()
        self.holds_told: dict[WorkloadKey, str] = {}

    def run_once(self, still_leader: Callable[[], bool]) -> str:
        if not self.cluster.wait_synced(timeout=min(self.interval, 30.0)):
            return "caches not synced yet; nothing done"
        stale = self.cluster.wait_live(timeout=min(self.interval, 5.0))
        if stale:
            # Budgets are counted from the caches: with a watch down, pods that died unseen
            # would count as running, and evicting "the tolerance" could leave none.
            return f"caches not following the API server ({', '.join(stale)}): no pod touched"
        if self.limit_ranges is not None and (
            not self.limit_ranges.wait_synced(min(self.interval, 5.0)) or self.limit_ranges.failing
        ):
            # Sized without them, a pod capped by a LimitRange would be evicted to get more and
            # come back from the webhook with the same values.
            return "LimitRanges not known (cannot list them): no pod touched"
        if not self.webhook_registered():
            return (
                "webhook not registered or not serving: no pod touched "
                "(it would come back unchanged)"
            )
        with self.sessions() as session:
            snapshot = load_snapshot(session, invalid=self.invalid_policies, memo=self.row_memo)
            history = history_seconds(session)
        if self.snapshot is not None:
            snapshot = carry_forward(self.snapshot, snapshot)
        self.snapshot = snapshot
        pods = self.cluster.pods.items()
        by_workload = {
            w: wpods
            for w, wpods in live_pods_by_workload(
                pods, self.cluster.workload_of, self.never_sized
            ).items()
            if not never_updated(w.kind)  # Jobs, CronJobs, Job families (app.core.job_families)
        }
        nodes = self.cluster.node_views()
        keys: PodKeys = {}  # each pod's shared_key, computed once (issue 22)
        rooms = node_rooms(nodes, pods, keys)
        self.node_labels = {n.name: dict(n.labels) for n in nodes}  # DaemonSets per node group
        # what each node's kubelet declares (pod-level resize: app.core.sizing.podlevel_resize)
        self.node_features = {n.name: n.declared_features for n in nodes}
        s = self.options.sizing
        budgets = {
            w: DisruptionBudget(
                self._configured(w, wpods), sum(p.is_ready for p in wpods), s.eviction_tolerance
            )
            for w, wpods in by_workload.items()
        }
        self.tally = Tally()
        self.notes = {}
        governed = {
            w: p
            for w, wpods in by_workload.items()
            if (p := snapshot.policy_for(w, wpods[0].labels)) is not None  # selectors: its labels
        }
        self.infeasible.keep_only(p.uid or p.name for ps in by_workload.values() for p in ps)
        # pods are sized by the rules of the API server's release, as the webhook sizes them
        self.sized_memo.release = self.actions.server_minor()
        now = self.clock()
        self._load_changes(governed.values(), now)
        self._resize_fallbacks(by_workload, budgets, governed, still_leader)
        considered = settling = 0
        holds: dict[WorkloadKey, str] = {}
        with self.sender:  # every eviction sent is answered before the run is summed up
            for w, wpods in sorted(by_workload.items()):
                policy = governed.get(w)
                if policy is None:
                    continue
                removed, held, lost = remove_boosts(
                    w, wpods, policy, budgets[w], now, still_leader, *self._boost_tools
                )
                self.tally.unboosted += removed
                self.tally.held += held
                self.tally.unanswered += lost
                if not policy.update_mode.updates_running:
                    continue
                considered += 1
                age = now - policy.changed
                if self.policy_settle_seconds > 0 and age < self.policy_settle_seconds:
                    settling += 1
                    log.info(
                        "not updating %s yet: its policy %s/%s changed %.0fs ago, and the "
                        "webhook reloads policies every %.0fs (a pod evicted now could come back "
                        "without it)",
                        w,
                        policy.namespace,
                        policy.name,
                        max(age, 0.0),
                        self.policy_settle_seconds / 2,
                    )
                    continue
                window = policy.observation_window or DEFAULT_WINDOW
                holding = hold(
                    window,
                    self.ledger.of(str(w)),
                    wpods,
                    budgets[w].configured,
                    policy.changed,
                    now,
                )
                if holding is not None and now < holding.until:
                    holds[w] = holding.reason
                    self._hold(w, holding, wpods)
                    continue
                self._workload(
                    w,
                    wpods,
                    policy,
                    snapshot,
                    history,
                    rooms,
                    keys,
                    budgets[w],
                    still_leader,
                    window,
                )
        self.holds_told = holds
        self.sized_memo.end_run()
        self._save_conditions(now)
        t = self.tally
        waiting = f", {settling} waiting for the webhook to load their policy" if settling else ""
        if holds:
            waiting += f", {len(holds)} workloads held back by their observation window"
        unboosted = f", {t.unboosted} startup boosts removed" if t.unboosted else ""
        answers = f", {t.unanswered} answers lost (counted as disruptions)" if t.unanswered else ""
        return (
            f"{considered} workloads in an active mode: {t.updated} pods updated, "
            f"{t.fallbacks} resize fallbacks, {t.held} held back{unboosted}{answers}{waiting}"
        )

    def _ranges(self, namespace: str) -> Sequence[LimitRangeItem]:
        return self.limit_ranges(namespace) if self.limit_ranges is not None else ()

    def _workload(
        self,
        w: WorkloadKey,
        pods: list[PodView],
        policy: Policy,
        snapshot: Snapshot,
        history: dict[tuple[WorkloadKey, str], float],
        rooms: list[NodeRoom],
        keys: PodKeys,
        budget: DisruptionBudget,
        still_leader: Callable[[], bool],
        window: ObservationWindow = DEFAULT_WINDOW,
    ) -> None:
        s = self.options.sizing
        live = [p for p in pods if p.is_running]
        min_replicas = policy.min_replicas or s.default_min_replicas
        skip = skips_budget(policy, s)
        below_min = len(live) < min_replicas
        if below_min and not skip:
            self._note(
                w,
                HELD_BACK_BY_BUDGET,
                "MinReplicas",
                f"{len(live)} running pods, fewer than minReplicas {min_replicas}",
            )
            return
        containers = snapshot.recommendations.get(w, {})
        if not containers:
            return
        needed = self._min_history(window)
        shortest = min(history.get((w, c), 0.0) for c in containers)
        if shortest < needed:
            log.info(
                "not updating %s: its recommendation has %.0fs of history, %.0fs needed",
                w,
                shortest,
                needed,
            )
            return
        candidates = sorted(
            (
                c
                for recs, sized in self._sized_sets(w, pods, policy, snapshot, containers, needed)
                for c in workload_candidates(
                    w,
                    sized,
                    policy,
                    recs,
                    snapshot.excluded.get(w),
                    self._ranges(w.namespace),
                    self.clock(),
                    s,
                    keys,
                    self.sized_memo,
                )
            ),
            key=lambda c: c.priority.sort_key(),
        )
        t = self.tally
        for c in candidates:
            free = self._admitted(c, policy, budget, skip, below_min)
            if free is None:
                continue
            waits = interval_hold(
                window,
                self.ledger.of(str(w)),
                values_key(_wanted(c)),  # the pod-level requests too, as recorded
                policy.changed,
                self.clock(),
            )
            if waits is not None:
                t.held += 1
                self._note(w, HELD_BACK_BY_OBSERVATION, waits.reason, _until(waits))
                continue
            placed = placement_moves(c, rooms)
            if placed is None:
                t.held += 1
                log.info("not updating %s: its new requests fit on no node", c.pod.ref)
                continue
            if not self.bucket.take():
                t.held += 1
                log.info("not updating %s now: global eviction rate limit", c.pod.ref)
                continue
            if not still_leader() or self.cluster.stale():
                break
            if not policy.update_mode.resizes_in_place or c.pending:
                self._evict(c, budget)  # budget reserved, sent a few at a time
                _take(rooms, placed)  # a failed eviction keeps its room this run: fewer placed
                continue
            now_pod = c.pod
            may_evict = not below_min and budget.can_disrupt(c.pending, c.pod.is_ready)
            if free and now_pod.restarts_on_resize and not may_evict:
                t.held += 1  # a container restarts on resize: the budget applies after all
                self._note(w, HELD_BACK_BY_BUDGET, "DisruptionBudget", _held(budget))
                continue
            done = self._apply(c, policy, now_pod, may_evict)
            if done is None:
                t.held += 1
                continue
            budget.record(c.pending, c.pod.is_ready)  # an unanswered one too: it may be done
            _take(rooms, placed)  # later pods of this run see the room this one took
            if done == "unanswered":
                t.unanswered += 1
                continue
            t.updated += 1
            if done == "fallback":
                t.fallbacks += 1

    def _sized_sets(
        self,
        w: WorkloadKey,
        pods: list[PodView],
        policy: Policy,
        snapshot: Snapshot,
        whole: Mapping[str, Recommendation],
        needed: float,
    ) -> list[tuple[Mapping[str, Recommendation], list[PodView]]]:
        """The workload's pods by the recommendations the webhook would size each from: all of
        them from `whole`, but for a DaemonSet sized per node group, whose pods go by the group
        of their node (app.core.node_groups); a group's pods wait while its recommendation has
        less history than the updater needs."""
        groups = snapshot.node_groups_of(w, policy)
        if groups is None:
            return [(whole, pods)]
        out = []
        for sized in pods_by_group(groups, whole, pods, self.node_labels):
            if sized.history is not None and sized.history < needed:
                log.info(
                    "not updating the pods of %s in node group %s=%s: its recommendation has "
                    "%.0fs of history, %.0fs needed",
                    w,
                    groups.label,
                    sized.group,
                    sized.history,
                    needed,
                )
                continue
            out.append((sized.recommendations, list(sized.pods)))
        return out

    def _admitted(
        self,
        c: Candidate,
        policy: Policy,
        budget: DisruptionBudget,
        skip: bool,
        below_min: bool,
    ) -> bool | None:
        """None when the pod is left this run (counted as held back, but for a Pending pod in
        InPlace mode, which VPA defers); else whether its resize may skip the budget."""
        if policy.update_mode.only_in_place and c.pending:
            return None
        evicting = not policy.update_mode.resizes_in_place or c.pending
        free = skip and not evicting  # a resize that restarts nothing: no budget
        uid = c.pod.uid or c.pod.name
        if self.infeasible.blocks(uid, _wanted(c)):
            why = self.infeasible.reasons.get(uid, "")
            kind = self.infeasible.kinds.get(uid, "Infeasible")
            self._note(c.workload, RESIZE_INFEASIBLE, kind, f"{c.pod.name}: {why}")
            self.tally.held += 1
            return None
        if evicting and below_min:
            self.tally.held += 1
            return None
        if not free and not budget.can_disrupt(c.pending, c.pod.is_ready):
            self.tally.held += 1
            self._note(c.workload, HELD_BACK_BY_BUDGET, "DisruptionBudget", _held(budget))
            return None
        return free

    def _min_history(self, window: ObservationWindow) -> float:
        """The history a recommendation needs before the updater acts on it: the policy's
        observationWindow.minHistorySeconds, else the updater's setting."""
        own = window.min_history_seconds
        return self.options.min_history_seconds if own is None else float(own)

    def _load_changes(self, policies: Iterable[Policy], now: float) -> None:
        """The ledger holds the updater's changes as far back as the longest window of the
        policies of this run reaches (loaded from the audit trail when it does not yet)."""
        horizon = min(
            max(
                (
                    (p.observation_window or DEFAULT_WINDOW).horizon
                    for p in policies
                    if p.update_mode.updates_running
                ),
                default=DEFAULT_WINDOW.horizon,
            ),
            MAX_WINDOW_SECONDS,
        )
        since = now - horizon
        if not self.ledger.covers(since):
            with self.sessions() as session:
                rows = audit.pod_changes(session, ACTOR, datetime.fromtimestamp(since, UTC))
            self.ledger.load(since, rows)
        else:
            self.ledger.forget_before(since)

    def _hold(self, w: WorkloadKey, held: Hold, pods: Sequence[PodView]) -> None:
        """The workload is left alone this run: its condition says why and until when, and a
        Warning Event on it (once, when the hold begins) too."""
        message = _until(held)
        self._note(w, HELD_BACK_BY_OBSERVATION, held.reason, message)
        log.info("not updating %s: %s", w, message)
        if self.options.dry_run or self.holds_told.get(w) == held.reason:
            return
        meta = self._workload_meta(w)
        if meta is not None:
            version = "/".join(filter(None, (w.group, "v1")))
            self.actions.record_object_event(
                version, w.resource_kind, meta, "RightsizerHeldBack", message, "Warning"
            )
        elif pods:  # a kind whose version is unknown here: on its newest pod
            newest = max(pods, key=lambda p: p.start_time or 0.0)
            self.actions.record_event(newest, "RightsizerHeldBack", message, "Warning")

    def _workload_meta(self, w: WorkloadKey) -> dict[str, Any] | None:
        """The metadata of a workload of a well-known kind, from the caches."""
        if w.group not in ("apps", "batch", ""):
            return None
        obj = self.cluster.replicas_source(w)
        meta = obj.get("metadata") if isinstance(obj, Mapping) else None
        return dict(meta) if isinstance(meta, Mapping) else None

    def _save_conditions(self, now: float) -> None:
        """This run's HeldBackByBudget and ResizeInfeasible, in place of the previous run's."""
        if self.options.dry_run:
            return
        conditions = {
            w: [Condition(t, "True", reason, message) for t, (reason, message) in notes.items()]
            for w, notes in self.notes.items()
        }
        with self.sessions() as session:
            save_conditions(session, UPDATER_TYPES, conditions, datetime.fromtimestamp(now, UTC))

    def _note(self, w: WorkloadKey, type_: str, reason: str, message: str) -> None:
        """A condition of the workload this run found (app.core.conditions), its first reason."""
        self.notes.setdefault(w, {}).setdefault(type_, (reason, message))

    def _infeasible(
        self,
        w: WorkloadKey,
        pod: PodView,
        why: str,
        details: dict[str, Any],
        reason: str = "Infeasible",
    ) -> None:
        """InPlace: the resize cannot be done; reported, remembered, the pod left as it is. The
        condition's reason: `Infeasible`, or `PodLevelResizeUnsupported` when the cluster's
        release or the pod's node cannot resize pod-level resources in place."""
        after = details.get("after") or {}
        self.infeasible.record(
            pod.uid or pod.name, {n: v.get("requests") or {} for n, v in after.items()}, why, reason
        )
        self._note(w, RESIZE_INFEASIBLE, reason, f"{pod.name}: {why}")
        message = f"{why}: left as it is (updateMode InPlace never evicts)"
        log.info("not resizing %s: %s", pod.ref, message)
        if not self.options.dry_run:
            self.actions.record_event(pod, "RightsizerResizeInfeasible", message, "Warning")

    def _configured(self, w: WorkloadKey, pods: list[PodView]) -> int:
        return configured_replicas(self.cluster.replicas_source(w), pods)

    def _apply(
        self, c: Candidate, policy: Policy, live: PodView, may_evict: bool = True
    ) -> str | None:
        """Resize in place (evictions go through _evict); "resize" or "fallback" (evicted instead
        of resized) when done, "unanswered" when the resize or the eviction went out but its
        answer was lost, None when nothing happened (tried again next run). `live`: the pod
        as the cache holds it (its resizePolicy and pod-level resources too:
        app.kube.cluster.trim_pod). `may_evict`: the budget and minReplicas allow a fallback."""
        ns, name = c.pod.namespace, c.pod.name
        details = change_details(c)
        minor = self.actions.server_minor()
        features = self.node_features.get(live.node_name or "")
        # a release or node that cannot resize pod-level resources: its own reason (KEP-5419)
        why = pod_level_not_resizable(c, live, minor, features)
        reason = "PodLevelResizeUnsupported" if why is not None else "Infeasible"
        why = why or not_resizable(c, live, minor, features)
        if why is None:
            outcome = self.actions.resize(ns, name, resize_body(c))
            if outcome == "done":
                if not self.options.dry_run:
                    self.resizing.requested(c.pod.uid or name, self.clock(), details)
                return self._done("resize", "RightsizerResized", c, details)
            if outcome == "unanswered":
                self._lost(
                    "resize", c.pod, describe_change(f"resize ({c.reason})", details), details
                )
                return outcome
            if outcome not in ("refused", "unsupported"):
                log.info("resize %s/%s not done (%s)", ns, name, outcome)
                return None
            why = (
                f"resize refused by the API server ({self.actions.last_refusal})"
                if outcome == "refused"
                else "resize not supported by this cluster (< 1.33)"
            )
        if policy.update_mode.only_in_place:
            self._infeasible(c.workload, c.pod, why, details, reason)
            return None
        if not may_evict:
            log.info("not evicting %s (%s): disruption budget or minReplicas", c.pod.ref, why)
            return None
        return self._fallback(c.pod, why, details)

    def _evict(self, c: Candidate, budget: DisruptionBudget) -> None:
        """Sends the eviction with the budget reserved first, given back if it fails (tried
        again next run), kept if its answer was lost (it may have been done). No GET first: the
        eviction carries the pod's uid as a precondition (a pod that took its name since is left
        alone: 409, `gone`), as VPA's updater relies on."""
        pending, ready = c.pending, c.pod.is_ready
        budget.record(pending, ready)

        def answer(outcome: str) -> None:
            if outcome == "unanswered":  # it may have been evicted: the budget stays taken
                self.tally.unanswered += 1
                if not self._unheard():
                    details = change_details(c)
                    self._lost(
                        "evict", c.pod, describe_change(f"evict ({c.reason})", details), details
                    )
                return
            if outcome != "done":
                budget.release(pending, ready)
                self.tally.held += 1
                log.info("evict %s not done (%s)", c.pod.ref, outcome)
                return
            self.tally.updated += 1
            self._done("evict", "RightsizerEvicted", c)

        self.sender.submit(EvictionBody(c.pod.namespace, c.pod.name, c.pod.uid), answer)

    def _done(
        self, action: str, reason: str, c: Candidate, details: dict[str, Any] | None = None
    ) -> str:
        """Records the update: log line, audit row and Event, of `details` (change_details of
        `c` when not given). None of them is built when nothing would take it (_unheard)."""
        if self._unheard():
            return action
        if details is None:
            details = change_details(c)
        self._record(
            action, c.pod, reason, describe_change(f"{action} ({c.reason})", details), details
        )
        return action

    def _lost(self, action: str, pod: PodView, message: str, details: dict[str, Any]) -> None:
        """An eviction or resize whose answer was lost is on record as one that may have been
        done: an audit row (`evict-unanswered`, `resize-unanswered`) and a Warning Event, so a
        disruption the API server did is never missing from the record."""
        message += f"; {MAY_BE_DONE}"
        self._record(f"{action}-unanswered", pod, ANSWER_LOST, message, details, "Warning")

    def _fallback(self, pod: PodView, why: str, details: dict[str, Any]) -> str | None:
        """Evict instead of resizing; the event and the audit row say why, with the values.
        "fallback" when done, "unanswered" when its answer was lost, else None."""
        ns, name = pod.namespace, pod.name
        outcome = self.actions.evict(EvictionBody(ns, name, pod.uid))
        message = describe_change(f"{why}: evicting instead", details)
        if outcome == "unanswered":
            self._lost("evict", pod, message, {**details, "fallback": why})
            return outcome
        if outcome != "done":
            log.info("fallback eviction of %s/%s (%s) not done (%s)", ns, name, why, outcome)
            return None
        self._record(
            "evict",
            pod,
            "RightsizerResizeFallback",
            message,
            {**details, "fallback": why},
            "Warning",
        )
        return "fallback"

    def _unheard(self) -> bool:
        """Nothing takes what _record is given: a dry run (no audit row, and PodActions in a dry
        run sends no Event) with the INFO log line off. Building the message and the details of
        each of a 150,000-pod dry run's 15,750 updates was ~6% of its planning's profile (issue
        22). The audit rows and Events of a real run are built as before."""
        return self.options.dry_run and self.actions.dry_run and not log.isEnabledFor(logging.INFO)

    def _record(
        self,
        action: str,
        pod: PodView,
        reason: str,
        message: str,
        details: dict[str, Any],
        type_: str = "Normal",
    ) -> None:
        dry = "[dry run] " if self.options.dry_run else ""
        log.info("%s%s %s: %s", dry, action, pod.ref, message)
        # Audit first: it is the record that the pod was touched, an Event is only a courtesy.
        self._audit(action, pod.ref, message, details)
        self.actions.record_event(pod, reason, message, type_)

    def _resize_fallbacks(
        self,
        by_workload: dict[WorkloadKey, list[PodView]],
        budgets: dict[WorkloadKey, DisruptionBudget],
        governed: dict[WorkloadKey, Policy],
        still_leader: Callable[[], bool],
    ) -> None:
        """Evicts pods whose resize is Infeasible, Deferred too long or InProgress too long,
        within their workload's disruption budget and minReplicas (a pod held back is tried next
        run). Under an `InPlace` policy nothing is evicted: an Infeasible resize is reported and
        remembered, Deferred and InProgress are waited for."""
        now, t = self.clock(), self.tally
        live_uids = set()
        for w, pods in by_workload.items():
            for pod in pods:
                uid = pod.uid or pod.name
                live_uids.add(uid)
                if uid not in self.resizing:
                    continue
                details = self.resizing.details.get(uid, {})
                state, text = stuck_resize(pod, details.get("after") or {})
                why = self.resizing.observe(uid, state, now)
                policy = governed.get(w)
                if policy is not None and policy.update_mode.only_in_place:
                    if state == "Infeasible":
                        self._infeasible(w, pod, f"resize Infeasible ({text})", details)
                        self.resizing.forget(uid)
                    continue
                if why is None:
                    continue
                if not still_leader():
                    return
                ready = pod.is_ready
                live = sum(p.is_running for p in pods)
                needed = (policy.min_replicas if policy else None) or (
                    self.options.sizing.default_min_replicas
                )
                if live < needed or not budgets[w].can_disrupt(False, ready):
                    t.held += 1
                    log.info("fallback for %s waits: disruption budget of %s", pod.ref, w)
                    continue
                if not self.bucket.take():
                    t.held += 1
                    log.info("fallback for %s waits: global eviction rate limit", pod.ref)
                    continue
                reason = f"resize {why}" + (f" ({text})" if text else "")
                done = self._fallback(pod, reason, details)
                if done is None:
                    t.held += 1
                    continue
                budgets[w].record(False, ready)  # an unanswered one too: it may be done
                if done == "unanswered":
                    t.unanswered += 1  # still watched: the next run sees whether it went
                    continue
                self.resizing.forget(uid)
                t.fallbacks += 1
        self.resizing.keep_only(live_uids)

    def _audit(self, action: str, ref: str, message: str, details: dict[str, Any]) -> None:
        if self.options.dry_run:
            return
        now = self.clock()
        event = audit.Event(action, "Pod", ref, message, details, datetime.fromtimestamp(now, UTC))
        with self.sessions() as session:
            audit.save_events(session, ACTOR, [event])
        if action in audit.POD_CHANGES:
            self.ledger.add(details, now)


@dataclass
class Tally:
    """What one run did, for its summary line."""

    updated: int = 0  # pods resized or evicted (fallback evictions included)
    fallbacks: int = 0  # evicted instead of resized: refused, not resizable, or stuck
    held: int = 0  # qualified but left for a later run (budget, room, rate, refusals)
    unanswered: int = 0  # sent but answer lost: counted against the budget, not as updated
    unboosted: int = 0  # pods whose CPU startup boost was removed


def _take(rooms: list[NodeRoom], placed: dict[int, NodeRoom]) -> None:
    """The rooms once a pod is placed (plan.placement_moves: one or two of them change), in
    place: two copies of 5,000 rooms (~22 us) for each of 15,750 pods were ~0.35 s of a run."""
    for i, room in placed.items():
        rooms[i] = room


def _requests(c: Candidate) -> dict[str, dict[str, int]]:
    return {u.name: dict(u.requests) for u in c.patch.updates}


def _wanted(c: Candidate) -> dict[str, dict[str, int]]:
    """`_requests` and the pod-level requests the patch changes (POD_VIEW)."""
    out = _requests(c)
    if c.patch.pod_level is not None:
        out[POD_VIEW] = dict(c.patch.pod_level.requests)
    return out


def _until(held: Hold) -> str:
    when = datetime.fromtimestamp(held.until, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{held.message}; resumes at {when} or when its policy changes"


def _held(budget: DisruptionBudget) -> str:
    return (
        f"at most {max(budget.allowed, 1)} of {budget.configured} replicas disrupted at a time; "
        f"{budget.running} ready"
    )
