"""The recommender's in-memory state: aggregates per workload container, windows per pod container.

The recommender job and `rightsizer recommend --from-csv` both feed samples through this class, so
a trace replay gives exactly the numbers the running service would.

Idle aggregates expire here too, for both: an aggregate whose last CPU sample is `idle_after` (8
days, VPA's memory aggregation window) or more before "now" is dropped, with the windows of the
pod containers that fed it (VPA `AggregateContainerState.isExpired`, garbage-collected by
`clusterState.garbageCollectAggregateCollectionStates`). "Now" is the time of the sample being
added (so a container back after a longer gap starts afresh, whether or not anything else moved
the clock meanwhile) and, in `expire_idle`, the newest sample the model holds.

A workload's policy may replace some of the settings for it (`vpa`'s recommenderParams, VPA's
per-VPA settings; app/core/recommend/strategies/vpa.py): `tune` gives the workload that tuning,
which its aggregates and pod windows use from then on, and `recommend` estimates and rounds with
the strategy's own. `strategy_of`, when set, is asked for a workload the model has not seen yet,
so its first samples are already taken as its policy says.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence

from app.core.recommend.aggregate import AggregateState, PodContainerState
from app.core.recommend.capping import apply_policy
from app.core.recommend.daily import RETAINED_DAYS
from app.core.recommend.estimator import Estimate
from app.core.recommend.rounding import integer_cpu, rounded
from app.core.recommend.settings import DAY, RecommenderSettings
from app.core.recommend.strategies import VPA, Strategy, StrategyInput, Tuning, tuning
from app.core.recommendation import ContainerPolicy, Recommendation, policy_for_container
from app.core.workload_key import WorkloadKey, sorted_keys

IDLE_AFTER_SECONDS = 8 * 86400.0

# One PodMetrics container's usage, for UsageModel.add_usages: (pod, container, time, CPU cores,
# CPU request in cores, memory bytes), the arguments of add_usage after the workload.
UsageSample = tuple[str, str, float, float | None, float, float | None]
Taken = tuple[list[float], list[float]]  # CPU cores, memory bytes taken


class UsageModel:
    def __init__(
        self, settings: RecommenderSettings | None = None, idle_after: float = IDLE_AFTER_SECONDS
    ) -> None:
        self.settings = settings or RecommenderSettings()
        self.idle_after = idle_after
        self.aggregates: dict[WorkloadKey, dict[str, AggregateState]] = {}
        self.pods: dict[tuple[WorkloadKey, str, str], PodContainerState] = {}
        self.default_tuning = Tuning(self.settings, idle_after)
        self.tunings: dict[WorkloadKey, Tuning] = {}  # the workloads whose policy tunes them
        self.strategy_of: Callable[[WorkloadKey], Strategy] | None = None

    # Per-workload settings ---------------------------------------------------------------------
    def tuning(self, workload: WorkloadKey) -> Tuning:
        return self.tunings.get(workload, self.default_tuning)

    def tune(self, workload: WorkloadKey, strategy: Strategy) -> bool:
        """Gives the workload the settings of its policy's strategy; True when they changed.
        Its aggregates decay at the new half-lives from their reference time on, its pod windows
        take the new memory interval and OOM bump for what follows (what the history holds
        already stays, and the estimate says so while it weighs: AggregateState.retune)."""
        new = tuning(strategy, self.settings, self.idle_after)
        old = self.tuning(workload)
        if new == old:
            return False
        if new == self.default_tuning:
            self.tunings.pop(workload, None)
        else:
            self.tunings[workload] = new
        for agg in self.aggregates.get(workload, {}).values():
            agg.retune(old.settings, new.settings, new.idle_after)
        for key, state in self.pods.items():
            if key[0] == workload:
                state.settings = new.settings
        return True

    def _first_seen(self, workload: WorkloadKey) -> None:
        if workload not in self.aggregates and self.strategy_of is not None:
            self.tune(workload, self.strategy_of(workload))

    def aggregate(self, workload: WorkloadKey, container: str) -> AggregateState:
        self._first_seen(workload)
        containers = self.aggregates.setdefault(workload, {})
        if container not in containers:
            containers[container] = AggregateState.empty(self.tuning(workload).settings)
        return containers[container]

    def restore(self, workload: WorkloadKey, container: str, agg: AggregateState) -> None:
        """Puts back an aggregate loaded from a checkpoint (before any pod of it is seen), to
        decay at the workload's half-lives."""
        self._first_seen(workload)
        agg.decay_as(self.tuning(workload).settings)
        self.aggregates.setdefault(workload, {})[container] = agg

    def pod_container(self, workload: WorkloadKey, pod: str, container: str) -> PodContainerState:
        key = (workload, pod, container)
        state = self.pods.get(key)
        if state is None:
            agg = self.aggregate(workload, container)
            state = PodContainerState(agg, self.tuning(workload).settings)
            self.pods[key] = state
        return state

    def add_cpu(
        self, w: WorkloadKey, pod: str, container: str, t: float, cores: float, request_cores: float
    ) -> bool:
        self._expire_if_idle(w, container, t)
        return self.pod_container(w, pod, container).add_cpu_sample(t, cores, request_cores)

    def add_memory(self, w: WorkloadKey, pod: str, container: str, t: float, bytes_: float) -> bool:
        self._expire_if_idle(w, container, t)
        return self.pod_container(w, pod, container).add_memory_sample(t, bytes_)

    def add_usage(
        self,
        w: WorkloadKey,
        pod: str,
        container: str,
        t: float,
        cores: float | None,
        request_cores: float,
        bytes_: float | None,
    ) -> tuple[bool, bool]:
        """add_cpu (when `cores` is given) then add_memory (when `bytes_` is), as those two calls
        do them; (CPU taken, memory taken). The idle check and the pod container's lookup are
        made once: the second check, at the same time, can drop nothing when the workload's idle
        time is positive (the aggregate's last sample is then t or within it), so it is skipped;
        with an idle time of 0 or less the two calls are made as they are."""
        if cores is None and bytes_ is None:
            return False, False
        self._expire_if_idle(w, container, t)
        state = self.pods.get((w, pod, container))  # pod_container's lookup, inlined
        if state is None:
            state = self.pod_container(w, pod, container)
        cpu = cores is not None and state.add_cpu_sample(t, cores, request_cores)
        if bytes_ is None:
            return cpu, False
        if self.tunings.get(w, self.default_tuning).idle_after > 0:
            return cpu, state.add_memory_sample(t, bytes_)
        return cpu, self.add_memory(w, pod, container, t, bytes_)

    def add_usages(self, w: WorkloadKey, batch: Sequence[UsageSample]) -> dict[str, Taken]:
        """add_usage for each of one workload's samples, in order: the model is left as those
        calls leave it. Per container of the batch (each one, in the order they first appear),
        the CPU cores and memory bytes taken, in order.

        The samples' pod containers are checked one by one (duplicates, older samples, restored
        checkpoints, memory windows), and the CPU samples they take are added to each aggregate
        in one call (AggregateState.add_cpu_samples), as are the memory samples to its days. That
        is the per-sample order for each aggregate's histograms and days, as long as no aggregate
        of the workload is dropped as idle meanwhile (`_batchable`); when one might be, or the
        idle time is 0 or less, the samples go through add_usage one by one."""
        if not self._batchable(w, batch):
            return self._add_one_by_one(w, batch)
        taken: dict[str, Taken] = {}
        pods = self.pods
        # per aggregate fed (by identity: a pod container's own, which the one of its name
        # normally is): it, then its CPU samples' times, cores and weights, memory times, bytes
        pending: dict[
            int,
            tuple[AggregateState, list[float], list[float], list[float], list[float], list[float]],
        ] = {}
        agg: AggregateState | None = None
        waiting = None
        for pod, container, t, cores, request, bytes_ in batch:
            lists = taken.get(container)
            if lists is None:
                lists = taken[container] = ([], [])
            if cores is None and bytes_ is None:
                continue
            state = pods.get((w, pod, container))
            if state is None:
                state = self.pod_container(w, pod, container)
            if state.aggregate is not agg:
                agg = state.aggregate
                waiting = pending.get(id(agg))
                if waiting is None:
                    waiting = pending[id(agg)] = (agg, [], [], [], [], [])
            assert waiting is not None
            if cores is not None:  # add_cpu_sample, with the aggregate's part deferred
                last, until = state.last_cpu_sample, agg.restored_until
                if not (
                    cores < 0
                    or (last is not None and t <= last)
                    or (until is not None and t <= until)
                ):
                    waiting[1].append(t)
                    waiting[2].append(cores)
                    waiting[3].append(max(request, state.settings.min_cpu_sample_weight))
                    state.last_cpu_sample = t
                    lists[0].append(cores)
            if bytes_ is not None and state.add_memory_peak(t, bytes_):
                waiting[4].append(t)
                waiting[5].append(bytes_)
                lists[1].append(bytes_)
        for agg, times, cores_taken, weights, memory_times, memory_taken in pending.values():
            if times:
                agg.add_cpu_samples(times, cores_taken, weights)
            if memory_times:
                agg.daily.add_memories(memory_times, memory_taken)
        return taken

    def _add_one_by_one(self, w: WorkloadKey, batch: Sequence[UsageSample]) -> dict[str, Taken]:
        """add_usages through add_usage, sample by sample (the reference it follows)."""
        taken: dict[str, Taken] = {}
        for pod, container, t, cores, request, bytes_ in batch:
            cpu, memory = self.add_usage(w, pod, container, t, cores, request, bytes_)
            lists = taken.get(container)
            if lists is None:
                lists = taken[container] = ([], [])
            if cpu and cores is not None:
                lists[0].append(cores)
            if memory and bytes_ is not None:
                lists[1].append(bytes_)
        return taken

    def _batchable(self, w: WorkloadKey, batch: Sequence[UsageSample]) -> bool:
        """No aggregate of the workload can be dropped as idle while the batch is added: every
        sample is within the idle time of the aggregate's last sample before the batch and of
        every other sample of the batch (the last sample only moves forward meanwhile), and that
        time is positive. Also the batch's days are fewer than the days kept (so a day of the
        batch is never dropped by a later one: DailyUsage._day)."""
        if w not in self.aggregates and self.strategy_of is not None:
            # as its first sample will tune it (_first_seen)
            idle = tuning(self.strategy_of(w), self.settings, self.idle_after).idle_after
        else:
            idle = self.tunings.get(w, self.default_tuning).idle_after
        if idle <= 0 or not batch:
            return idle > 0
        times = [s[2] for s in batch]
        newest, oldest = max(times), min(times)
        if not newest - oldest < idle or not math.isfinite(newest - oldest):
            return False
        days = math.floor(newest / DAY) - math.floor(oldest / DAY)
        if days >= RETAINED_DAYS:
            return False
        containers = self.aggregates.get(w)
        if containers is not None:
            for name in {s[1] for s in batch}:
                agg = containers.get(name)
                if agg is None:
                    continue
                last = agg.last_sample
                if (last is not None and not newest - last < idle) or days >= agg.daily.retained:
                    return False
        return True

    def record_oom(self, w: WorkloadKey, pod: str, container: str, t: float, bytes_: float) -> bool:
        self._expire_if_idle(w, container, t)
        return self.pod_container(w, pod, container).record_oom(t, bytes_)

    # Expiry ------------------------------------------------------------------------------------
    def is_expired(self, w: WorkloadKey, agg: AggregateState, now: float) -> bool:
        """No CPU sample for the workload's idle time or more (VPA: `now - LastSampleStart >=
        window`, the memory aggregation window). An aggregate without any CPU sample (memory
        only) never expires, as it has no last sample."""
        idle = self.tuning(w).idle_after
        return agg.last_sample is not None and now - agg.last_sample >= idle

    def newest_sample(self) -> float | None:
        """The latest sample time over all aggregates: the model's own clock."""
        times = [a.last_sample for c in self.aggregates.values() for a in c.values()]
        return max((t for t in times if t is not None), default=None)

    def expired(self, now: float) -> list[tuple[WorkloadKey, str]]:
        """The (workload, container) of every aggregate expired at `now`."""
        return [
            (w, name)
            for w, containers in self.aggregates.items()
            for name, agg in containers.items()
            if self.is_expired(w, agg, now)
        ]

    def expire_idle(self, now: float) -> int:
        """Drops every aggregate expired at `now` (and its pod containers' windows); the count."""
        expired = self.expired(now)
        for w, name in expired:
            self._drop_aggregate(w, name)
        # their pod containers' windows in one pass: a pass for each (as _drop makes) took 35 s
        # for 3,000 aggregates expiring together among 120,000 pod containers (the workloads
        # of a namespace deleted eight days before)
        gone = set(expired)
        for key in [k for k in self.pods if (k[0], k[2]) in gone]:
            del self.pods[key]
        return len(expired)

    def _expire_if_idle(self, w: WorkloadKey, container: str, t: float) -> None:
        """is_expired at t, inlined: this runs for every sample."""
        containers = self.aggregates.get(w)
        agg = containers.get(container) if containers is not None else None
        if agg is None or agg.last_sample is None:
            return
        if t - agg.last_sample >= self.tunings.get(w, self.default_tuning).idle_after:
            self._drop(w, container)

    def _drop(self, w: WorkloadKey, container: str) -> None:
        self._drop_aggregate(w, container)
        for key in [k for k in self.pods if k[0] == w and k[2] == container]:
            del self.pods[key]

    def _drop_aggregate(self, w: WorkloadKey, container: str) -> None:
        """The aggregate alone (its pod containers' windows stay: the caller drops them)."""
        containers = self.aggregates[w]
        del containers[container]
        if not containers:
            del self.aggregates[w]
            self.tunings.pop(w, None)

    def workloads(self) -> Iterator[WorkloadKey]:
        return iter(sorted_keys(self.aggregates))

    def recommend(
        self,
        workload: WorkloadKey,
        policies: list[ContainerPolicy] | None = None,
        strategy: Strategy = VPA,
    ) -> dict[str, Recommendation]:
        """Recommendations per container, sorted; containers a policy turns off are absent.
        VPA's order: estimate, round (the settings, or the strategy's rounding parameters; the
        container policy's integerCPU), then cap. The strategy's parameters replace settings
        (app/core/recommend/strategies: `tuning`)."""
        containers = self.aggregates.get(workload, {})
        out: dict[str, Recommendation] = {}
        # the default strategy replaces no setting (tuning(VPA, ...) is the model's own)
        if strategy is VPA:
            settings = self.settings
        else:
            settings = tuning(strategy, self.settings, self.idle_after).settings
        for name in sorted(containers):
            agg = containers[name]
            if agg.is_empty():
                continue
            policy = policy_for_container(policies or [], name)
            proposal = strategy.propose(StrategyInput(agg, len(containers), settings))
            if proposal.estimate is None:
                continue  # the strategy needs more data
            est = _rounded(proposal.estimate, policy, settings)
            rec = apply_policy(est, policy, proposal.reason)
            if rec is not None:
                out[name] = rec
        return out


def _rounded(est: Estimate, policy: ContainerPolicy, s: RecommenderSettings) -> Estimate:
    est = rounded(est, int(s.round_cpu_millicores), int(s.round_memory_bytes))
    return integer_cpu(est) if policy.integer_cpu else est
