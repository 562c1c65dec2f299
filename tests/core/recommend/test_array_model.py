"""The array model (app/core/recommend/array_model.py): random sample streams (containers and
pods coming and going, duplicate, older, negative and absent usage, OOM kills, gaps past the idle
time, expiry, a restart from checkpoints, workloads tuned by their policy's strategy when first
seen and retuned later) fed in batches (the column-wise path: one scatter per histogram) and
sample by sample (`add_usage`, the scalar rules) give the same recommendations of every strategy
(`vpa`, tuned or not, `krr-simple`, `balanced`), reasons included, the same checkpoints with their
per-day counts, floats bit for bit, and the same samples taken. The rows themselves are checked
against the per-object DecayingHistogram (histogram.py, VPA's decaying histogram re-derived)
under any sequence of operations. (Until issue 43 removed it, the per-object UsageModel was the
oracle of the first test; VPA's own test tables, test_replay_matches_vpa.py, still are.)"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.recommend.aggregate import memory_buckets
from app.core.recommend.array_model import ArrayModel, Sample
from app.core.recommend.checkpoint import AggregateCheckpoint, load_aggregate
from app.core.recommend.histogram import DecayingHistogram, ExponentialBuckets, Histogram
from app.core.recommend.histogram_rows import HistogramRows, find_buckets
from app.core.recommend.settings import RecommenderSettings
from app.core.recommend.strategies import VPA, Strategy, configure
from app.core.recommend.taken import Taken
from app.core.recommendation import ContainerPolicy
from app.core.workload_key import WorkloadKey
from tests.core.recommend.test_histogram import _FRACTIONS, _OPERATIONS, CPU, S, _walked

WORKLOADS = [
    WorkloadKey("shop", "Deployment", "web"),
    WorkloadKey("shop", "StatefulSet", "db"),
    WorkloadKey("ops", "DaemonSet", "agent"),
]
CONTAINERS = ["app", "sidecar"]
PODS = ["a", "b", "c"]
T0 = 1_719_792_000.0
HOUR = 3600.0
# the defaults, and settings that shift references, close windows and expire within hours
SETTINGS = [
    (RecommenderSettings(), 8 * 86400.0),
    (
        RecommenderSettings(
            cpu_half_life_seconds=600.0,
            memory_half_life_seconds=900.0,
            memory_aggregation_interval_seconds=HOUR,
        ),
        6 * HOUR,
    ),
]

# what a policy may ask for: VPA's defaults, VPA with its history tuned (half-lives, memory
# interval and count, OOM bump, percentiles, margin), the window strategies
STRATEGIES: list[Strategy] = [
    VPA,
    configure(
        "vpa",
        {
            "cpuHistogramDecayHalfLifeSeconds": 1800,
            "memoryHistogramDecayHalfLifeSeconds": 7200,
            "memoryAggregationIntervalSeconds": 1800,
            "memoryAggregationIntervalCount": 5,
            "oomBumpUpRatio": 1.5,
            "oomMinBumpUpBytes": 1e8,
        },
    ),
    configure(
        "vpa",
        {"targetCpuPercentile": 0.5, "upperBoundMemoryPercentile": 0.99, "safetyMarginFraction": 0},
    ),
    configure("vpa", {"memoryAggregationIntervalSeconds": 4 * 86400}),
    configure("krr-simple"),
    configure("balanced"),
]

usage = st.one_of(
    st.none(),
    st.just(0.0),
    st.just(-1.0),
    st.floats(0.0, 8.0, allow_nan=False),
    st.sampled_from([0.01, 0.1, 1.0, 0.0105]),  # bucket edges and their neighbours
)
memory = st.one_of(
    st.none(),
    st.just(0.0),
    st.floats(0.0, 8e9, allow_nan=False),
    st.sampled_from([1e7, 2.5e8, 1.05e7]),
)
sample = st.tuples(
    st.sampled_from(range(len(WORKLOADS))),
    st.sampled_from(PODS),
    st.sampled_from(CONTAINERS),
    st.floats(-120.0, 120.0, allow_nan=False),  # around the batch's time: older samples too
    usage,
    st.sampled_from([0.0, 0.05, 0.25, 1.0]),
    memory,
)
step = st.one_of(
    st.tuples(
        st.just("batch"), st.floats(0.0, 2 * HOUR, allow_nan=False), st.lists(sample, max_size=12)
    ),
    st.tuples(st.just("gap"), st.floats(5 * HOUR, 12 * 86400.0, allow_nan=False), st.just([])),
    st.tuples(st.just("oom"), st.floats(0.0, HOUR, allow_nan=False), st.lists(sample, max_size=2)),
    st.tuples(st.just("expire"), st.just(0.0), st.just([])),
    st.tuples(st.just("restart"), st.just(0.0), st.just([])),
    st.tuples(
        st.just("tune"),
        st.just(0.0),
        st.lists(
            st.tuples(
                st.sampled_from(range(len(WORKLOADS))), st.sampled_from(range(len(STRATEGIES)))
            ),
            max_size=3,
        ),
    ),
)
# each workload's strategy when first seen (None: the model is not told)
first_strategies = st.one_of(
    st.none(),
    st.lists(
        st.sampled_from(range(len(STRATEGIES))), min_size=len(WORKLOADS), max_size=len(WORKLOADS)
    ),
)


def checkpoint_state(cp: AggregateCheckpoint) -> object:
    return (
        cp.cpu.to_json(),
        cp.memory.to_json(),
        cp.first_sample,
        cp.last_sample,
        cp.total_samples,
        cp.daily,
    )


class OneByOne(ArrayModel):
    """The model fed sample by sample (add_usage), whatever batch it is given."""

    def add_usages(self, batch: Any) -> dict[tuple[WorkloadKey, str], Taken]:
        taken: dict[tuple[WorkloadKey, str], Taken] = {}
        for x in batch:
            lists = taken.setdefault((x[0], x[2]), ([], []))
            cpu, memory = self.add_usage(*x)
            if cpu:
                lists[0].append(x[4])
            if memory:
                lists[1].append(x[6])
        return taken


def by_table(
    m: ArrayModel, batch: list[Sample], tickets: dict[Any, tuple[int, int]] | None = None
) -> dict[tuple[WorkloadKey, str], Taken]:
    """The batch given to `m` as columns (add_usage_table, as the recommender job gives a
    PodMetrics LIST), its answer as add_usages gives it. With `tickets` (each key's ticket, as
    `m` gave it after an earlier batch: some no longer hold), each sample carries its key's
    ticket as a hint, and the tickets of the pod containers it went to are kept there."""
    columns = tuple(zip(*batch, strict=True)) if batch else ((),) * 7
    if tickets is None:
        return m.add_usage_table(columns).lists()  # type: ignore[arg-type]
    hints = [tickets.get(x[:3], (-1, -1)) for x in batch]
    pcs, held = [h[0] for h in hints], [h[1] for h in hints]
    taken = m.add_usage_table(columns, (pcs, held)).lists()  # type: ignore[arg-type]
    for x, pc in zip(batch, m.last_table.tolist(), strict=True):
        if pc >= 0:
            tickets[x[:3]] = (pc, int(m.ticket_of[pc]))
    return taken


def new_checkpoints(m: ArrayModel) -> dict[tuple[WorkloadKey, str], object]:
    return {(w, c): checkpoint_state(m.save(w, c)) for w, cs in m.rows.items() for c in cs}


def assert_same(old: ArrayModel, new: ArrayModel, every_strategy: bool = False) -> None:
    assert new_checkpoints(old) == new_checkpoints(new)
    assert {w: old.recommend(w) for w in old.workloads()} == new.recommend_all()
    assert old.newest_sample() == new.newest_sample()
    assert old.tunings == new.tunings
    if every_strategy:
        for strategy in STRATEGIES[1:]:
            want = {w: old.recommend(w, None, strategy) for w in old.workloads()}
            assert want == new.recommend_all(strategy_of=always(strategy))


def always(strategy: Strategy) -> Callable[[WorkloadKey], Strategy]:
    return lambda _w: strategy


def restarted(
    old: ArrayModel, new: ArrayModel, s: RecommenderSettings, idle: float
) -> tuple[OneByOne, ArrayModel]:
    """Both models saved and restored into fresh ones, as the recommender restarts (each
    workload tuned again by its strategy, when the models are told it)."""
    old2, new2 = OneByOne(s, idle), ArrayModel(s, idle)
    old2.strategy_of, new2.strategy_of = old.strategy_of, new.strategy_of
    for w in old.workloads():
        for c in sorted(old.rows[w]):
            old2.restore(w, c, old.save(w, c))
            new2.restore(w, c, new.save(w, c))
    return old2, new2


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(SETTINGS), first_strategies, st.lists(step, max_size=25))
def test_batches_give_what_samples_one_by_one_give(
    tuned: tuple[RecommenderSettings, float], first: list[int] | None, steps: Any
) -> None:
    s, idle = tuned
    # `table` is fed the batches as columns (add_usage_table), `new` as samples, `hinted` as
    # columns with each key's ticket from the batches before (stale once a row expired)
    old, new, table = OneByOne(s, idle), ArrayModel(s, idle), ArrayModel(s, idle)
    hinted = ArrayModel(s, idle)
    tickets: dict[Any, tuple[int, int]] = {}
    models = (new, table, hinted)
    if first is not None:
        chosen = {w: STRATEGIES[i] for w, i in zip(WORKLOADS, first, strict=True)}
        old.strategy_of = chosen.__getitem__
        for m in models:
            m.strategy_of = chosen.__getitem__
    now = T0
    for kind, dt, samples in steps:
        now += dt
        if kind == "batch":
            batch: list[Sample] = [
                (WORKLOADS[w], pod, c, now + jitter, cpu, req, mem)
                for w, pod, c, jitter, cpu, req, mem in samples
            ]
            took = old.add_usages(batch)
            assert new.add_usages(batch) == took  # what each took, in order
            assert by_table(table, batch) == took
            assert by_table(hinted, batch, tickets) == took
        elif kind == "oom":
            for w, pod, c, jitter, _, _, mem in samples:
                at, used = now + jitter, mem if mem is not None else 5e8
                killed = old.record_oom(WORKLOADS[w], pod, c, at, used)
                for m in models:
                    assert m.record_oom(WORKLOADS[w], pod, c, at, used) == killed
        elif kind == "expire":
            newest = old.newest_sample()
            if newest is not None:
                dropped = old.expire_idle(newest + idle / 2)
                for m in models:
                    assert m.expire_idle(newest + idle / 2) == dropped
        elif kind == "restart":
            _, table = restarted(old, table, s, idle)
            _, hinted = restarted(old, hinted, s, idle)
            tickets = {}  # a new model: the old one's tickets are nothing to it
            old, new = restarted(old, new, s, idle)
            models = (new, table, hinted)
        elif kind == "tune":
            for w, i in samples:
                tuned_old = old.tune(WORKLOADS[w], STRATEGIES[i])
                for m in models:
                    assert m.tune(WORKLOADS[w], STRATEGIES[i]) == tuned_old
        for m in models:
            assert_same(old, m)
    for m in models:
        assert_same(old, m, every_strategy=True)


def test_hints_that_do_not_match_the_samples_are_refused() -> None:
    """A table's hints are one per sample: more or fewer are refused with both counts, even
    when every ticket holds, and the model is left as it was."""
    m = ArrayModel()
    keys = [(WorkloadKey("ns", "Deployment", "w"), f"p{i}", "app") for i in range(2)]
    batch: list[Sample] = [(w, pod, c, T0, 0.1, 0.1, 1e8) for w, pod, c in keys]
    m.add_usage_table(tuple(zip(*batch, strict=True)))  # type: ignore[arg-type]
    pcs = m.last_table.tolist()
    later = [(w, pod, c, T0 + 60, 0.2, 0.1, 2e8) for w, pod, c, *_ in batch]
    columns = tuple(zip(*later, strict=True))
    before = m.save(*keys[0][::2])
    with pytest.raises(ValueError, match="1 and 1 hints for 2 samples"):
        m.add_usage_table(columns, ([pcs[0]], [int(m.ticket_of[pcs[0]])]))  # type: ignore[arg-type]
    assert m.save(*keys[0][::2]) == before


def test_one_batch_of_many_rows_matches() -> None:
    """A batch as a PodMetrics LIST gives it: every pod container once, hundreds of rows, then a
    second run a minute later (the vectorised paths, not the per-sample fallbacks)."""
    rng = np.random.default_rng(7)
    s = RecommenderSettings()
    old, new, table = OneByOne(s), ArrayModel(s), ArrayModel(s)
    keys = [(WorkloadKey("ns", "Deployment", f"w{i // 4}"), f"p{i}", "app") for i in range(800)]
    for run in range(3):
        at = T0 + 60.0 * run
        cpu = rng.gamma(2.0, 0.2, len(keys)).tolist()
        mem = rng.gamma(3.0, 1e8, len(keys)).tolist()
        batch: list[Sample] = [
            (w, pod, c, at, cpu[i], 0.1, mem[i]) for i, (w, pod, c) in enumerate(keys)
        ]
        took = old.add_usages(batch)
        assert new.add_usages(batch) == took
        assert by_table(table, batch) == took  # columns: from run 2 on, straight to arrays
        assert_same(old, new)
        assert_same(old, table)


@pytest.mark.parametrize("seed", range(3))
def test_find_buckets_is_find_bucket(seed: int) -> None:
    """The vectorised bucket index is ExponentialBuckets.find_bucket's, edges included."""
    b = ExponentialBuckets(1000.0, 0.01)
    rng = np.random.default_rng(seed)
    edges = np.array([b.bucket_start(i) for i in range(b.num_buckets)])
    values = np.concatenate(
        [
            rng.uniform(0, 50, 5000),
            edges,
            np.nextafter(edges, np.inf),
            np.nextafter(edges, -np.inf),
            [0.0, -1.0, 1e9, 1e300],
        ]
    )
    assert find_buckets(b, values).tolist() == [b.find_bucket(v) for v in values.tolist()]


