"""The recommender's model, kept in arrays (issue 43).

VPA's per workload container state (AggregateContainerState) and per pod container memory
windows as columns of numpy arrays: the CPU and memory histograms of every workload container
are rows of two HistogramRows (histogram_rows.py, bit for bit VPA's decaying histograms); a row
also has its first and last CPU sample, its CPU sample count and the time it was restored up to
(the samples a checkpoint already holds); each pod container (its last CPU and memory sample, its
open memory window and peaks) is an index into arrays of its own. A batch of PodMetrics samples,
for any workloads, is checked and added column-wise: duplicates and older samples, restored
checkpoints, memory windows, then one scatter per histogram. A batch leaves the model as its
samples one by one would (add_usage; tests/core/recommend/test_array_model.py drives random
streams both ways and compares every recommendation and checkpoint).

The rules, per pod container and per histogram, in VPA's order: a CPU sample is taken when newer
than the pod container's last one and than the row's restored checkpoint, weighted by the
container's CPU request (at least min_cpu_sample_weight cores); memory keeps one peak per pod
container per aggregation interval, timestamped at the window's end (a larger usage replaces the
window's peak: the old one out, the new one in); an OOM kill adds a bumped peak unless more than
one interval older than the last memory sample (aggregate.oom_bump; kubernetes/autoscaler #8548).
A row with no CPU sample for its idle time (8 days, VPA's memory aggregation window) is dropped,
"now" being the sample being added or, in `expire_idle`, the newest one the model holds.

The estimate is the `vpa` strategy's own, on columns: the rows of each settings at once, their
percentiles, margins, confidence factors, floors and rounding computed for all of them together
(strategies/vpa.py `propose_rows`, estimator.py `estimate_rows`, rounding.py `rounded_rows`);
another strategy reads a view of its row (`views`). A workload's policy may tune
its history (`tune`, `strategy_of`): a row keeps its own half-lives (HistogramRows.hl) and idle
time, a pod container its memory interval, and a retuned row the note of what its history was
gathered with (aggregate.Retuned). Each row also keeps its per-day usage counts (daily.py's
UsageRows, in arrays too: daily_rows.py, a batch counted with one scatter per column) for the
strategies that read a window (`krr`, `balanced`).

The recommender job (app/jobs/recommender.py), its Prometheus history replay (timeline.py),
`recommend --from-csv` (trace.replay) and each node group's model (node_groups.py) run it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

import numpy as np

from app.core.recommend.aggregate import (
    AggregateState,
    Retuned,
    cpu_buckets,
    history_changes,
    memory_buckets,
    oom_bump,
)
from app.core.recommend.capping import apply_policy
from app.core.recommend.checkpoint import CHECKPOINT_VERSION, AggregateCheckpoint
from app.core.recommend.daily import RETAINED_DAYS, DailyUsage, UsageRows
from app.core.recommend.daily_rows import CPU, MEMORY
from app.core.recommend.estimator import Estimate, Estimates, percentile_settings
from app.core.recommend.histogram_rows import HistogramRows, find_buckets
from app.core.recommend.model import IDLE_AFTER_SECONDS
from app.core.recommend.rounding import rounded_rows
from app.core.recommend.settings import DAY, RecommenderSettings
from app.core.recommend.strategies import VPA, Strategy, StrategyInput, Tuning, tuning
from app.core.recommend.strategies.vpa import Rows, VpaStrategy, propose_rows
from app.core.recommend.taken import Taken, TakenColumns, taken_by_rows
from app.core.recommendation import ContainerPolicy, Recommendation, policy_for_container
from app.core.resources import Resources
from app.core.workload_key import WorkloadKey, sorted_keys

Array = Any
# One PodMetrics container's usage: (workload, pod, container, time, CPU cores, CPU request in
# cores, memory bytes): add_usage's arguments.
Sample = tuple[WorkloadKey, str, str, float, float | None, float, float | None]
# The same samples as columns, one per field of a Sample (add_usage_table)
SampleColumns = tuple[
    Sequence[WorkloadKey],
    Sequence[str],
    Sequence[str],
    Sequence[float],
    Sequence[float | None],
    Sequence[float],
    Sequence[float | None],
]
# Per sample of a batch, a pod container and its ticket (ArrayModel.ticket_of); -1 where none
Hints = tuple[Sequence[int] | Array, Sequence[int] | Array]
NAN = math.nan


def _grown(a: Array, size: int, fill: float | int) -> Array:
    if len(a) >= size:
        return a
    return np.concatenate([a, np.full(max(size, 2 * len(a)) - len(a), fill, dtype=a.dtype)])


def _rank_within(keys: Array) -> Array:
    """For each element, how many equal keys come before it."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.r_[0, np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1]
    group_start = np.repeat(starts, np.diff(np.r_[starts, len(keys)]))
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(keys)) - group_start
    return rank


def _distinct(keys: Sequence[object], found: Sequence[int | None]) -> bool:
    """No key twice: of the known ones (found: their pod containers), no pod container twice
    (counted by numpy), and of the new ones (None), no key twice."""
    if None in found:
        new = [k for k, pc in zip(keys, found, strict=True) if pc is None]
        if len(set(new)) != len(new):
            return False
        found = [pc for pc in found if pc is not None]
    return not found or int(np.bincount(np.array(found, dtype=np.int64)).max()) < 2


def _together(t: Array, idle: Array, last: Array) -> bool:
    """Samples at times `t` may be added together: no row can expire meanwhile (they span
    less than their rows' idle times `idle`, and so does each row's `last` sample before them
    to the newest) and no day of them is dropped by a later one (they span fewer days than
    are kept: DailyRows.add)."""
    newest, oldest = float(t.max()), float(t.min())
    return (
        not (newest - oldest >= idle).any()
        and not (newest - last >= idle).any()
        and math.floor(newest / DAY) - math.floor(oldest / DAY) < RETAINED_DAYS
    )


