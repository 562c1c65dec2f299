"""UsageModel.add_usages (a workload's samples in one call) leaves the model exactly as add_usage
called for each sample in turn does, and says which samples were taken: whatever the samples
(duplicate, older, negative or absent usage, across days and memory windows), the idle time and
half-lives, restored checkpoints' cutoffs, tuned workloads, and aggregates dropped between runs.
The per-sample path (add_usage, itself checked against add_cpu then add_memory) is the oracle."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.recommend.aggregate import AggregateState
from app.core.recommend.daily import DailyUsage
from app.core.recommend.histogram import DecayingHistogram
from app.core.recommend.model import UsageModel, UsageSample
from app.core.recommend.settings import RecommenderSettings
from app.core.recommend.strategies import Strategy, configure
from app.core.workload_key import WorkloadKey

WORKLOADS = [
    WorkloadKey("shop", "Deployment", "web"),
    WorkloadKey("shop", "Deployment", "api"),
    WorkloadKey("shop", "StatefulSet", "db"),
]
T0 = 1_719_792_000.0
DAY = 86400.0
# db is tuned by its policy: a 2-hour idle time, hourly memory windows
TUNED = configure(
    "vpa", {"memoryAggregationIntervalSeconds": 3600, "memoryAggregationIntervalCount": 2}
)


def histogram_state(h: DecayingHistogram) -> object:
    return (h.weights, h.total_weight, h.min_bucket, h.max_bucket, h.reference_time, h.half_life)


def daily_state(d: DailyUsage) -> object:
    return (d.newest, {k: v.to_json() for k, v in d.days.items()}, d.retained)


def aggregate_state(a: AggregateState) -> object:
    return (
        histogram_state(a.cpu),
        histogram_state(a.memory),
        a.first_sample,
        a.last_sample,
        a.total_samples,
        a.restored_until,
        daily_state(a.daily),
        a.retuned,
    )


def model_state(m: UsageModel) -> object:
    """Everything the model holds, floats bit for bit (a pod container's aggregate by the key it
    is found under, or its own state when no longer in the model)."""
    where = {id(a): (w, c) for w, cs in m.aggregates.items() for c, a in cs.items()}
    return (
        {w: {c: aggregate_state(a) for c, a in cs.items()} for w, cs in m.aggregates.items()},
        {
            k: (
                where.get(id(p.aggregate)) or aggregate_state(p.aggregate),
                p.settings,
                p.last_cpu_sample,
                p.last_memory_sample,
                p.window_end,
                p.memory_peak,
                p.oom_peak,
            )
            for k, p in m.pods.items()
        },
        m.tunings,
    )


times = st.sampled_from([0.0, 0.0, 15.0, 60.0, 3600.0, 7200.0, DAY, 3 * DAY, 9 * DAY, -60.0])
sample = st.tuples(
    st.sampled_from(WORKLOADS),
    st.sampled_from(["p-1", "p-2", "p-3"]),
    st.sampled_from(["app", "proxy"]),
    times,  # from the previous sample's time
    st.one_of(st.none(), st.just(0.0), st.just(-0.1), st.floats(0.0, 64.0)),
    st.sampled_from([0.0, 0.05, 0.25, 2.0]),
    st.one_of(st.none(), st.just(0.0), st.just(-1.0), st.floats(0.0, 6e10)),
)
run = st.lists(sample, max_size=30)
# between runs: a checkpoint's cutoff on an aggregate, or a workload's aggregates dropped (the
# job's garbage collection: its pod containers stay until the next run forgets them)
between = st.one_of(
    st.none(),
    st.tuples(st.just("restored"), st.sampled_from(WORKLOADS), st.floats(-DAY, DAY)),
    st.tuples(st.just("gone"), st.sampled_from(WORKLOADS)),
)


def build(s: RecommenderSettings, idle_after: float, tuned: bool) -> UsageModel:
    m = UsageModel(s, idle_after)
    if tuned:

        def strategy_of(w: WorkloadKey) -> Strategy:
            return TUNED if w.kind == "StatefulSet" else configure("vpa", {})

        m.strategy_of = strategy_of
    return m


def reference(m: UsageModel, w: WorkloadKey, batch: list[UsageSample]) -> dict[str, Any]:
    taken: dict[str, tuple[list[float], list[float]]] = {}
    for pod, container, t, cores, request, bytes_ in batch:
        cpu, memory = m.add_usage(w, pod, container, t, cores, request, bytes_)
        lists = taken.setdefault(container, ([], []))
        if cpu:
            lists[0].append(cores)  # type: ignore[arg-type]
        if memory:
            lists[1].append(bytes_)  # type: ignore[arg-type]
    return taken


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(run, between), min_size=1, max_size=4),
    st.sampled_from([8 * DAY, 3600.0, 0.0, -1.0]),
    st.sampled_from([DAY, 60.0, 3600.0]),  # CPU half-life: 60 s moves the reference often
    st.sampled_from([DAY, 600.0]),  # memory half-life
    st.booleans(),
)
def test_add_usages_leaves_the_model_as_add_usage_does(
    runs: list[Any], idle_after: float, cpu_half_life: float, memory_half_life: float, tuned: bool
) -> None:
    s = replace(
        RecommenderSettings(),
        cpu_half_life_seconds=cpu_half_life,
        memory_half_life_seconds=memory_half_life,
    )
    one, two = build(s, idle_after, tuned), build(s, idle_after, tuned)
    t = T0
    for steps, after in runs:
        batches: dict[WorkloadKey, list[UsageSample]] = {}
        for w, pod, container, step, cores, request, bytes_ in steps:
            t += step
            batches.setdefault(w, []).append((pod, container, t, cores, request, bytes_))
        for w, batch in batches.items():
            assert two.add_usages(w, batch) == reference(one, w, batch)
        assert model_state(two) == model_state(one)
        if after is not None and after[0] == "restored":
            for m in (one, two):
                for agg in m.aggregates.get(after[1], {}).values():
                    agg.restored_until = t + after[2]
        elif after is not None:
            for m in (one, two):
                m.aggregates.pop(after[1], None)
    assert model_state(two) == model_state(one)


def test_the_samples_of_a_workload_land_in_one_call_per_aggregate() -> None:
    """The batch path is the one taken for a plain run (not the one-by-one fallback): its
    histogram, days and counts match the one-by-one feed, CPU weighted by the request."""
    m, ref = UsageModel(), UsageModel()
    w = WORKLOADS[0]
    batch: list[UsageSample] = [(f"p-{i}", "app", T0 + i, 0.1 * i, 0.5, 1e8 + i) for i in range(10)]
    assert m._batchable(w, batch)
    taken = m.add_usages(w, batch)
    assert taken == reference(ref, w, batch)
    assert taken["app"] == ([0.1 * i for i in range(10)], [1e8 + i for i in range(10)])
    agg = m.aggregates[w]["app"]
    assert agg.total_samples == 10 and agg.first_sample == T0 and agg.last_sample == T0 + 9
    assert model_state(m) == model_state(ref)


def test_a_batch_reaching_past_the_idle_time_goes_sample_by_sample() -> None:
    m = UsageModel(idle_after=3600.0)
    w = WORKLOADS[0]
    m.add_usage(w, "p-1", "app", T0, 0.5, 0.5, 1e8)
    assert not m._batchable(w, [("p-1", "app", T0 + 3600.0, 0.5, 0.5, 1e8)])
    assert not m._batchable(
        w,
        [("p-2", "other", T0, 0.5, 0.5, 1e8)] * 2 + [("p-2", "other", T0 + 3600.0, 0.5, 0.5, 1e8)],
    )
    assert m._batchable(w, [("p-1", "app", T0 + 3599.0, 0.5, 0.5, 1e8)])
    assert not UsageModel(idle_after=0.0)._batchable(w, [("p-1", "app", T0, 0.5, 0.5, 1e8)])