def test_rows_decay_and_shift_as_decaying_histogram() -> None:
    """Samples months apart (reference shifts), subtractions and checkpoints of one row are
    DecayingHistogram's."""
    s = replace(RecommenderSettings(), memory_half_life_seconds=3600.0)
    b = memory_buckets(s)
    h, rows = DecayingHistogram(b, 3600.0), HistogramRows(b, 3600.0, capacity=2)
    rng = np.random.default_rng(3)
    t = T0
    for i in range(300):
        t += float(rng.uniform(0, 40 * HOUR))
        value = float(rng.uniform(0, 3e9))
        if i % 7 == 3:
            h.subtract_sample_at(value, 1.0, t)
            rows.subtract_one(1, value, 1.0, t)
        else:
            h.add_sample_at(value, 1.0, t)
            rows.add([1], [b.find_bucket(value)], [1.0], [t])
        assert rows.weights[1].tolist() == h.weights
        assert (float(rows.total[1]), float(rows.ref[1])) == (h.total_weight, h.reference_time)
        assert (int(rows.low[1]), int(rows.high[1])) == (h.min_bucket, h.max_bucket)
    assert rows.save(1).to_json() == h.save().to_json()
    assert rows.percentiles([1], [0.5, 0.9, 0.95]).tolist()[0] == h.percentiles([0.5, 0.9, 0.95])
    assert rows.weights[0].tolist() == [0.0] * b.num_buckets  # the other row untouched


