"""Workloads' daily profiles and nodes' levels ahead (app.core.placement.profile, .ahead)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.placement.ahead import with_ahead
from app.core.placement.profile import (
    DAY,
    MEMORY,
    SLOT_SECONDS,
    SLOTS,
    DailyProfile,
    Profiles,
    node_ahead,
    slot_of,
)
from app.core.placement.windows import NodeLevel

GI = 1 << 30
MIDNIGHT = 20 * DAY  # a day's start, UTC


def learned(usage: list[float], start: float = MIDNIGHT) -> DailyProfile:
    """A profile with a sample in each slot: usage[slot] millicores and as many bytes."""
    p = DailyProfile.empty()
    for s in range(SLOTS):
        p.fold(start + s * SLOT_SECONDS, usage[s], usage[s])
    return p


def test_slots_are_quarters_of_an_hour_of_the_utc_day() -> None:
    assert SLOTS == 96
    assert slot_of(MIDNIGHT) == 0 and slot_of(MIDNIGHT + 899.9) == 0
    assert slot_of(MIDNIGHT + 900) == 1 and slot_of(MIDNIGHT - 1) == SLOTS - 1


def test_nothing_ahead_until_every_slot_of_the_day_had_a_sample() -> None:
    p = DailyProfile.empty()
    for s in range(SLOTS - 1):
        p.fold(MIDNIGHT + s * SLOT_SECONDS, 100.0, 1.0)
    assert not p.complete and p.ahead(MIDNIGHT, 4) is None
    p.fold(MIDNIGHT + (SLOTS - 1) * SLOT_SECONDS, 100.0, 1.0)
    assert p.complete and p.ahead(MIDNIGHT, 4) is not None


def test_ahead_reads_the_next_slots_across_midnight() -> None:
    p = learned([float(s) for s in range(SLOTS)])
    cpu, memory = p.ahead(MIDNIGHT + DAY - 2 * SLOT_SECONDS + 10, 4)  # type: ignore[misc]
    assert cpu.tolist() == [94.0, 95.0, 0.0, 1.0] and memory.tolist() == cpu.tolist()


def test_a_slot_is_a_mean_that_forgets_by_time_not_by_count() -> None:
    p = DailyProfile.empty()
    p.fold(MIDNIGHT + 10, 100.0, 0.0)
    p.fold(MIDNIGHT + 20, 300.0, 0.0)  # the same slot, 10 s later: nearly equal weights
    assert p.cpu[0] == pytest.approx(200.0, rel=1e-4)
    p.fold(MIDNIGHT + 20, 1e9, 0.0)  # no newer than the slot's newest: the same read again
    assert p.cpu[0] == pytest.approx(200.0, rel=1e-4)
    q = DailyProfile.empty()
    q.fold(MIDNIGHT + 10, 100.0, 0.0)
    q.fold(MIDNIGHT + 10 + MEMORY, 300.0, 0.0)  # a week later: the old sample weighs 1/e
    old = math.exp(-1)
    assert q.cpu[0] == pytest.approx((100.0 * old + 300.0) / (old + 1.0))


def test_a_run_folds_each_workloads_usage_per_pod() -> None:
    profiles = Profiles()
    at = MIDNIGHT + 100
    profiles.fold_run(
        [
            ("web", "shop", "web-1", at, 0.2, 100.0),  # two containers of one pod
            ("web", "shop", "web-1", at, 0.1, None),  # memory not reported: 0
            ("web", "shop", "web-2", at, 0.5, 300.0),
            ("db", "shop", "db-0", at - 5, 1.0, 1000.0),
        ]
    )
    web = profiles.by_workload["web"]
    assert web.cpu[0] == pytest.approx(400.0) and web.memory[0] == pytest.approx(200.0)
    assert profiles.by_workload["db"].cpu[0] == pytest.approx(1000.0)
    assert profiles.workload_of_pod == {
        ("shop", "web-1"): "web",
        ("shop", "web-2"): "web",
        ("shop", "db-0"): "db",
    }
    profiles.fold_run([("db", "shop", "db-1", at + 60, 1.0, 1.0)])
    assert profiles.workload_of_pod == {("shop", "db-1"): "db"}  # the pods of the last run
    assert profiles.forget(["db"]) == 1 and list(profiles.by_workload) == ["db"]


def test_a_nodes_level_ahead_moves_by_its_pods_changes() -> None:
    changes = [np.array([0.0, 100.0, -50.0]), np.array([0.0, 300.0, 0.0])]
    assert node_ahead(0.5, 1000.0, changes) == pytest.approx((0.5, 0.9, 0.45))
    assert node_ahead(0.5, 1000.0, []) == ()


def level(name: str, cpu: float, memory: float) -> NodeLevel:
    return NodeLevel(name, 4000, 16 * GI, (cpu,) * 3, (memory,) * 3, MIDNIGHT, cpu, memory)


def test_each_nodes_level_ahead_comes_from_the_profiles_of_the_pods_it_runs() -> None:
    profiles = Profiles()
    evening = [100.0] * 62 + [1100.0] * 34  # 100m a pod all day, 1 core more from 15:30
    profiles.by_workload["batch"] = learned(evening)
    profiles.by_workload["young"] = DailyProfile.empty()  # less than a day: nothing known
    profiles.workload_of_pod = {
        ("ns", "b-1"): "batch",
        ("ns", "b-2"): "batch",
        ("ns", "y"): "young",
    }
    at = MIDNIGHT + 15 * 3600  # 15:00: the rise is half an hour ahead
    nodes = [level("a", 0.2, 0.1), level("b", 0.2, 0.1), level("c", 0.2, 0.1)]
    running = [("a", "ns", "b-1"), ("a", "ns", "b-2"), ("b", "ns", "y"), ("c", "ns", "unknown")]
    a, b, c = with_ahead([dataclass_at(n, at) for n in nodes], running, profiles, 3)
    # one level an hour, its four slots' mean: 2 pods x 1000m / 4000m from the third slot on
    assert a.cpu_ahead == pytest.approx((0.2 + 0.5 / 2, 0.7, 0.7))
    rise = 2000 / (16 * GI)
    assert a.memory_ahead == pytest.approx((0.1 + rise / 2, 0.1 + rise, 0.1 + rise))
    assert b.cpu_ahead == () and c.cpu_ahead == ()  # no pod with a whole day learned
    assert with_ahead(nodes, running, profiles, 0) == nodes


def dataclass_at(n: NodeLevel, at: float) -> NodeLevel:
    return dataclasses.replace(n, metrics_at=at)


@given(st.lists(st.floats(0, 1e4), min_size=SLOTS, max_size=SLOTS), st.integers(1, SLOTS))
def test_a_learned_day_is_read_back_as_it_was(usage: list[float], slots: int) -> None:
    p = learned(usage)
    cpu, _ = p.ahead(MIDNIGHT, slots)  # type: ignore[misc]
    assert cpu.tolist() == pytest.approx(usage[:slots])
