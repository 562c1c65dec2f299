"""benchmarks/water_level.py at a tiny size: its extender run feeds the service's profiles and
levels ahead (after a day learned, the extender's table has hours ahead), the run without them
has none, and every run it is asked for is printed. Figures are not judged here
(benchmarks/README.md)."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

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