@pytest.mark.parametrize("error", [1e-13, -1e-13])
def test_find_buckets_when_numpy_log_rounds_otherwise(
    monkeypatch: pytest.MonkeyPatch, error: float
) -> None:
    """numpy's log may round otherwise than libm's on another machine: a value near a bucket
    edge still gets find_bucket's bucket (numpy's log made a few hundred ulps off here)."""
    b = ExponentialBuckets(1000.0, 0.01)
    edges = np.array([b.bucket_start(i) for i in range(1, b.num_buckets)])
    values = np.concatenate([edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf)])
    real_log = np.log
    monkeypatch.setattr(np, "log", lambda x: real_log(x) * (1 + error))
    assert find_buckets(b, values).tolist() == [b.find_bucket(v) for v in values.tolist()]


def test_restore_refuses_a_bad_checkpoint_and_keeps_nothing_of_it() -> None:
    """A checkpoint with impossible weights is refused as load_aggregate refuses it, naming
    what is wrong, and leaves no row behind."""
    s = RecommenderSettings()
    w = WORKLOADS[0]
    old = ArrayModel(s)
    old.add_usage(w, "a", "app", T0, 0.5, 0.1, 2e8)
    cp = old.save(w, "app")
    bad = replace(cp, memory=replace(cp.memory, bucket_weights={999: 5}))
    new = ArrayModel(s)
    with pytest.raises(ValueError, match="checkpoint bucket 999 outside"):
        load_aggregate(bad, s)
    with pytest.raises(ValueError, match="checkpoint bucket 999 outside"):
        new.restore(w, "app", bad)
    assert new.rows == {} and new.recommend_all() == {}
    new.restore(w, "app", cp)
    assert new.save(w, "app").cpu.to_json() == cp.cpu.to_json()


