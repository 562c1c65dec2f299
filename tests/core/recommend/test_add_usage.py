"""UsageModel.add_usage takes a PodMetrics container's CPU and memory as add_cpu then add_memory
do: the same answers, the same aggregates and pod windows, whatever the samples and idle time."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.core.recommend.checkpoint import save_aggregate
from app.core.recommend.model import UsageModel
from app.core.recommend.settings import RecommenderSettings
from app.core.workload_key import WorkloadKey

S = RecommenderSettings()
WORKLOADS = [WorkloadKey("shop", "Deployment", "web"), WorkloadKey("shop", "Deployment", "api")]

samples = st.lists(
    st.tuples(
        st.sampled_from(WORKLOADS),
        st.sampled_from(["web-1", "web-2"]),
        st.sampled_from(["app", "proxy"]),
        st.sampled_from([0.0, 60.0, 3600.0, 86400.0, 9 * 86400.0, -60.0]),  # time steps
        st.one_of(st.none(), st.floats(-0.5, 8.0)),
        st.floats(0.0, 2.0),
        st.one_of(st.none(), st.floats(-1e6, 8e9)),
    ),
    max_size=40,
)


def state(m: UsageModel) -> object:
    return (
        {w: {c: save_aggregate(a) for c, a in cs.items()} for w, cs in m.aggregates.items()},
        {
            k: (p.last_cpu_sample, p.last_memory_sample, p.window_end, p.memory_peak, p.oom_peak)
            for k, p in m.pods.items()
        },
    )


@given(samples, st.sampled_from([8 * 86400.0, 3600.0, 0.0]))
def test_add_usage_is_add_cpu_then_add_memory(steps: list, idle_after: float) -> None:  # type: ignore[type-arg]
    one, two = UsageModel(S, idle_after), UsageModel(S, idle_after)
    t = 1_719_792_000.0
    for w, pod, container, step, cores, request, bytes_ in steps:
        t += step
        expected = (
            cores is not None and one.add_cpu(w, pod, container, t, cores, request),
            bytes_ is not None and one.add_memory(w, pod, container, t, bytes_),
        )
        assert two.add_usage(w, pod, container, t, cores, request, bytes_) == expected
        assert state(two) == state(one)
