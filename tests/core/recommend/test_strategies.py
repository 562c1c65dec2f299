"""The strategy registry: names, parameters checked field by field, `vpa` exactly VPA's."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest

from app.core.recommend.aggregate import AggregateState
from app.core.recommend.array_model import ArrayModel
from app.core.recommend.estimator import estimate
from app.core.recommend.strategies import NAMES, REGISTRY, StrategyInvalid, configure
from app.core.recommend.trace import TRACE_WORKLOAD, parse_trace, replay
from app.core.workload_key import WorkloadKey

DATA = Path(__file__).resolve().parents[2] / "data"


def test_the_registry_has_vpa_krr_simple_and_balanced() -> None:
    assert NAMES == ("vpa", "krr-simple", "balanced")
    assert configure(None).name == "vpa"
    for name in NAMES:
        s = configure(name)
        assert s.name == name
        assert dict(s.params) == {
            p.name: p.default for p in REGISTRY[name].params if p.default is not None
        }


def test_an_unknown_strategy_is_named() -> None:
    with pytest.raises(StrategyInvalid, match="unknown recommender 'goldilocks'") as e:
        configure("goldilocks")
    assert e.value.errors[0][0] is None


@pytest.mark.parametrize(
    ("name", "params", "field", "message"),
    [
        ("vpa", {"cpuPercentile": 90}, "cpuPercentile", "unknown parameter"),
        ("vpa", {"targetCpuPercentile": 90}, "targetCpuPercentile", "at most 1"),
        ("vpa", {"targetMemoryPercentile": 0}, "targetMemoryPercentile", "greater than 0"),
        ("vpa", {"oomBumpUpRatio": 0.9}, "oomBumpUpRatio", "at least 1"),
        (
            "vpa",
            {"memoryAggregationIntervalSeconds": 0},
            "memoryAggregationIntervalSeconds",
            "at least 1",
        ),
        ("vpa", {"memoryAggregationIntervalCount": 2.5}, "memoryAggregationIntervalCount", "whole"),
        (
            "vpa",
            {"cpuHistogramDecayHalfLifeSeconds": 0},
            "cpuHistogramDecayHalfLifeSeconds",
            "greater than 0",
        ),
        ("vpa", {"safetyMarginFraction": -0.1}, "safetyMarginFraction", "at least 0"),
        (
            "vpa",
            {"targetCpuPercentile": 0.4, "lowerBoundCpuPercentile": 0.5},
            "targetCpuPercentile",
            "at least lowerBoundCpuPercentile",
        ),
        (
            "vpa",
            {"targetMemoryPercentile": 0.99, "upperBoundMemoryPercentile": 0.95},
            "targetMemoryPercentile",
            "at most upperBoundMemoryPercentile",
        ),
        (
            "vpa",
            {"lowerBoundCpuPercentile": 0.9, "upperBoundCpuPercentile": 0.8},
            "lowerBoundCpuPercentile",
            "at most upperBoundCpuPercentile",
        ),
        ("krr-simple", {"roundCpuMillicores": 0}, "roundCpuMillicores", "at least 1"),
        ("balanced", {"roundMemoryBytes": 1.5}, "roundMemoryBytes", "whole number"),
        ("krr-simple", {"cpuPercentile": 0}, "cpuPercentile", "greater than 0"),
        ("krr-simple", {"cpuPercentile": 100.5}, "cpuPercentile", "at most 100"),
        ("krr-simple", {"cpuPercentile": "95"}, "cpuPercentile", "must be a number"),
        ("krr-simple", {"memoryBufferPercentage": 0}, "memoryBufferPercentage", "greater than 0"),
        ("krr-simple", {"pointsRequired": 0}, "pointsRequired", "at least 1"),
        ("krr-simple", {"pointsRequired": 1.5}, "pointsRequired", "whole number"),
        ("krr-simple", {"historyDuration": 337}, "historyDuration", "at most 336"),
        ("krr-simple", {"useOomkillData": "yes"}, "useOomkillData", "true or false"),
        ("krr-simple", {"oomMemoryBufferPercentage": -1}, "oomMemoryBufferPercentage", "at least"),
        ("krr-simple", {"cpuMin": True}, "cpuMin", "must be a number"),
        ("krr-simple", {"cpu_percentile": 95}, "cpu_percentile", "unknown parameter"),
        ("balanced", {"memoryTimeAboveWeight": 0}, "memoryTimeAboveWeight", "greater than 0"),
        ("balanced", {"memoryMarginPercentage": float("nan")}, "memoryMarginPercentage", "finite"),
    ],
)
def test_a_bad_parameter_is_rejected_naming_it(
    name: str, params: dict[str, object], field: str, message: str
) -> None:
    with pytest.raises(StrategyInvalid) as e:
        configure(name, params)
    assert [f for f, _ in e.value.errors] == [field]
    assert message in e.value.errors[0][1]


def test_every_bad_parameter_is_reported_at_once() -> None:
    with pytest.raises(StrategyInvalid) as e:
        configure("krr-simple", {"cpuPercentile": -1, "memMin": -1, "x": 1})
    assert sorted(f or "" for f, _ in e.value.errors) == ["cpuPercentile", "memMin", "x"]


def test_given_parameters_replace_the_defaults() -> None:
    s = configure("krr-simple", {"cpuPercentile": 90, "useOomkillData": True})
    assert s.params["cpuPercentile"] == 90.0 and s.params["useOomkillData"] is True
    assert s.params["memoryBufferPercentage"] == 15.0


def test_vpa_is_the_estimator_exactly_and_says_how() -> None:
    with (DATA / "bitbrains-vm20.csv").open() as fh:
        rows = parse_trace(fh)
    model = ArrayModel()
    default = replay(rows, model=model)
    named = model.recommend(TRACE_WORKLOAD, None, configure("vpa"))
    assert default == named
    agg = model.views([TRACE_WORKLOAD])[TRACE_WORKLOAD]["vm"]
    est = estimate(cast(AggregateState, agg), 1, model.settings)
    assert named["vm"].uncapped_target.cpu == est.target.cpu  # CPU is not rounded by default
    assert named["vm"].reason.startswith("vpa: CPU p90 of usage (half-life 24h), memory p90")
    assert "confidence" in named["vm"].reason


def test_a_row_at_the_pod_minimum_says_so_with_its_share() -> None:
    """Rows estimated together each name their own share of the pod minimum: one container
    takes it whole, each of two half; a row above it says nothing of it."""
    m = ArrayModel()
    one, two = WorkloadKey("a", "Deployment", "one"), WorkloadKey("a", "Deployment", "two")
    for i in range(10):
        t = 1_700_000_000.0 + 60 * i
        m.add_cpu(one, "one-1", "app", t, 0.001, 0.1)
        m.add_memory(one, "one-1", "app", t, 1e6)
        for c in ("app", "side"):
            m.add_cpu(two, "two-1", c, t, 0.001 if c == "app" else 2.0, 0.1)
            m.add_memory(two, "two-1", c, t, 1e6 if c == "app" else 1e9)
    recs = m.recommend_all()
    assert recs[one]["app"].reason.endswith("; pod minimum CPU 25m, memory 250Mi")
    assert recs[two]["app"].reason.endswith("; pod minimum CPU 12m, memory 125Mi")
    assert "pod minimum" not in recs[two]["side"].reason