def test_expiry_drops_only_the_idle_rows_pod_containers() -> None:
    """Rows going idle take their pod containers with them, the others keep theirs."""
    s = RecommenderSettings()
    new = ArrayModel(s, idle_after=HOUR)
    batch: list[Sample] = [
        (w, pod, "app", T0, 0.2, 0.1, 1e8) for w in WORKLOADS[:2] for pod in PODS
    ]
    new.add_usages(batch)
    new.add_usages([(WORKLOADS[1], "a", "app", T0 + HOUR / 2, 0.2, 0.1, 1e8)])
    assert new.expire_idle(T0 + 1.2 * HOUR) == 1
    assert sorted({k[0] for k in new.pods}) == [WORKLOADS[1]]
    assert len(new.pods) == len(PODS) and len(new.pod_keys) == len(PODS)


@settings(max_examples=300, deadline=None)
@given(_OPERATIONS, st.lists(_FRACTIONS, max_size=5), st.booleans())
def test_rows_are_decaying_histograms_under_any_operations(
    ops: list[tuple[str, float, float, float]], ps: list[float], batched_subtract: bool
) -> None:
    """test_histogram's operation sequences (samples added and taken out, decays, rescales,
    ties of a running weight with a threshold) on one row of HistogramRows and on a
    DecayingHistogram: the same weights, bounds, reference and percentiles (the walk's)."""
    h = DecayingHistogram(CPU, S.cpu_half_life_seconds)
    rows = HistogramRows(CPU, S.cpu_half_life_seconds, capacity=3)
    for op, value, weight, t in ops:
        if op == "add":
            h.add_sample_at(value, weight, t)
            rows.add([2], [CPU.find_bucket(value)], [weight], [t])
        elif op == "subtract":
            h.subtract_sample_at(value, weight, t)
            if batched_subtract and weight == 1.0:
                rows.subtract([2], [value], [t])
            else:
                rows.subtract_one(2, value, weight, t)
        else:
            h.scale(value)
            rows.scale(2, value)
    assert rows.weights[2].tolist() == h.weights
    assert (int(rows.low[2]), int(rows.high[2])) == (h.min_bucket, h.max_bucket)
    ref = float(rows.ref[2])
    assert (float(rows.total[2]), None if math.isnan(ref) else ref) == (
        h.total_weight,
        h.reference_time,
    )
    expected = [_walked(h, p) for p in ps]
    assert rows.percentiles([2], ps).tolist() == [expected]
    assert rows.save(2).to_json() == h.save().to_json()