def _floats(values: Sequence[float | None]) -> Array:
    """A column of floats, None as NaN (numpy reads None so for a float array)."""
    return np.array(values, dtype=np.float64)


class _Added(NamedTuple):
    """Whether each sample's CPU and its memory were taken; when they were added together,
    also their rows, the CPU taken and the cores, the memory taken and the bytes (columns)."""

    cpu: list[bool]
    memory: list[bool]
    columns: tuple[Array, Array, Array, Array, Array] | None = None


class _Percentiles:
    """A row's histogram as the estimator reads it: percentiles computed beforehand (others
    from the row, when a strategy asks for them)."""

    def __init__(
        self,
        ps: tuple[float, ...],
        values: list[float],
        empty: bool,
        rows: HistogramRows | None = None,
        row: int = 0,
    ) -> None:
        self._ps, self._values, self._empty = ps, values, empty
        self._rows, self._row = rows, row

    def percentiles(self, ps: Sequence[float]) -> list[float]:
        if tuple(ps) == self._ps:
            return self._values
        if self._rows is None:
            raise KeyError(f"percentiles {tuple(ps)} not computed (have {self._ps})")
        return cast(list[float], self._rows.percentiles([self._row], ps).tolist()[0])

    def is_empty(self) -> bool:
        return self._empty


@dataclass
class RowView:
    """One workload container's row, read as the strategies read an AggregateState."""

    cpu: _Percentiles
    memory: _Percentiles
    first_sample: float | None
    last_sample: float | None
    total_samples: int
    daily: DailyUsage | None = None
    retuned: Retuned | None = None

    def is_empty(self) -> bool:
        return self.cpu.is_empty() and self.memory.is_empty()


class _Todo(NamedTuple):
    """A workload container to estimate: its row, its workload's container count, its
    container policy, the settings its strategy reads and the strategy unless `vpa` (whose
    rows are estimated together)."""

    workload: WorkloadKey
    name: str
    row: int
    containers: int
    policy: ContainerPolicy
    settings: RecommenderSettings
    other: Strategy | None


_NO_POLICY = ContainerPolicy()  # a workload without container policies: each container's


def _opt(x: float) -> float | None:
    return None if math.isnan(x) else x


