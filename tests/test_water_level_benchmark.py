"""benchmarks/water_level.py at a tiny size: its extender run feeds the service's profiles and
levels ahead (after a day learned, the extender's table has hours ahead), the run without them
has none, every run it is asked for is printed, and its noisy usage (--noise, --day-jitter) is
what the run's pods use and its profiles learn. Figures are not judged here
(benchmarks/README.md)."""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from app.core.placement.profile import Profiles

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def water_level(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # it imports water_level_oracle
    import water_level as module

    return module


def args(**changes: object) -> argparse.Namespace:
    base = {
        "nodes": 4,
        "days": 1.1,
        "fill": 0.6,
        "weight": 5,
        "seed": 45,
        "window_weights": [0.5, 0.3, 0.2],
        "min_weight": 1.0,
        "threshold": 0.9,
        "oracle_horizon": 6.0,
        "ahead_hours": 3,
        "ahead_weight": 1.0,
        "spread_weight": 0.8,
        "spread_memory_weight": 0.3,
        "noise": 0.0,
        "day_jitter": 0.0,
    }
    base.update(changes)
    return argparse.Namespace(**base)


def test_the_extender_run_scores_the_levels_ahead_its_profiles_give(
    water_level: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    tables = []
    real = water_level.LevelTable

    def recording(levels: Any, options: Any) -> Any:
        table = real(levels, options)
        tables.append(table)
        return table

    monkeypatch.setattr(water_level, "LevelTable", recording)
    result = water_level.run("extender", args())
    assert result["placed"] > 0 and result["cpu_spread"]
    assert tables[0].hours == 0  # no profile has a whole day yet
    assert tables[-1].hours == 3  # a day learned: every node has its hours ahead
    tables.clear()
    water_level.run("windows", args())
    assert tables and all(t.hours == 0 for t in tables)


def test_the_latency_run_gives_its_nodes_hours_ahead(water_level: ModuleType) -> None:
    out = water_level.latency(20, 3, 6)
    assert set(out) == {"filter", "prioritize"} and out["prioritize"]["p50"] > 0


def fed(water_level: ModuleType, monkeypatch: pytest.MonkeyPatch, **changes: object) -> Any:
    """The extender run's result and the CPU each pod reported to its profiles:
    {(workload, time): {pod: millicores}}."""
    seen: dict[tuple[str, float], dict[str, float]] = defaultdict(dict)

    class Recording(Profiles):  # the service's, as the benchmark feeds them
        def fold_run(self, usage: Any) -> None:
            rows = list(usage)
            for w, _, pod, t, cores, _ in rows:
                seen[(w, t)][pod] = cores * 1000
            super().fold_run(rows)

    monkeypatch.setattr(water_level, "Profiles", Recording)
    return water_level.run("extender", args(**changes)), seen


def alike(seen: dict[tuple[str, float], dict[str, float]]) -> bool:
    """Every workload's pods used the same at each time."""
    return all(len(set(cpu.values())) == 1 for cpu in seen.values())


def day_on_day(seen: dict[tuple[str, float], dict[str, float]], day: float) -> list[float]:
    """Each workload's usage a day later over its usage then, at every time seen both days."""
    return [
        next(iter(seen[w, t + day].values())) / next(iter(cpu.values()))
        for (w, t), cpu in seen.items()
        if (w, t + day) in seen
    ]


def test_usage_without_noise_repeats_every_day_the_same_for_every_pod(
    water_level: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, seen = fed(water_level, monkeypatch)
    assert result["noise_free"] == [] and alike(seen)
    ratios = day_on_day(seen, water_level.DAY)
    assert ratios and ratios == pytest.approx([1.0] * len(ratios))


def test_noise_makes_each_pods_usage_its_own_each_minute_the_same_in_every_run(
    water_level: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, quiet = fed(water_level, monkeypatch)
    result, noisy = fed(water_level, monkeypatch, noise=0.3)
    assert not alike(noisy)
    ratios = [
        cpu / quiet[key][pod] for key, pods in noisy.items() for pod, cpu in pods.items()
    ]  # the same pods, ids and times in both runs: each pod's factor at each minute
    assert len({round(r, 9) for r in ratios}) > 0.99 * len(ratios)  # drawn per pod and minute
    assert 0.97 < sum(ratios) / len(ratios) < 1.03  # of mean 1
    assert max(ratios) > 1.5 and min(ratios) < 0.6
    assert result["noise_free"] and result["noise_free"] != result["cpu_spread"]
    assert fed(water_level, monkeypatch, noise=0.3)[1] == noisy  # seeded: every run the same


def test_day_jitter_makes_each_day_differ_from_the_one_before(
    water_level: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, seen = fed(water_level, monkeypatch, day_jitter=0.3)
    assert alike(seen)  # no noise: a workload's pods alike
    ratios = day_on_day(seen, water_level.DAY)
    assert ratios and all(r != pytest.approx(1.0) for r in ratios)
    assert max(ratios) > 1.1 and min(ratios) < 0.9  # some workloads busier, others quieter