@pytest.mark.parametrize("odd", [math.nan, -1.0])
def test_rows_percentiles_of_odd_weights_are_the_walks(odd: float) -> None:
    """A NaN or negative weight among a row's walked buckets is read as the walk reads it."""
    h = Histogram(CPU)
    rows = HistogramRows(CPU, S.cpu_half_life_seconds, capacity=2)
    for value, weight in ((0.015, 3.0), (0.1, 1.0), (0.5, 2.0), (1.0, 1.0)):
        h.add_sample(value, weight)
    h.weights[CPU.find_bucket(0.1)] = odd
    rows.weights[1] = h.weights
    rows.total[1], rows.low[1], rows.high[1] = h.total_weight, h.min_bucket, h.max_bucket
    ps = [0.1, 0.5, 0.9, math.nan]
    got = rows.percentiles([0, 1], ps).tolist()
    assert got[0] == [0.0] * len(ps)
    assert got[1] == [_walked(h, p) for p in ps]


@pytest.mark.parametrize("batched", [True, False])
def test_subtracting_nearly_all_of_a_bucket_empties_it(batched: bool) -> None:
    """A subtraction within epsilon of a bucket's weight takes all of it (never leaving a
    crumb), as Histogram.subtract_sample does, vectorised or not."""
    h = DecayingHistogram(CPU, S.cpu_half_life_seconds)
    rows = HistogramRows(CPU, S.cpu_half_life_seconds, capacity=1)
    for value, weight in ((0.5, 1.0 + CPU.epsilon / 2), (2.0, 1.0)):
        h.add_sample_at(value, weight, T0)
        rows.add([0], [CPU.find_bucket(value)], [weight], [T0])
    h.subtract_sample_at(0.5, 1.0, T0)
    if batched:
        rows.subtract([0], [0.5], [T0])
    else:
        rows.subtract_one(0, 0.5, 1.0, T0)
    assert h.weights[CPU.find_bucket(0.5)] == 0.0
    assert rows.weights[0].tolist() == h.weights
    assert (float(rows.total[0]), int(rows.low[0])) == (h.total_weight, h.min_bucket)