class ArrayModel:
    def __init__(
        self, settings: RecommenderSettings | None = None, idle_after: float = IDLE_AFTER_SECONDS
    ) -> None:
        s = self.settings = settings or RecommenderSettings()
        if idle_after <= 0:
            raise ValueError("idle_after must be positive")
        self.idle_after = idle_after
        self.default_tuning = Tuning(s, idle_after)
        self.tunings: dict[WorkloadKey, Tuning] = {}  # the workloads whose policy tunes them
        self.strategy_of: Callable[[WorkloadKey], Strategy] | None = None
        self.cpu = HistogramRows(cpu_buckets(s), s.cpu_half_life_seconds)
        self.memory = HistogramRows(memory_buckets(s), s.memory_half_life_seconds)
        # per row (workload container)
        self.first = np.full(64, NAN)
        self.last = np.full(64, NAN)
        self.count = np.zeros(64, dtype=np.int64)
        self.restored = np.full(64, NAN)
        self.idle = np.full(64, idle_after)  # the row's workload's idle time
        self.daily = UsageRows(self.cpu.buckets, self.memory.buckets, size=64)  # per-day counts
        self.retuned: dict[int, Retuned] = {}  # row -> what its history was gathered with
        self.rows: dict[WorkloadKey, dict[str, int]] = {}
        self.row_pods: dict[int, set[int]] = {}  # row -> its pod containers
        self._free_rows: list[int] = []
        self._next_row = 0
        # per pod container
        self.pc_row = np.zeros(64, dtype=np.int64)
        self.last_cpu = np.full(64, NAN)
        self.last_mem = np.full(64, NAN)
        self.window_end = np.full(64, NAN)
        self.peak = np.zeros(64)
        self.oom_peak = np.zeros(64)
        self.interval = np.full(64, s.memory_aggregation_interval_seconds)  # memory window
        # the add_usage_table batch that last named each pod container (0: none), counted by
        # `tables`: forget_pods need not look up the pods of the batches fed since a given one
        self.named_in = np.zeros(64, dtype=np.int32)
        self.tables = 0
        # each pod container's ticket: the allocation that made it (-1: free), so a caller that
        # kept (pod container, ticket) from an earlier table can hand it back (add_usage_table's
        # `hints`) instead of its key; one model never gives a ticket twice
        self.ticket_of = np.full(64, -1, dtype=np.int64)
        self._tickets = 0
        # the pod container each sample of the last add_usage_table went to (-1: none)
        self.last_table = np.zeros(0, dtype=np.int64)
        self.pods: dict[tuple[WorkloadKey, str, str], int] = {}
        self.pod_keys: dict[int, tuple[WorkloadKey, str, str]] = {}  # pod container -> its key
        self._free_pcs: list[int] = []
        self._next_pc = 0

    # Per-workload settings ---------------------------------------------------------------------
    def tuning(self, workload: WorkloadKey) -> Tuning:
        return self.tunings.get(workload, self.default_tuning)

    def tune(self, workload: WorkloadKey, strategy: Strategy) -> bool:
        """The workload takes its policy's strategy's settings; True when they
        changed. Its rows decay at the new half-lives from their reference time on (and note
        what their history was gathered with: aggregate.Retuned), its pod containers take
        the new memory interval for what follows."""
        new = tuning(strategy, self.settings, self.idle_after)
        old = self.tuning(workload)
        if new == old:
            return False
        if new == self.default_tuning:
            self.tunings.pop(workload, None)
        else:
            self.tunings[workload] = new
        changes = history_changes(old.settings, new.settings)
        for row in self.rows.get(workload, {}).values():
            self._decay_as(row, new)
            last, until = float(self.last[row]), float(self.restored[row])
            fresh = math.isnan(until) or (0.0 if math.isnan(last) else last) > until
            if changes and not math.isnan(last) and fresh:
                self.retuned[row] = Retuned(", ".join(changes), last, last + new.idle_after)
            for pc in self.row_pods[row]:
                self.interval[pc] = new.settings.memory_aggregation_interval_seconds
        return True

    def _decay_as(self, row: int, t: Tuning) -> None:
        self.cpu.hl[row] = t.settings.cpu_half_life_seconds
        self.memory.hl[row] = t.settings.memory_half_life_seconds
        self.idle[row] = t.idle_after

    def _first_seen(self, workload: WorkloadKey) -> None:
        if workload not in self.rows and self.strategy_of is not None:
            self.tune(workload, self.strategy_of(workload))

    # Rows and pod containers -----------------------------------------------------------------
    def _row(self, w: WorkloadKey, container: str) -> int:
        row = self.rows.get(w, {}).get(container)
        if row is not None:
            return row
        self._first_seen(w)
        containers = self.rows.setdefault(w, {})
        if self._free_rows:
            row = self._free_rows.pop()
        else:
            row = self._next_row
            self._next_row += 1
            size = row + 1
            self.first, self.last = _grown(self.first, size, NAN), _grown(self.last, size, NAN)
            self.count = _grown(self.count, size, 0)
            self.restored = _grown(self.restored, size, NAN)
            self.idle = _grown(self.idle, size, self.idle_after)
            self.cpu.grow(len(self.first))
            self.memory.grow(len(self.first))
            self.daily.grow(len(self.first))
        containers[container] = row
        self.row_pods[row] = set()
        self._decay_as(row, self.tuning(w))
        return row

    def _pod_container(self, w: WorkloadKey, pod: str, container: str) -> int:
        key = (w, pod, container)
        pc = self.pods.get(key)
        if pc is not None:
            return pc
        row = self._row(w, container)
        if self._free_pcs:
            pc = self._free_pcs.pop()
        else:
            pc = self._next_pc
            self._next_pc += 1
            size = pc + 1
            if size > len(self.pc_row):  # the pod container columns grow together
                self.pc_row = _grown(self.pc_row, size, 0)
                self.last_cpu, self.last_mem = (
                    _grown(self.last_cpu, size, NAN),
                    _grown(self.last_mem, size, NAN),
                )
                self.window_end = _grown(self.window_end, size, NAN)
                self.peak, self.oom_peak = (
                    _grown(self.peak, size, 0.0),
                    _grown(self.oom_peak, size, 0.0),
                )
                self.interval = _grown(self.interval, size, NAN)
                self.named_in = _grown(self.named_in, size, 0)
                self.ticket_of = _grown(self.ticket_of, size, -1)
        self.pc_row[pc] = row
        self.ticket_of[pc] = self._tickets
        self._tickets += 1
        self.interval[pc] = self.tuning(w).settings.memory_aggregation_interval_seconds
        self.last_cpu[pc] = self.last_mem[pc] = self.window_end[pc] = NAN
        self.peak[pc] = self.oom_peak[pc] = 0.0
        self.pods[key] = pc
        self.pod_keys[pc] = key
        self.row_pods[row].add(pc)
        return pc

    def _drop(self, w: WorkloadKey, container: str) -> None:
        """The workload container's row and its pod containers' windows."""
        containers = self.rows[w]
        row = containers.pop(container)
        if not containers:
            del self.rows[w]
            self.tunings.pop(w, None)
        self.daily.clear(row)
        self.retuned.pop(row, None)
        gone = self.row_pods.pop(row)
        for pc in gone:  # its own pod containers only: no pass over all of them
            del self.pods[self.pod_keys.pop(pc)]
            self.ticket_of[pc] = -1
        self._free_pcs.extend(gone)
        self.cpu.clear(row)
        self.memory.clear(row)
        self.first[row] = self.last[row] = self.restored[row] = NAN
        self.count[row] = 0
        self.idle[row] = self.idle_after
        self._free_rows.append(row)

    def drop_workload(self, w: WorkloadKey) -> None:
        """Forgets the workload: its rows, their pod containers' windows, its tuning."""
        for container in list(self.rows.get(w, {})):
            self._drop(w, container)
        self.tunings.pop(w, None)

    def forget_pods(self, live: Container[tuple[str, str]], named_since: int | None = None) -> None:
        """Forgets the memory windows (and last samples) of the pod containers whose pod
        (namespace, name) is not in `live`; their rows' history stays. `named_since`: the
        caller's word that the pods of the add_usage_table batches numbered from it on (their
        `tables` count) are in `live`, so only the others are looked up (in a steady run, none:
        every pod container was in the run's LIST)."""
        if named_since is None:
            keys: Iterable[tuple[WorkloadKey, str, str]] = self.pods
        else:
            unnamed = np.flatnonzero(self.named_in[: self._next_pc] < named_since).tolist()
            keys = [k for pc in unnamed if (k := self.pod_keys.get(pc)) is not None]
        for key in [k for k in keys if (k[0].namespace, k[1]) not in live]:
            pc = self.pods.pop(key)
            del self.pod_keys[pc]
            self.ticket_of[pc] = -1
            self.row_pods[int(self.pc_row[pc])].discard(pc)
            self._free_pcs.append(pc)

    def _expire_if_idle(self, w: WorkloadKey, container: str, t: float) -> None:
        row = self.rows.get(w, {}).get(container)
        if row is not None and t - self.last[row] >= self.idle[row]:  # NaN: never
            self._drop(w, container)

    # Samples -----------------------------------------------------------------------------------
    def add_usages(self, batch: Sequence[Sample]) -> dict[tuple[WorkloadKey, str], Taken]:
        """add_usage(*sample) for each sample, in order, any workloads: the same state. Per
        workload container of the batch (in the order they first appear), the CPU cores and
        memory bytes taken, in order (add_usage_columns' answer as lists)."""
        return self.add_usage_columns(batch).lists()

    def add_usage_table(self, columns: SampleColumns, hints: Hints | None = None) -> TakenColumns:
        """add_usage_columns of the samples in `columns` (a PodMetrics LIST's, as the job parses
        them). Samples of known, distinct pod containers that are added together (a steady
        run's LIST) go from the columns to the arrays without a tuple per sample; any other
        batch is taken as add_usage_columns takes its samples. `hints`: per sample, a pod
        container an earlier table gave the sample's key (`last_table`) and its ticket
        (`ticket_of`), or -1, -1; one whose ticket still holds is taken without a key lookup."""
        ws, pods, containers, times, cores, requests, bytes_ = columns
        if hints is not None and not len(hints[0]) == len(hints[1]) == len(ws):
            raise ValueError(f"{len(hints[0])} and {len(hints[1])} hints for {len(ws)} samples")
        self.tables += 1
        get = self.pods.get
        keys: list[tuple[WorkloadKey, str, str]] | None = None
        found: list[int | None] | None = None
        pcs: Array | None = None
        held = self._held(hints) if hints is not None else None
        if hints is not None and held is not None and held.all():  # no key looked up
            pcs = np.asarray(hints[0], dtype=np.int64)
            distinct = not len(pcs) or int(np.bincount(pcs).max()) < 2
        else:
            keys = list(zip(ws, pods, containers, strict=True))
            if hints is None or held is None:
                found = [get(k) for k in keys]
            else:  # a hint where its ticket holds (made for its key), else the key looked up
                hinted = zip(np.asarray(hints[0]).tolist(), held.tolist(), keys, strict=True)
                found = [pc if ok else get(k) for pc, ok, k in hinted]
            distinct = _distinct(keys, found)
            if None not in found:
                pcs = np.array(found, dtype=np.int64)
        each_has_a_value = None not in cores or None not in bytes_
        if len(ws) > 1 and each_has_a_value and pcs is not None and distinct:
            t = np.array(times, dtype=np.float64)
            if self._together(pcs, t):
                self.named_in[pcs] = self.tables
                self.last_table = pcs
                cpu, memory = _floats(cores), _floats(bytes_)
                added = self._add_arrays(pcs, t, cpu, _floats(requests), memory)
                assert added.columns is not None
                return taken_by_rows(lambda i: (ws[i], containers[i]), *added.columns)
        if keys is None or found is None:
            keys = list(zip(ws, pods, containers, strict=True))
            found = cast(list[int | None], np.asarray(pcs).tolist())
        batch = list(zip(*columns, strict=True))
        if each_has_a_value:  # no sample left out: the keys and pod containers as looked up
            taken = self._add_samples(batch, batch, keys, found)
        else:
            taken = self.add_usage_columns(batch)
        after = [get(k) for k in keys]
        self.last_table = np.array([-1 if pc is None else pc for pc in after], dtype=np.int64)
        self.named_in[self.last_table[self.last_table >= 0]] = self.tables
        return taken

    def _held(self, hints: Hints) -> Array:
        """Per hint (pod container, ticket), whether it still names a live pod container (a
        bool array)."""
        pcs, tickets = (np.asarray(h, dtype=np.int64) for h in hints)
        known = (pcs >= 0) & (pcs < self._next_pc)
        return known & (self.ticket_of[np.where(known, pcs, 0)] == tickets)

    def add_usage_columns(self, batch: Sequence[Sample]) -> TakenColumns:
        """add_usages, its answer in columns. Consecutive samples of distinct pod containers
        that no idle expiry can reach are added together (a PodMetrics LIST is one such chunk);
        a sample that might expire its row is added alone after the check."""
        samples = [x for x in batch if x[4] is not None or x[6] is not None]
        keys = [x[:3] for x in samples]
        get = self.pods.get
        return self._add_samples(batch, samples, keys, [get(k) for k in keys])

    def _add_samples(
        self,
        batch: Sequence[Sample],
        samples: Sequence[Sample],
        keys: Sequence[tuple[WorkloadKey, str, str]],
        found: list[int | None],
    ) -> TakenColumns:
        """add_usage_columns of `batch`, whose `samples` (those with a value) have these keys
        and pod containers (`found`, None for a new one)."""
        if _distinct(keys, found):
            added = self._add_checked(samples, keys, found)
            if added.columns is not None and len(samples) == len(batch):
                # the common case: a LIST
                return taken_by_rows(lambda i: (samples[i][0], samples[i][2]), *added.columns)
            cpu, memory = added.cpu, added.memory
        else:
            cpu, memory = [], []
            start = 0
            while start < len(samples):
                seen: set[tuple[WorkloadKey, str, str]] = set()
                end = start
                while end < len(samples) and keys[end] not in seen:
                    seen.add(keys[end])
                    end += 1
                more = self._add_checked(samples[start:end], keys[start:end])
                cpu += more.cpu
                memory += more.memory
                start = end
        taken: dict[tuple[WorkloadKey, str], Taken] = {}
        for x in batch:
            if (x[0], x[2]) not in taken:
                taken[x[0], x[2]] = ([], [])
        for x, c, m in zip(samples, cpu, memory, strict=True):
            if c or m:
                lists = taken[x[0], x[2]]
                if c:
                    lists[0].append(cast(float, x[4]))
                if m:
                    lists[1].append(cast(float, x[6]))
        return TakenColumns.of_lists(taken)

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
        """One pod container's CPU (when `cores` is given) then memory (when `bytes_` is), as
        VPA's feeder takes a PodMetrics container; (CPU taken, memory taken)."""
        if cores is None and bytes_ is None:
            return False, False
        sample = (w, pod, container, t, cores, request_cores, bytes_)
        self._expire_if_idle(w, container, t)
        return self._add_one(sample, self._pod_container(w, pod, container))

    def add_cpu(
        self, w: WorkloadKey, pod: str, container: str, t: float, cores: float, request: float
    ) -> bool:
        """One CPU sample (weighted by the container's CPU request in cores); taken or not."""
        return self.add_usage(w, pod, container, t, cores, request, None)[0]

    def add_memory(self, w: WorkloadKey, pod: str, container: str, t: float, bytes_: float) -> bool:
        """One memory sample (the pod container's peak in its window); taken or not."""
        return self.add_usage(w, pod, container, t, None, 0.0, bytes_)[1]

    def _add_checked(
        self,
        chunk: Sequence[Sample],
        keys: Sequence[tuple[WorkloadKey, str, str]],
        found: list[int | None] | None = None,
    ) -> _Added:
        """Samples of distinct pod containers: together when they may be (_together), else
        one by one after each one's idle check. Whether each sample's CPU and its memory were
        taken (`found`: each key's pod container, None for a new one, when the caller looked
        them up already)."""
        if not chunk:
            return _Added([], [])
        if found is None:
            get = self.pods.get
            found = [get(k) for k in keys]
        t = np.array([x[3] for x in chunk], dtype=np.float64)
        if None in found:
            # the rows of the samples' pod containers, -1 for a row not made yet: made only
            # once no row can expire meanwhile (an expiry may drop a workload's tuning, which
            # its next row then takes afresh, as sample by sample)
            row_of = [
                int(self.pc_row[pc]) if pc is not None else self.rows.get(k[0], {}).get(k[2], -1)
                for pc, k in zip(found, keys, strict=True)
            ]
            rows = np.array(row_of, dtype=np.int64)
            new = rows < 0
            idle = np.where(new, 0.0, self.idle[rows])
            idle_of: dict[WorkloadKey, float] = {}  # asked once per workload, not per sample
            for k in (k for k, n in zip(keys, new.tolist(), strict=True) if n):
                if k[0] not in idle_of:
                    idle_of[k[0]] = self._idle_of(k[0])
            idle[new] = [idle_of[k[0]] for k, n in zip(keys, new.tolist(), strict=True) if n]
            last = np.where(new, NAN, self.last[rows])
            together = _together(t, idle, last)
        else:
            pcs = np.array(found, dtype=np.int64)
            together = self._together(pcs, t)
        if not together:
            cpu, memory = [], []
            for x in chunk:
                self._expire_if_idle(x[0], x[2], x[3])
                c, m = self._add_one(x, self._pod_container(x[0], x[1], x[2]))
                cpu.append(c)
                memory.append(m)
            return _Added(cpu, memory)
        if len(chunk) == 1:  # a trace's samples, one pod container: no arrays to build
            pc = self._pod_container(*keys[0]) if found[0] is None else found[0]
            c, m = self._add_one(chunk[0], pc)
            return _Added([c], [m])
        if None in found:
            pcs = np.array(
                [
                    self._pod_container(*k) if pc is None else pc
                    for pc, k in zip(found, keys, strict=True)
                ],
                dtype=np.int64,
            )
        return self._add_chunk(chunk, pcs, t)

    def _together(self, pcs: Array, t: Array) -> bool:
        """Samples of the known pod containers `pcs` at times `t` may be added together
        (_together, with their rows' idle times and last samples)."""
        rows = self.pc_row[pcs]
        return _together(t, self.idle[rows], self.last[rows])

    def _idle_of(self, w: WorkloadKey) -> float:
        """The idle time a new row of the workload will have (its first row tunes it)."""
        if w not in self.rows and self.strategy_of is not None:
            return tuning(self.strategy_of(w), self.settings, self.idle_after).idle_after
        return self.tuning(w).idle_after

    def _add_one(self, x: Sample, pc: int) -> tuple[bool, bool]:
        """_add_chunk of one sample, in scalars (the same rules: the per-object code's)."""
        _, _, _, t, cores, request, usage = x
        row = int(self.pc_row[pc])
        not_restored = not self.restored[row] >= t
        cpu = False
        if (
            cores is not None
            and not math.isnan(cores)
            and not cores < 0
            and not self.last_cpu[pc] >= t
            and not_restored
        ):
            self.last_cpu[pc] = t
            low = self.settings.min_cpu_sample_weight
            weight = low if low > request else request
            bucket = self.cpu.buckets.find_bucket(cores)
            self.cpu.add_one(row, bucket, weight, t)
            if not self.first[row] <= t:
                self.first[row] = t
            if not self.last[row] >= t:
                self.last[row] = t
            self.count[row] += 1
            self.daily.add_one(row, t, cores, bucket, CPU)
            cpu = True
        if usage is None or math.isnan(usage) or usage < 0 or not not_restored:
            return cpu, False
        if self.last_mem[pc] > t:
            return cpu, False
        self._take_peak(pc, row, t, usage, False)
        self.daily.add_one(row, t, usage, self.memory.buckets.find_bucket(usage), MEMORY)
        return cpu, True

    def _add_chunk(self, chunk: Sequence[Sample], pcs: Array, t: Array) -> _Added:
        """Samples of distinct pod containers `pcs` at times `t`, none of whose rows expires
        meanwhile; whether each one's CPU and its memory were taken, and the columns
        taken_by_rows reads."""
        cores = np.array([NAN if x[4] is None else x[4] for x in chunk], dtype=np.float64)
        request = np.array([x[5] for x in chunk], dtype=np.float64)
        usage = np.array([NAN if x[6] is None else x[6] for x in chunk], dtype=np.float64)
        return self._add_arrays(pcs, t, cores, request, usage)

    def _add_arrays(
        self, pcs: Array, t: Array, cores: Array, request: Array, usage: Array
    ) -> _Added:
        """_add_chunk of samples as arrays: CPU `cores` and memory `usage` (NaN: none), the CPU
        `request` in cores, of distinct pod containers `pcs` at times `t`."""
        s = self.settings
        rows = self.pc_row[pcs]
        restored = self.restored[rows]
        with np.errstate(invalid="ignore"):
            not_restored = ~(restored >= t)
            # CPU: each pod container's newer samples
            take = ~np.isnan(cores) & ~(cores < 0) & ~(self.last_cpu[pcs] >= t) & not_restored
            cpu_taken = take
            if take.any():
                self.last_cpu[pcs[take]] = t[take]
                r, times, c = rows[take], t[take], cores[take]
                low = s.min_cpu_sample_weight
                weights = np.where(low > request[take], low, request[take])
                buckets = find_buckets(self.cpu.buckets, c)
                self.cpu.add(r, buckets, weights, times)
                np.fmin.at(self.first, r, times)
                np.fmax.at(self.last, r, times)
                np.add.at(self.count, r, 1)
                self.daily.add(r, times, c, buckets, CPU)
            # memory: each pod container's window peaks
            take = ~np.isnan(usage) & ~(usage < 0) & not_restored & ~(self.last_mem[pcs] > t)
        if take.any():
            self._memory_peaks(pcs[take], t[take], usage[take])
            u = usage[take]
            self.daily.add(rows[take], t[take], u, find_buckets(self.memory.buckets, u), MEMORY)
        return _Added(cpu_taken.tolist(), take.tolist(), (rows, cpu_taken, cores, take, usage))

    def _memory_peaks(self, pcs: Array, t: Array, usage: Array) -> None:
        """_take_peak of usage samples (not OOM kills) for distinct pod
        containers, in order."""
        interval = self.interval[pcs]
        rows = self.pc_row[pcs]
        self.last_mem[pcs] = t
        end = self.window_end[pcs]
        end = np.where(np.isnan(end), t, end)
        inside = t < end
        old = np.maximum(self.peak[pcs], self.oom_peak[pcs])
        replace = inside & ~(old == 0) & (usage > old)
        opened = ~inside
        new_end = end + np.floor((t - end) / interval) * interval + interval
        end = np.where(opened, new_end, end)
        self.window_end[pcs] = end
        self.oom_peak[pcs[opened]] = 0.0
        changed = opened | replace
        self.peak[pcs[changed]] = usage[changed]
        # the histogram: rows with a replaced peak in rounds, the k-th change of each row in
        # round k (a row's changes in their order: the old peak out, the new one in), the
        # others in one scatter
        slow = np.isin(rows, rows[replace]) & changed
        fast = changed & ~slow
        if fast.any():
            buckets = find_buckets(self.memory.buckets, usage[fast])
            self.memory.add(rows[fast], buckets, np.ones(int(fast.sum())), end[fast])
        if not slow.any():
            return
        at = np.flatnonzero(slow)
        rank = _rank_within(rows[at])
        buckets = find_buckets(self.memory.buckets, usage[at])
        for k in range(int(rank.max()) + 1):
            this = at[rank == k]
            out = this[replace[this]]
            self.memory.subtract(rows[out], old[out], end[out])
            self.memory.add(rows[this], buckets[rank == k], np.ones(len(this)), end[this])

    def record_oom(self, w: WorkloadKey, pod: str, container: str, t: float, bytes_: float) -> bool:
        """An OOM kill of the pod container at `t` using `bytes_`: a bumped peak, unless
        older than the fresh-OOM rule allows or already in a restored checkpoint; taken or not."""
        self._expire_if_idle(w, container, t)
        pc = self._pod_container(w, pod, container)
        s = self.tuning(w).settings
        row = int(self.pc_row[pc])
        interval = float(self.interval[pc])
        last = float(self.last_mem[pc])  # the fresh-OOM rule (kubernetes/autoscaler #8548)
        if not math.isnan(last) and t < last - interval:
            return False
        used = max(bytes_, float(self.peak[pc]))
        if self.restored[row] >= t:
            return False
        self.daily.add_oom(row, t, used)
        bump = oom_bump(used, s)
        if bump < 0:
            return False
        self._take_peak(pc, row, t, bump, True)
        return True

    def _take_peak(self, pc: int, row: int, t: float, usage: float, is_oom: bool) -> None:
        """The sample's part in the open memory window."""
        self.last_mem[pc] = t
        end = float(self.window_end[pc])
        if math.isnan(end):
            end = t
            self.window_end[pc] = t
        if t < end:
            old = max(float(self.peak[pc]), float(self.oom_peak[pc]))
            if old == 0 or not usage > old:
                return
            self.memory.subtract_one(row, old, 1.0, end)
        else:
            interval = float(self.interval[pc])
            end += math.floor((t - end) / interval) * interval + interval
            self.window_end[pc] = end
            self.peak[pc] = self.oom_peak[pc] = 0.0
        self.memory.add_one(row, self.memory.buckets.find_bucket(usage), 1.0, end)
        if is_oom:
            self.oom_peak[pc] = usage
        else:
            self.peak[pc] = usage

    # Expiry ------------------------------------------------------------------------------------
    def newest_sample(self) -> float | None:
        last = self.last[self._live_rows()]
        last = last[~np.isnan(last)]
        return float(last.max()) if len(last) else None

    def expire_idle(self, now: float) -> int:
        """Drops every row idle at `now` (at its workload's idle
        time); the count."""
        expired = [
            (w, name)
            for w, containers in self.rows.items()
            for name, row in containers.items()
            if now - self.last[row] >= self.idle[row]
        ]
        for w, name in expired:
            self._drop(w, name)
        return len(expired)

    def _live_rows(self) -> Array:
        return np.array([r for c in self.rows.values() for r in c.values()], dtype=np.int64)

    def span(self, row: int) -> tuple[int, float | None, float | None]:
        """The row's CPU sample count, its first and its last sample's time."""
        return int(self.count[row]), _opt(float(self.first[row])), _opt(float(self.last[row]))

    def history_seconds(self, w: WorkloadKey) -> dict[str, float]:
        """Per container of the workload with CPU samples: from its first to its last one."""
        return {
            name: float(self.last[row] - self.first[row])
            for name, row in self.rows.get(w, {}).items()
            if not (math.isnan(self.first[row]) or math.isnan(self.last[row]))
        }

    # Checkpoints -------------------------------------------------------------------------------
    def save(self, w: WorkloadKey, container: str) -> AggregateCheckpoint:
        """checkpoint.save_aggregate of the row."""
        row = self.rows[w][container]
        return AggregateCheckpoint(
            self.cpu.save(row),
            self.memory.save(row),
            _opt(float(self.first[row])),
            _opt(float(self.last[row])),
            int(self.count[row]),
            daily=self.daily[row].save(),
        )

    def restore(self, w: WorkloadKey, container: str, cp: AggregateCheckpoint) -> None:
        """The row restored from a checkpoint (raising ValueError for a bad one), before any
        pod of the workload container is seen (as the job restores at start-up). Over a live
        row, the row and its pod containers' windows are replaced."""
        if cp.version != CHECKPOINT_VERSION:
            raise ValueError(f"checkpoint version {cp.version!r}, expected {CHECKPOINT_VERSION!r}")
        if cp.total_samples < 0:
            raise ValueError(f"checkpoint has negative sample count {cp.total_samples}")
        if container in self.rows.get(w, {}):
            kept = self.tunings.get(w)
            self._drop(w, container)
            if kept is not None:
                self.tunings[w] = kept
        row = self._row(w, container)
        try:
            self.cpu.load(row, cp.cpu)
            self.memory.load(row, cp.memory)
            if cp.daily is not None:
                self.daily[row].load(cp.daily)
        except ValueError:
            self._drop(w, container)
            raise
        last = NAN if cp.last_sample is None else cp.last_sample
        self.first[row] = NAN if cp.first_sample is None else cp.first_sample
        self.last[row] = self.restored[row] = last
        self.count[row] = cp.total_samples

    # Estimation --------------------------------------------------------------------------------
    def workloads(self) -> list[WorkloadKey]:
        return sorted_keys(self.rows)

    def views(self, workloads: Iterable[WorkloadKey]) -> dict[WorkloadKey, dict[str, RowView]]:
        """Each row of the workloads as the strategies read it, percentiles computed for all of
        them at once (the `vpa` strategy's: the settings' target, lower and upper bound)."""
        s = self.settings
        order = [(w, name, row) for w in workloads for name, row in self.rows.get(w, {}).items()]
        rows = np.array([row for _, _, row in order], dtype=np.int64)
        cpu_ps = (
            s.target_cpu_percentile,
            s.lower_bound_cpu_percentile,
            s.upper_bound_cpu_percentile,
        )
        memory_ps = (
            s.target_memory_percentile,
            s.lower_bound_memory_percentile,
            s.upper_bound_memory_percentile,
        )
        cpu = self.cpu.percentiles(rows, cpu_ps).tolist()
        memory = self.memory.percentiles(rows, memory_ps).tolist()
        cpu_empty = self.cpu.is_empty(rows).tolist()
        memory_empty = self.memory.is_empty(rows).tolist()
        first, last, count = (
            self.first[rows].tolist(),
            self.last[rows].tolist(),
            self.count[rows].tolist(),
        )
        out: dict[WorkloadKey, dict[str, RowView]] = {}
        for i, (w, name, row) in enumerate(order):
            out.setdefault(w, {})[name] = RowView(
                _Percentiles(cpu_ps, cpu[i], cpu_empty[i], self.cpu, row),
                _Percentiles(memory_ps, memory[i], memory_empty[i], self.memory, row),
                _opt(first[i]),
                _opt(last[i]),
                count[i],
                self.daily[row],
                self.retuned.get(row),
            )
        return out

    def recommend_all(
        self,
        workloads: Iterable[WorkloadKey] | None = None,
        policies_of: Callable[[WorkloadKey], list[ContainerPolicy]] | None = None,
        strategy_of: Callable[[WorkloadKey], Strategy] | None = None,
    ) -> dict[WorkloadKey, dict[str, Recommendation]]:
        """Recommendations per container of each workload (default: all; no policies, the `vpa`
        strategy), sorted; containers a policy turns off are absent. Column-wise: the `vpa`
        strategy's rows (the default's, and a policy's own settings) are estimated together,
        each settings' rows at once (VpaStrategy.propose_rows), another strategy's row by row;
        then every estimate is rounded at once, and capped by its container's policy."""
        out: dict[WorkloadKey, dict[str, Recommendation]] = {}
        todo: list[_Todo] = []
        # each strategy's settings found once, equal settings one object (the rows estimated
        # together are grouped by it): a policy's `vpa` without parameters is the default's
        tuned: dict[int, tuple[Strategy, RecommenderSettings]] = {id(VPA): (VPA, self.settings)}
        same = {self.settings: self.settings}
        for w in self.workloads() if workloads is None else workloads:
            containers = self.rows.get(w)
            if not containers:
                continue
            out[w] = {}
            policies = policies_of(w) if policies_of is not None else []
            strategy = strategy_of(w) if strategy_of is not None else VPA
            found = tuned.get(id(strategy))
            if found is None:
                s = tuning(strategy, self.settings, self.idle_after).settings
                s = same.setdefault(s, s)
                tuned[id(strategy)] = (strategy, s)  # the strategy kept: its id stays its own
            else:
                s = found[1]
            other = None if isinstance(strategy, VpaStrategy) else strategy
            n = len(containers)
            for name in sorted(containers):
                policy = policy_for_container(policies, name) if policies else _NO_POLICY
                if policy.mode != "Off":  # a container turned off is not estimated
                    todo.append(_Todo(w, name, containers[name], n, policy, s, other))
        if todo:
            rows = np.array([x.row for x in todo], dtype=np.int64)
            kept = (~(self.cpu.is_empty(rows) & self.memory.is_empty(rows))).tolist()
            todo = [x for x, k in zip(todo, kept, strict=True) if k]  # rows with history
        est, reasons = self._estimates(todo)
        final = rounded_rows(
            est,
            [int(x.settings.round_cpu_millicores) for x in todo],
            [int(x.settings.round_memory_bytes) for x in todo],
            [x.policy.integer_cpu for x in todo],
        )
        cpu, memory = final.cpu.tolist(), final.memory.tolist()  # plain ints, in one pass
        for x, reason, c, m in zip(todo, reasons, cpu, memory, strict=True):
            if reason is not None:
                e = Estimate(Resources(c[0], m[0]), Resources(c[1], m[1]), Resources(c[2], m[2]))
                rec = apply_policy(e, x.policy, reason)
                if rec is not None:
                    out[x.workload][x.name] = rec
        return out

    def _estimates(self, todo: list[_Todo]) -> tuple[Estimates, list[str | None]]:
        """The estimates of the rows, unrounded, and their reasons (None: no estimate). The
        `vpa` rows with the same settings at once, the others' one by one."""
        est = Estimates(np.zeros((len(todo), 3), np.int64), np.zeros((len(todo), 3), np.int64))
        reasons: list[str | None] = [None] * len(todo)
        groups: dict[int, list[int]] = {}  # the vpa rows by their settings (by identity)
        settings: dict[int, RecommenderSettings] = {}
        others = []
        for i, x in enumerate(todo):
            if x.other is None:
                key = id(x.settings)
                at = groups.get(key)
                if at is None:
                    at = groups[key] = []
                    settings[key] = x.settings
                at.append(i)
            else:
                others.append(i)
        for key, at in groups.items():
            s = settings[key]
            part, texts = propose_rows(self._vpa_rows([todo[i] for i in at], s), s)
            est.cpu[at], est.memory[at] = part.cpu, part.memory
            for i, text in zip(at, texts, strict=True):
                reasons[i] = text
        views = self.views({todo[i].workload: None for i in others}) if others else {}
        for i in others:
            x = todo[i]
            view = views[x.workload][x.name]
            given = StrategyInput(cast(AggregateState, view), x.containers, x.settings)
            proposal = cast(Strategy, x.other).propose(given)
            if proposal.estimate is None:
                continue
            reasons[i] = proposal.reason
            e = proposal.estimate
            est.cpu[i] = (e.target.cpu, e.lower_bound.cpu, e.upper_bound.cpu)
            est.memory[i] = (e.target.memory, e.lower_bound.memory, e.upper_bound.memory)
        return est, reasons

    def _vpa_rows(self, todo: list[_Todo], s: RecommenderSettings) -> Rows:
        """The rows as the `vpa` strategy reads them, percentiles computed at once."""
        rows = np.array([x.row for x in todo], dtype=np.int64)
        cpu_ps, memory_ps = percentile_settings(s)
        return Rows(
            self.cpu.percentiles(rows, cpu_ps),
            self.memory.percentiles(rows, memory_ps),
            self.first[rows],
            self.last[rows],
            self.count[rows],
            np.array([x.containers for x in todo], dtype=np.int64),
            [self.retuned.get(x.row) for x in todo],
        )

    def recommend(
        self,
        workload: WorkloadKey,
        policies: list[ContainerPolicy] | None = None,
        strategy: Strategy = VPA,
    ) -> dict[str, Recommendation]:
        """Recommendations per container, sorted; containers a policy
        turns off are absent."""
        found = self.recommend_all([workload], lambda _w: policies or [], lambda _w: strategy)
        return found.get(workload, {})

    def memory_bytes(self) -> int:
        """The arrays' size, the per-day counts' included (the index dicts not counted)."""
        arrays = (
            self.cpu.weights,
            self.memory.weights,
            self.first,
            self.last,
            self.count,
            self.restored,
            self.idle,
            self.cpu.hl,
            self.memory.hl,
            self.pc_row,
            self.interval,
            self.last_cpu,
            self.last_mem,
            self.window_end,
            self.peak,
            self.oom_peak,
            self.named_in,
        )
        small = sum(h.total.nbytes * 4 for h in (self.cpu, self.memory))
        return int(sum(a.nbytes for a in arrays) + small) + self.daily.nbytes()
