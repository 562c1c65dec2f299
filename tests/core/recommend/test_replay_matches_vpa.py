"""Whole traces through the recommender agree with a naive re-computation of VPA's algorithm."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.core.quantity import parse_quantity
from app.core.recommend.array_model import ArrayModel
from app.core.recommend.strategies import VPA, Strategy, configure
from app.core.recommend.trace import parse_trace, recommendations_json, replay
from app.core.recommendation import ContainerPolicy
from app.core.workload_key import WorkloadKey
from tests.support import vpa_oracle

DATA = Path(__file__).resolve().parents[2] / "data"
# More traces of the same format (Bitbrains VMs vm1.csv, vm7.csv, ...), not in the repository:
# a directory named by RIGHTSIZER_EXTRA_TRACES, where one is given.
EXTRA = os.environ.get("RIGHTSIZER_EXTRA_TRACES", "")


def ours(path: Path) -> dict[str, dict[str, dict[str, str]]]:
    with path.open(newline="") as fh:
        out = recommendations_json(replay(parse_trace(fh)))
    return {
        c["name"]: {k: c[k] for k in ("target", "lowerBound", "upperBound")}
        for c in out["containers"]  # type: ignore[attr-defined]
    }


def test_sample_trace_with_pods_request_change_and_oom() -> None:
    path = DATA / "sample-trace.csv"
    expected = vpa_oracle.recommend(path)
    assert set(expected) == {"app", "envoy"}
    assert ours(path) == expected


def test_oom_raises_the_memory_target(tmp_path: Path) -> None:
    rows = ["timestamp,container,cpu,memory,event"]
    rows += [f"{1_700_000_000 + 60 * i},app,0.1,{200 * 2**20}," for i in range(100)]
    without = tmp_path / "plain.csv"
    without.write_text("\n".join(rows) + "\n")
    rows.append(f"{1_700_000_000 + 6000},app,,{256 * 2**20},oom")
    with_oom = tmp_path / "oom.csv"
    with_oom.write_text("\n".join(rows) + "\n")
    assert ours(with_oom) == vpa_oracle.recommend(with_oom)
    assert parse_quantity(ours(with_oom)["app"]["target"]["memory"]) > parse_quantity(
        ours(without)["app"]["target"]["memory"]
    )


def test_bitbrains_trace_shipped_with_the_tests() -> None:
    path = DATA / "bitbrains-vm20.csv"
    assert ours(path) == vpa_oracle.recommend(path)


@pytest.mark.parametrize("vm", ["vm1", "vm7", "vm14"])
def test_more_bitbrains_traces(vm: str) -> None:
    """Traces from a directory outside the repository (RIGHTSIZER_EXTRA_TRACES), when given."""
    if not EXTRA:
        pytest.skip("RIGHTSIZER_EXTRA_TRACES names no directory of further traces")
    path = Path(EXTRA) / f"{vm}.csv"
    if not path.exists():
        pytest.skip(f"{path} not present on this machine")
    assert ours(path) == vpa_oracle.recommend(path)


# Per-policy settings (issue 19): a policy's `vpa` recommenderParams give what VPA's recommender
# gives when started with the same values as flags.
PARAM_OF_FLAG = {
    "target-cpu-percentile": "targetCpuPercentile",
    "target-memory-percentile": "targetMemoryPercentile",
    "recommendation-lower-bound-cpu-percentile": "lowerBoundCpuPercentile",
    "recommendation-lower-bound-memory-percentile": "lowerBoundMemoryPercentile",
    "recommendation-upper-bound-cpu-percentile": "upperBoundCpuPercentile",
    "recommendation-upper-bound-memory-percentile": "upperBoundMemoryPercentile",
    "recommendation-margin-fraction": "safetyMarginFraction",
    "pod-recommendation-min-cpu-millicores": "podMinCpuMillicores",
    "pod-recommendation-min-memory-mb": "podMinMemoryMb",
    "oom-bump-up-ratio": "oomBumpUpRatio",
    "oom-min-bump-up-bytes": "oomMinBumpUpBytes",
    "memory-aggregation-interval": "memoryAggregationIntervalSeconds",
    "cpu-histogram-decay-half-life": "cpuHistogramDecayHalfLifeSeconds",
    "memory-histogram-decay-half-life": "memoryHistogramDecayHalfLifeSeconds",
    "round-cpu-millicores": "roundCpuMillicores",
    "round-memory-bytes": "roundMemoryBytes",
}
FLAG_SETS = [
    {"target-cpu-percentile": 0.95, "target-memory-percentile": 0.5},
    {
        "target-cpu-percentile": 0.6,
        "recommendation-lower-bound-cpu-percentile": 0.2,
        "recommendation-lower-bound-memory-percentile": 0.1,
        "recommendation-upper-bound-cpu-percentile": 0.99,
        "recommendation-upper-bound-memory-percentile": 1.0,
    },
    {
        "recommendation-margin-fraction": 0.4,
        "pod-recommendation-min-cpu-millicores": 500,
        "pod-recommendation-min-memory-mb": 1000,
    },
    {"oom-bump-up-ratio": 2.5, "oom-min-bump-up-bytes": 900 * vpa_oracle.MIB},
    {"memory-aggregation-interval": 6 * 3600},
    {"cpu-histogram-decay-half-life": 4 * 3600, "memory-histogram-decay-half-life": 12 * 3600},
    {"round-cpu-millicores": 50, "round-memory-bytes": 64 * vpa_oracle.MIB},
    {"round-memory-bytes": 1},
]


def with_params(path: Path, flags: dict[str, float]) -> dict[str, dict[str, dict[str, str]]]:
    params = {PARAM_OF_FLAG[k]: v for k, v in flags.items()}
    with path.open(newline="") as fh:
        out = recommendations_json(replay(parse_trace(fh), strategy=configure("vpa", params)))
    return {
        c["name"]: {k: c[k] for k in ("target", "lowerBound", "upperBound")}
        for c in out["containers"]  # type: ignore[attr-defined]
    }


@pytest.mark.parametrize("flags", FLAG_SETS, ids=lambda f: ",".join(f))
def test_a_policys_vpa_parameters_give_what_vpas_flags_give(flags: dict[str, float]) -> None:
    path = DATA / "sample-trace.csv"
    expected = vpa_oracle.recommend(path, flags)
    assert expected != vpa_oracle.recommend(path)  # the flags change the answer on this trace
    assert with_params(path, flags) == expected


def test_vpa_parameters_on_the_bitbrains_trace() -> None:
    path = DATA / "bitbrains-vm20.csv"
    flags = {
        "target-cpu-percentile": 0.99,
        "recommendation-upper-bound-cpu-percentile": 0.99,
        "target-memory-percentile": 0.7,
        "memory-aggregation-interval": 8 * 3600,
        "round-cpu-millicores": 100,
    }
    assert with_params(path, flags) == vpa_oracle.recommend(path, flags)


def test_two_policies_in_one_model_each_get_their_own_flags() -> None:
    """The recommender keeps every workload in one model: one policy's parameters apply to its
    workload only, the other keeps the global settings."""
    path = DATA / "sample-trace.csv"
    flags = {"memory-aggregation-interval": 6 * 3600, "target-cpu-percentile": 0.5}
    tuned = configure("vpa", {PARAM_OF_FLAG[k]: v for k, v in flags.items()})
    model = ArrayModel()
    a, b = WorkloadKey("shop", "Deployment", "a"), WorkloadKey("shop", "Deployment", "b")
    with path.open(newline="") as fh:
        rows = parse_trace(fh)
    model.tune(a, tuned)
    for w in (a, b):
        for r in rows:  # interleaved as the job feeds them: every workload at each run
            if r.event == "oom":
                assert r.memory is not None
                model.record_oom(w, r.pod, r.container, r.time, r.memory)
                continue
            if r.cpu is not None:
                model.add_cpu(w, r.pod, r.container, r.time, r.cpu, r.cpu_request)
            if r.memory is not None:
                model.add_memory(w, r.pod, r.container, r.time, r.memory)

    def answer(w: WorkloadKey, strategy: Strategy) -> dict[str, dict[str, dict[str, str]]]:
        out = recommendations_json(model.recommend(w, None, strategy))
        return {
            c["name"]: {k: c[k] for k in ("target", "lowerBound", "upperBound")}
            for c in out["containers"]  # type: ignore[attr-defined]
        }

    assert answer(a, tuned) == vpa_oracle.recommend(path, flags)
    assert answer(b, VPA) == vpa_oracle.recommend(path)


def test_rounding_comes_before_integer_cpu_and_capping_as_in_vpa() -> None:
    """VPA 1.7 rounds in MapToListOfRecommendedContainerResources, then runs its post-processors:
    cpu-integer, then capping (routines/recommender_controller.go): a maxAllowed is kept exactly,
    not rounded up past."""
    path = DATA / "sample-trace.csv"
    flags = {"round-cpu-millicores": 100, "round-memory-bytes": 100 * vpa_oracle.MIB}
    caps = {"app": {"cpu": 150, "memory": 300 * vpa_oracle.MIB + 7}}
    expected = vpa_oracle.recommend(path, flags, frozenset({"envoy"}), caps)
    assert expected["app"]["target"] == {"cpu": "150m", "memory": "314572807"}
    assert expected["envoy"]["target"]["cpu"] == "1"
    policies = [
        ContainerPolicy("app", max_allowed=caps["app"]),
        ContainerPolicy("envoy", integer_cpu=True),
    ]
    params = {PARAM_OF_FLAG[k]: v for k, v in flags.items()}
    with path.open(newline="") as fh:
        recs = replay(parse_trace(fh), policies=policies, strategy=configure("vpa", params))
    out = recommendations_json(recs)
    ours_ = {
        c["name"]: {k: c[k] for k in ("target", "lowerBound", "upperBound")}
        for c in out["containers"]  # type: ignore[attr-defined]
    }
    assert ours_ == expected