def test_a_row_expiring_within_a_batch_drops_its_workloads_tuning_first() -> None:
    """A batch whose first sample expires a tuned workload's only row, then brings a new
    container of it: sample by sample, the expiry drops the workload's tuning before the new
    row is made, which then takes the workload's strategy afresh; the array model too."""
    s = RecommenderSettings()
    w = WORKLOADS[0]
    old, new = OneByOne(s), ArrayModel(s)
    old.strategy_of = new.strategy_of = lambda _: VPA
    old.add_usages([(w, "a", "app", T0, 0.5, 0.1, 2e8)])
    new.add_usages([(w, "a", "app", T0, 0.5, 0.1, 2e8)])
    tuned = STRATEGIES[1]  # an idle time of 2.5 hours
    assert old.tune(w, tuned) and new.tune(w, tuned)
    later = T0 + 3 * HOUR
    old.add_usages(
        [(w, "a", "app", later, 0.5, 0.1, 2e8), (w, "b", "sidecar", later, 0.2, 0.1, 1e8)]
    )
    new.add_usages(
        [(w, "a", "app", later, 0.5, 0.1, 2e8), (w, "b", "sidecar", later, 0.2, 0.1, 1e8)]
    )
    assert old.tunings == {} and new.tunings == {}
    assert_same(old, new, every_strategy=True)


