"""The recommender job: metrics.k8s.io + OOM kills -> histograms -> recommendations in the DB.

Each run reads PodMetrics once (in a thread of its own, app.jobs.background, while it finds the
workload of each live pod), feeds every container's usage into the model (CPU weighted by its
current request), records OOM kills seen in pod statuses, forgets aggregates idle for the
memory window (8 days) and the rows of workloads gone for longer than the grace period (a Job
family, no object, is gone once its history is: app.core.job_families), then
writes recommendations and checkpoints in batches, each batch one transaction. A container's
first checkpoint is written in the run that first sees it; after that, checkpoints are rewritten
the oldest first, enough each run for every one to be rewritten once per
RIGHTSIZER_CHECKPOINT_INTERVAL_SECONDS (app.core.recommend.checkpoint: VPA rewrites them oldest
first too, as many as its time budget and client rate allow).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Container, Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from app.core.gcpause import without_cyclic_gc
from app.core.job_families import FAMILY_KIND
from app.core.owner_memo import WorkloadMemo
from app.core.placement.profile import Profiles
from app.core.pods import PodView
from app.core.policy import PolicyIndex
from app.core.recommend.array_model import ArrayModel
from app.core.recommend.checkpoint import checkpoint_budget, checkpoints_due
from app.core.recommend.podmetrics import PodMetrics
from app.core.recommend.samples import (
    RawUsage,
    new_oom_kills,
    parsed_columns,
    raw_usages,
    usage_from_metrics,
    watched_pods,
)
from app.core.recommend.strategies import VPA, Strategy, chosen
from app.core.recommend.timeline import Sample, UsageWindows
from app.core.recommendation import ContainerPolicy, Recommendation
from app.core.savings import PodsSeen
from app.core.workload_key import WorkloadKey
from app.jobs.background import in_background
from app.jobs.cluster_totals import TotalsWriter
from app.jobs.conditions import RecommenderConditions
from app.jobs.history import HistorySource
from app.jobs.list_layout import Columns, Layout, Match, match, recorded, reused_columns
from app.jobs.node_fit import NodeFit
from app.jobs.node_groups import NodeGroupRecorder
from app.jobs.tracking import Tracker
from app.kube.cluster import ClusterView
from app.kube.limitranges import LimitRangeCache
from app.settings import Settings
from app.store.checkpoints import load_checkpoints
from app.store.history import add_replayed_points
from app.store.keys import Key
from app.store.node_groups import load_node_groups, save_node_groups
from app.store.policies import InvalidPolicyLog, valid_policies
from app.store.profiles import EVERY as PROFILES_EVERY
from app.store.profiles import load_profiles, save_profiles
from app.store.recommendations import (
    count_recommendations,
    delete_workload,
    save_all,
    stored_workloads,
)
from app.store.results import ContainerResult, CurrentRequests, SampleSpan
from app.store.session import DbSession, SessionFactory

log = logging.getLogger(__name__)


@dataclass
class WorkloadInfo:
    """What the API shows next to a recommendation: current requests, HPA conflicts."""

    # the live pods reporting metrics (the replicas), with their requests
    seen: PodsSeen = field(default_factory=PodsSeen)
    conflicts: dict[str, str] = field(default_factory=dict)


class RecommenderJob:
    name = "recommender"

    def __init__(
        self,
        sessions: SessionFactory,
        cluster: ClusterView,
        settings: Settings,
        history: HistorySource | None = None,
        clock: Callable[[], float] = time.time,
        limit_ranges: LimitRangeCache | None = None,
        profiles: Profiles | None = None,
    ) -> None:
        """The job of `settings.recommender` (RIGHTSIZER_RECOMMENDER_INTERVAL, ...); it leaves
        alone the namespaces `settings.cluster.left_alone` names, and says LowConfidence of less
        history than the updater needs (`settings.updater.min_history_seconds`)."""
        self.sessions, self.cluster = sessions, cluster
        self.settings = settings.recommender
        self.excluded_namespaces = settings.cluster.left_alone
        self.interval = self.settings.interval
        self.history, self.clock = history, clock
        # the workloads' daily profiles, for the node-levels job's levels ahead (None: not kept)
        self.profiles = profiles
        self.profiles_saved = 0.0  # when they were last stored (or loaded), by the job's clock
        self.conditions = RecommenderConditions(  # app.core.conditions, saved each run
            cluster, limit_ranges, settings.updater.min_history_seconds, self.excluded_namespaces
        )
        self.recommended: dict[WorkloadKey, dict[str, Recommendation]] = {}
        self.invalid_policies = InvalidPolicyLog("recommender")  # each bad row logged once
        self.tracker = Tracker(
            self.settings.track, self.settings.track_label, getattr(cluster, "api", None)
        )
        self.workload_of: Callable[[PodView], WorkloadKey | None] = cluster.workload_of
        self.totals = TotalsWriter(settings)  # the fleet view's, at most every 5 minutes
        self.forget()

    def forget(self) -> None:
        """Starts over from the checkpoints at the next run. Called at the start of every
        leadership term: while another process led, it wrote newer checkpoints than the model
        this process kept in memory, and saving that stale model would overwrite them."""
        self.model = ArrayModel(self.settings.model, self.settings.idle_after_seconds)
        self.layout: Layout | None = None  # the last LIST as fed (app.jobs.list_layout)
        self.reused_items = 0  # of the last LIST, the items taken from the layout before it
        self.conditions.known.forget()  # the condition rows: read again at the first save
        self.totals.written_at = None  # a new term stores its totals at its first run
        self.windows = UsageWindows(self.settings.model)  # usage since each history point
        self.restored = False
        self.restarts_seen: dict[tuple[str, str, str], int] = {}
        self.missing_since: dict[WorkloadKey, float] = {}
        # DaemonSets sized per node group: their groups' models (app.jobs.node_groups)
        self.node_groups = NodeGroupRecorder(self.settings.model, self.settings.idle_after_seconds)
        # a pod's labels per workload, as the last run read them: what selector policies match
        self.labels: dict[WorkloadKey, Mapping[str, str]] = {}
        # when each aggregate's checkpoint was last written (or restored) by this process
        self.checkpointed: dict[tuple[WorkloadKey, str], float] = {}
        # each container's newest history point, as this term's saves read or wrote it: only the
        # leader writes points, so one less than an hour old needs no lookup (append_history)
        self.history_points: dict[Key, float] = {}
        # each recommendation row as this term's saves read or wrote it: only the leader writes
        # them, so a row known here is not read again (save_batch's `written`)
        self.rows_written: dict[Key, tuple[Any, ...]] = {}
        # the workloads with rows: read at the term's first collection, then kept by the saves
        # and the collections (only the leader writes rows), not read again at every run
        self.stored: set[WorkloadKey] | None = None

    # One run -----------------------------------------------------------------------------------
    def run_once(self, still_leader: Callable[[], bool]) -> str:
        with without_cyclic_gc():
            return self._run(still_leader)

    def _run(self, still_leader: Callable[[], bool]) -> str:
        if not self.cluster.wait_synced(timeout=min(self.interval, 30.0)):
            return "caches not synced yet; nothing done"
        now = self.clock()
        with self.sessions() as session:
            # indexed: each workload's policy found among its candidates alone (PolicyIndex)
            policies = PolicyIndex(valid_policies(session, self.invalid_policies))
            self.tracker.refresh(policies)  # what is learned this run (RIGHTSIZER_TRACK)
            self._tune(policies)
            self.node_groups.begin(  # DaemonSets sized per node group: this run's groups
                list(policies),
                lambda: self.cluster.node_views(),  # read only when a policy groups
                lambda w: policies.governing(w, self.labels.get(w)),
            )
            if not self.restored:
                self._restore(session, now)
            # each pod template's workload found once this run (the caches may move between
            # runs), answered with the model's own key objects (WorkloadMemo: found by identity)
            # (and its answers carried from the previous run while no owner moved: read first)
            version = self.cluster.owners_version()
            keys = {w: w for w in self.model.rows}
            earlier = self.workload_of if isinstance(self.workload_of, WorkloadMemo) else None
            memo = WorkloadMemo(self.cluster.workload_of, keys, earlier, version)
            self.workload_of = self.conditions.workload_of = memo
            fetching = in_background(self.cluster.pod_metrics, "recommender-pod-metrics")
            pods = self.cluster.pods.snapshot()  # by (namespace, name), fixed for the run
            # While the LIST is read (mostly a wait on the socket): what needs the pods alone,
            # and nothing that a failed fetch would leave half done. Finding each workload's
            # live pod for the conditions finds every live pod's workload for the feed too.
            live = self.conditions.live_pods(pods.values())
            # the pods watched for OOM kills; the restart counts of the others forgotten
            restarted = watched_pods(pods.values(), self.restarts_seen)
            metrics = self._await_metrics(fetching)
            info: dict[WorkloadKey, WorkloadInfo] = {}
            named_since = self.model.tables + 1  # the LIST's batch (add_usage_table)
            samples = self._feed_metrics(metrics, pods, info, version)
            ooms = self._feed_ooms(restarted)
            # Idleness is judged on the metrics' own clock, not ours: a skewed node clock (or
            # a metrics source running behind) must not make fresh data look 8 days old. The
            # model expires idle aggregates itself (as `recommend --from-csv` does too).
            newest = self.model.newest_sample()
            dropped = self.model.expire_idle(newest) if newest is not None else 0
            dropped += self.tracker.forget_untracked(self.model, self.labels)
            if self.profiles is not None:
                self.profiles.forget(self.model.rows)
            if newest is not None:
                self.node_groups.groups.expire_idle(newest)
            self._forget_deleted_pods(pods, named_since)  # keyed by (namespace, name)
            conflicts = self.cluster.hpa_conflicts()
            for w, c in conflicts.items():
                info.setdefault(w, WorkloadInfo()).conflicts = c
            if not still_leader():
                return "lost leadership before writing; nothing saved"
            self.recommended = {}
            # recommendations capped to fit a node their pods may run on (CappedToNode)
            fit = NodeFit(self.cluster.node_views(), self.cluster.daemon_templates())
            report = save_all(
                session,
                self._results(policies, info, still_leader, self._checkpoints_due(), fit, live),
                datetime.fromtimestamp(now, UTC),  # the job's clock, as the samples' times
                self.settings.checkpoint_batch_size,
                recent=self.history_points,
                written=self.rows_written,
            )
            saved, failed = report.saved, report.failed
            self.checkpointed.update(dict.fromkeys(report.checkpointed, now))
            self.windows.reset(report.points)
            stamp = datetime.fromtimestamp(now, UTC)
            self.conditions.publish(
                session, policies, self.model, self.recommended, stamp, live, fit.capped
            )
            memo.release()  # the last pod asked about: the previous run's views may go
            self._save_node_groups(session, stamp)
            self._save_profiles(session, now, still_leader)
            deleted = self._collect_garbage(session, now, still_leader, report.workloads)
            self.totals.write(session, policies, stamp, still_leader)  # logs a failure
            count_recommendations(session)  # the gauges, after this run's writes
        return (
            f"{len(metrics)} pod metrics, {samples} samples, {ooms} OOM kills, "
            f"{len(self.model.rows)} workloads; saved {saved}, failed {failed}, "
            f"dropped {dropped} idle, deleted {deleted} gone"
        )

    @staticmethod
    def _await_metrics(fetching: Future[list[PodMetrics]]) -> list[PodMetrics]:
        """The PodMetrics LIST read in the background; its error, when it failed, raised here."""
        return fetching.result()

    def _tune(self, policies: PolicyIndex) -> None:
        """Each workload's history is taken as its policy's strategy says (ArrayModel.tune: a
        policy's `vpa` parameters replace settings): the workloads the model has now, and those
        it first sees in this run's checkpoints, history and samples."""

        def strategy_of(w: WorkloadKey) -> Strategy:
            p = policies.governing(w, self.labels.get(w))
            return chosen(p.recommender) if p else VPA

        self.model.strategy_of = strategy_of
        for w in list(self.model.rows):
            self.model.tune(w, strategy_of(w))

    def _restore(self, session: DbSession, now: float) -> None:
        loaded, skipped = load_checkpoints(session, self.model)
        # as stored: rewritten in turn from now on (checkpoints_due)
        self.checkpointed = {(w, c): now for w, cs in self.model.rows.items() for c in cs}
        log.info("restored %d checkpoints (%d unreadable, skipped)", loaded, skipped)
        self._kills_in_checkpoints()
        loaded, skipped = load_node_groups(session, self.node_groups.groups)
        if loaded or skipped:
            log.info("restored %d node groups (%d unreadable, skipped)", loaded, skipped)
        if self.profiles is not None:  # the daily profiles the last leader stored
            loaded, skipped = load_profiles(session, self.profiles)
            self.profiles_saved = now
            log.info("restored %d daily profiles (%d unreadable, skipped)", loaded, skipped)
        if self.history is not None:
            have = set(self.model.rows)
            policies = PolicyIndex(valid_policies(session, self.invalid_policies))

            for pod in self.cluster.pods.items():  # the labels selector policies match
                if (owner := self.cluster.workload_of(pod)) is not None:
                    self.labels[owner] = pod.labels

            def policies_for(w: WorkloadKey) -> list[ContainerPolicy]:
                p = policies.governing(w, self.labels.get(w))
                return list(p.container_policies) if p else []

            # FetchingHistory on what is loaded, until this run's conditions replace it
            loading = self.conditions.live_workloads() - have
            self.conditions.fetching(session, loading, datetime.fromtimestamp(self.clock(), UTC))
            # only what is tracked (RIGHTSIZER_TRACK), when not everything is; and, when a
            # policy groups DaemonSets per node group, each such pod's samples to its group too
            options: dict[str, Any] = {}
            if not self.tracker.everything:
                options["tracked"] = self.tracker.tracks
            if self.node_groups.active:
                options["on_sample"] = self._grouped_history()
            load = self.history(self.model, self.cluster, have, policies_for, **options)
            added = add_replayed_points(session, load.points, load.requests)
            log.info(
                "loaded %d history samples from Prometheus; %d recommendation history points",
                load.fed,
                added,
            )
        self.restored = True

    def _kills_in_checkpoints(self) -> None:
        """The OOM kills pod statuses show as this process restores, of the containers restored
        from a checkpoint, are taken as seen (restarts_seen, as new_oom_kills keys it): the process
        that wrote the checkpoint counted every kill it saw, also those after its last sample
        (`restored_until`: a container killed at a scrape, or down in its back-off, has no sample
        then), and counting one again would add its peak twice. A kill while no process led is
        not counted, as VPA's recommender, which sees kills only as pod updates, misses it.
        Pods that never restarted (nearly all) are passed over before their workload is looked
        up: this run's _feed_ooms counts them as it would."""
        for pod in self.cluster.pods.items():
            if not pod.restarted:
                continue
            w = self.cluster.workload_of(pod)
            restored = self.model.rows.get(w) if w is not None else None
            if not restored:
                continue
            for cs in pod.statuses:
                if cs.name in restored:
                    key = (pod.namespace, pod.uid or pod.name, cs.name)
                    self.restarts_seen[key] = cs.restart_count

    def _excluded(self, namespace: str) -> bool:
        return namespace in self.excluded_namespaces

    def _feed_metrics(
        self,
        metrics: list[PodMetrics],
        pods: dict[tuple[str, str], PodView],
        info: dict[WorkloadKey, WorkloadInfo],
        owners_version: object = None,
    ) -> int:
        """The LIST's usage into the model; the samples taken. `owners_version`: the cluster's,
        read before this run asked the owner walk anything (None: unknown)."""
        # Looked up once for the whole LIST, not for each of its items (150,000 at scale): the
        # settings of this run (what is excluded, tracked, grouped) and the bound methods.
        excluded = self.excluded_namespaces
        tracks = None if self.tracker.everything else self.tracker.tracks
        grouping = self.node_groups.active
        workload_of = self.workload_of
        # The last LIST's layout (app.jobs.list_layout), when each item is fed as its pod's view
        # says (nothing tracked apart, no node group): the items it still holds are taken from
        # it, the others fed one by one below.
        layout = (
            self.layout if self.layout is not None and self.layout.model is self.model else None
        )
        keeps = tracks is None and not grouping
        m = match(layout, metrics, pods, owners_version, workload_of) if keeps else None
        self.reused_items = 0 if m is None else int(m.reused.sum())
        # The LIST's samples, in its order, their quantities parsed column-wise (parsed_columns)
        # and added in one call once it is read (ArrayModel.add_usage_table: the model as sample
        # by sample, every row's histograms fed column-wise). When a policy groups DaemonSets per
        # node group, a grouped pod's samples are also its group's model's (app.jobs.node_groups).
        raw: list[RawUsage] = []
        raw_items: list[int] = []
        fed: list[tuple[int, WorkloadKey, PodView]] = []  # the items fed one by one
        whole: list[int] = []  # of them, those fed whole: every container, a valid timestamp
        one_by_one = range(len(metrics)) if m is None else np.flatnonzero(~m.reused).tolist()
        for i in one_by_one:
            item = metrics[i]
            meta = item.metadata
            ns = meta.namespace
            pod = pods.get((ns, meta.name)) if m is None else m.views[i]
            if pod is None or ns in excluded:
                continue
            w = workload_of(pod)
            if w is None:
                continue
            if tracks is not None and not tracks(w, pod.labels):
                continue
            fed.append((i, w, pod))
            resources = pod.resources()
            if grouping:
                self._feed_grouped(w, pod, item, resources)
            before = len(raw)
            raw_usages(w, item, resources, raw)
            added = len(raw) - before
            raw_items += [i] * added
            if added and added == len(item.containers):
                whole.append(i)
        columns = Columns.of_raw(raw_items, raw)
        seen = fed
        workloads: list[WorkloadKey | None] = [None] * len(metrics)  # each item's, when fed
        if m is not None and layout is not None:
            again = reused_columns(layout, m, metrics)
            workloads = layout.item_workloads(m)
            seen = self._seen_reused(info, layout, m, workloads, fed)
            columns = Columns.merged(again, columns)
        self._seen(info, seen)
        parsed = parsed_columns(columns.raw())
        hints = (columns.pcs, columns.tickets)
        if parsed.kept is not None:  # a value that is not a quantity: its sample left out
            hints = (columns.pcs[parsed.kept], columns.tickets[parsed.kept])
        if self.profiles is not None:  # each workload's usage per pod at this time of day
            self.profiles.fold_columns(*parsed.profiled)  # workload, pod, time, cores, bytes
        taken = self.model.add_usage_table(parsed.columns, hints)
        self.layout = None
        if m is not None and parsed.kept is None:  # the next LIST compared with this one
            for i, w, _ in fed:
                workloads[i] = w
            self.layout = recorded(self.model, owners_version, m, columns, whole, workloads, info)
        # what each workload container took, into its usage window (all of them at once)
        return self.windows.add_taken(taken)

    def _seen_reused(
        self,
        info: dict[WorkloadKey, WorkloadInfo],
        layout: Layout,
        m: Match,
        workloads: list[WorkloadKey | None],
        fed: list[tuple[int, WorkloadKey, PodView]],
    ) -> list[tuple[int, WorkloadKey, PodView]]:
        """The pods seen of the workloads whose items all repeat the layout's: the layout's
        (PodsSeen, as it kept them); the items of the other workloads that `_seen` must read,
        in the LIST's order: those fed one by one and the reused ones of those workloads.
        `workloads`: per item, its workload when reused (Layout.item_workloads)."""
        dirty = {w for _, w, _ in fed} | layout.lost(m.earlier)
        for w in {w for w in workloads if w is not None} - dirty:
            info[w] = WorkloadInfo(layout.seen[w])
        if not dirty:
            return fed
        more = [(i, w, m.views[i]) for i, w in enumerate(workloads) if w in dirty]
        return sorted(fed + more, key=lambda x: x[0])

    def _seen(
        self, info: dict[WorkloadKey, WorkloadInfo], fed: list[tuple[int, WorkloadKey, PodView]]
    ) -> None:
        """Each pod of `fed` (in the LIST's order) as its workload's (PodsSeen: the first pod of
        a name kept) and, for a workload first met, the labels of its first pod: what selector
        policies match (its pods' labels differ only while a rollout changes them)."""
        last_labels = self.labels
        for _, w, pod in fed:
            workload_info = info.get(w)
            if workload_info is None:
                workload_info = info[w] = WorkloadInfo()
                last_labels[w] = pod.labels
            workload_info.seen.add(pod.name, pod.resources())

    def _feed_grouped(
        self, w: WorkloadKey, pod: PodView, item: PodMetrics, resources: dict[str, Any]
    ) -> None:
        """A PodMetrics item's samples into the pod's node group's model too, when its workload
        is a DaemonSet sized per node group (the workload's own model takes them as any)."""
        group = self.node_groups.group_of(w, pod)
        if group is None:
            return
        self.node_groups.saw_pod(group, w, pod.name, resources)
        for u in usage_from_metrics(item):
            r = resources.get(u.container)
            if r is not None:
                self.node_groups.add(group, w, u, (r.cpu_request or 0) / 1000.0)

    def _feed_ooms(self, pods: Iterable[PodView]) -> int:
        count = 0
        for pod in pods:
            if self._excluded(pod.namespace):
                continue
            kills = new_oom_kills(pod, self.restarts_seen)
            if not kills:
                continue
            w = self.workload_of(pod)
            if w is None or not self.tracker.tracks(w, pod.labels):
                continue
            group = self.node_groups.group_of(w, pod)
            for k in kills:
                if group is not None:
                    self.node_groups.groups.record_oom(
                        group, w, k.pod, k.container, k.time, k.memory_bytes
                    )
                if self.model.record_oom(w, k.pod, k.container, k.time, k.memory_bytes):
                    count += 1
                    log.info(
                        "OOM kill of %s container %s in pod %s at %.0f MiB",
                        w,
                        k.container,
                        k.pod,
                        k.memory_bytes / 2**20,
                    )
        return count

    def _forget_deleted_pods(self, live: Container[tuple[str, str]], named_since: int) -> None:
        """Memory windows of pods that are gone; their history stays in the rows. The pods
        of the model's batches from `named_since` on (this run's LIST) are all in `live`:
        the feed took the samples of the pods in it alone."""
        self.model.forget_pods(live, named_since)
        self.node_groups.groups.forget_deleted_pods(live)

    def _grouped_history(self) -> Callable[[Sample], None]:
        """What takes each history sample of a live pod of a grouped DaemonSet into its group."""
        live = {(p.namespace, p.name): p for p in self.cluster.pods.items()}

        def grouped(s: Sample) -> None:
            self.node_groups.add_sample(s, live.get((s.workload.namespace, s.pod)))

        return grouped

    def _save_profiles(
        self, session: DbSession, now: float, still_leader: Callable[[], bool]
    ) -> None:
        """The daily profiles stored every PROFILES_EVERY seconds (an hour: a new leader loses
        at most that); a failed store is logged and fails nothing of the run."""
        if self.profiles is None or now - self.profiles_saved < PROFILES_EVERY:
            return
        if not still_leader():
            return
        try:
            saved = save_profiles(session, self.profiles, now)
        except Exception:
            session.rollback()
            log.exception("could not store the daily profiles; kept in memory, tried next run")
            return
        self.profiles_saved = now
        log.info("stored %d daily profiles", saved)

    def _save_node_groups(self, session: DbSession, stamp: datetime) -> None:
        """The groups of grouped DaemonSets (app.store.node_groups); a failure is logged, and the
        rows of the previous run stay."""
        try:
            save_node_groups(session, self.node_groups.results(), stamp)
        except Exception:
            log.exception("could not save the node groups; keeping the previous values")

    def _checkpoints_due(self) -> set[tuple[WorkloadKey, str]]:
        """The aggregates whose checkpoint this run writes: those never written, and the ones
        written longest ago, as many as checkpoint_budget says. Forgets the write times of
        aggregates the model no longer has."""
        keys = [(w, c) for w in self.model.workloads() for c in sorted(self.model.rows[w])]
        self.checkpointed = {k: self.checkpointed[k] for k in keys if k in self.checkpointed}
        budget = checkpoint_budget(
            len(self.checkpointed), self.interval, self.settings.checkpoint_interval_seconds
        )
        return checkpoints_due(keys, self.checkpointed, budget)

    def _results(
        self,
        policies: PolicyIndex,
        info: dict[WorkloadKey, WorkloadInfo],
        still_leader: Callable[[], bool],
        checkpoints: set[tuple[WorkloadKey, str]],
        fit: NodeFit | None = None,
        live: Mapping[WorkloadKey, PodView] | None = None,
    ) -> Any:
        """Results to save, lazily: save_all pulls them batch by batch, so checking leadership
        here stops a long save as soon as the lease is lost, not only before it starts. Only
        the aggregates in `checkpoints` carry their checkpoint."""
        model = self.model
        workloads = model.workloads()
        labels = self.labels
        governing = {w: policies.governing(w, labels.get(w)) for w in workloads}  # once each

        def policies_of(w: WorkloadKey) -> list[ContainerPolicy]:
            p = governing[w]
            return list(p.container_policies) if p else []

        def strategy_of(w: WorkloadKey) -> Strategy:
            p = governing[w]
            return chosen(p.recommender) if p else VPA  # its strategy

        # every row's percentiles at once (ArrayModel.recommend_all), then saved lazily
        recommended = model.recommend_all(workloads, policies_of, strategy_of)
        for w in workloads:
            if not still_leader():
                log.warning("lost leadership while saving: the remaining workloads are not saved")
                return
            recs = recommended[w]
            self.recommended[w] = recs  # the policy's (its LimitedByPolicy)
            saved: Mapping[str, Recommendation] = recs
            if fit is not None and live is not None:
                saved = fit.cap(w, recs, live.get(w))  # saved capped to fit a node
            wi = info.get(w, WorkloadInfo())
            for name, row in sorted(model.rows[w].items()):
                requests = wi.seen.requests(name)
                current = CurrentRequests.of(requests) if requests else None
                yield ContainerResult(
                    w,
                    name,
                    saved.get(name),
                    model.save(w, name) if (w, name) in checkpoints else None,
                    current,
                    wi.conflicts,
                    self.windows.peek((w, name)),
                    SampleSpan(*model.span(row)),
                )

    def _collect_garbage(
        self,
        session: DbSession,
        now: float,
        still_leader: Callable[[], bool],
        saved: Iterable[WorkloadKey],
    ) -> int:
        """Deletes the rows of workloads that no longer exist, once gone for the grace period.
        `saved`: the workloads this run's committed batches wrote (a failed batch wrote none)."""
        deleted = 0
        gone: set[tuple[str, str, str]] = set()
        if self.stored is None:
            self.stored = stored_workloads(session)
        self.stored.update(saved)
        for w in list(self.stored):
            # A Job family is no object: it exists while its history does (its aggregates go
            # when idle for the memory window), so a family whose Jobs all finished keeps its
            # recommendation for the next one (app.core.job_families).
            exists = (
                w in self.model.rows if w.kind == FAMILY_KIND else self.cluster.workload_exists(w)
            )
            if exists and self.tracker.tracks(w, self.labels.get(w)):
                self.missing_since.pop(w, None)
                continue
            since = self.missing_since.setdefault(w, now)
            if now - since >= self.settings.gc_grace_seconds and still_leader():
                delete_workload(session, w)
                self.stored.discard(w)
                gone.add((w.namespace, w.kind, w.name))
                self.model.drop_workload(w)
                self.node_groups.groups.drop(w)
                self.missing_since.pop(w, None)
                self.labels.pop(w, None)
                deleted += 1
                log.info(
                    "deleted recommendations and checkpoints of %s: gone for %.0fs", w, now - since
                )
        if gone:  # their history went too: a workload of that name again starts without points
            for known in (self.history_points, self.rows_written):
                for key in [k for k in known if k[:3] in gone]:
                    del known[key]
        return deleted