@pytest.mark.parametrize("age", [0.4 * HOUR, HOUR])
def test_a_tuned_memory_interval_judges_an_ooms_age(age: float) -> None:
    """The fresh-OOM rule measures an OOM's age from the pod container's last memory sample in
    its workload's memory interval (half an hour here, the policy's), not the model's day."""
    s = RecommenderSettings()
    w = WORKLOADS[0]
    old, new = OneByOne(s), ArrayModel(s)
    old.strategy_of = new.strategy_of = lambda _: STRATEGIES[1]
    old.add_usages([(w, "a", "app", T0, 0.5, 0.1, 2e8)])
    new.add_usages([(w, "a", "app", T0, 0.5, 0.1, 2e8)])
    taken = old.record_oom(w, "a", "app", T0 - age, 3e8)
    assert taken is (age < HOUR / 2)
    assert new.record_oom(w, "a", "app", T0 - age, 3e8) is taken
    assert_same(old, new, every_strategy=True)


def test_workloads_of_different_strategies_and_policies_estimated_together() -> None:
    """One recommend_all over workloads of every strategy (two `vpa` with their own settings),
    with container policies (integer CPU, bounds, a container turned off), gives each workload
    what it gets alone: the rows grouped by settings and strategy go back to their own."""
    m = ArrayModel()
    ws = [WorkloadKey("a", "Deployment", f"w{i}") for i in range(2 * len(STRATEGIES))]
    for step in range(30):
        t = 1_700_000_000.0 + 3600.0 * step
        for i, w in enumerate(ws):
            for c in ("app", "side"):
                m.add_cpu(w, f"{w.name}-1", c, t, 0.01 * (i + 1) * (1 + step % 3), 0.5)
                m.add_memory(w, f"{w.name}-1", c, t, 1e7 * (i + 1) * (1 + step % 5))
    strategy = {w: STRATEGIES[i % len(STRATEGIES)] for i, w in enumerate(ws)}
    policies = {
        w: [
            [],
            [ContainerPolicy("app", integer_cpu=True)],
            [ContainerPolicy("*", max_allowed={"cpu": 30}, min_allowed={"memory": 5 * 10**8})],
            [ContainerPolicy("side", mode="Off")],
        ][i % 4]
        for i, w in enumerate(ws)
    }
    together = m.recommend_all(ws, policies.__getitem__, strategy.__getitem__)
    alone = {w: m.recommend(w, policies[w], strategy[w]) for w in ws}
    assert together == alone
    assert all("side" not in together[w] for i, w in enumerate(ws) if i % 4 == 3)  # Off
    assert together[ws[1]]["app"].target.cpu % 1000 == 0  # integer CPU (a vpa strategy)
    assert sum(len(r) for r in together.values()) > len(ws)  # most rows recommended


def test_rows_of_equal_settings_are_estimated_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workloads whose policies each configure `vpa` (each its own strategy object) share one
    pass when their settings are equal; other settings make a pass of their own."""
    import app.core.recommend.array_model as array_model
    from app.core.recommend.strategies import vpa

    passes: list[int] = []
    real = vpa.propose_rows

    def counted(rows: Any, s: RecommenderSettings) -> Any:
        passes.append(len(rows.count))
        return real(rows, s)

    monkeypatch.setattr(array_model, "propose_rows", counted)
    m = ArrayModel()
    ws = [WorkloadKey("a", "Deployment", f"w{i}") for i in range(6)]
    for w in ws:
        m.add_cpu(w, f"{w.name}-1", "app", 1_700_000_000.0, 0.2, 0.5)
    own = {w: configure("vpa", {}) for w in ws[:4]}  # the default settings, 4 objects
    own.update({w: configure("vpa", {"safetyMarginFraction": 0.1}) for w in ws[4:]})
    together = m.recommend_all(ws, None, own.__getitem__)
    assert sorted(passes) == [2, 4]
    assert together == {w: m.recommend(w, None, own[w]) for w in ws}
