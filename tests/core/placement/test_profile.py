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
    Profiles,
    node_ahead,
    slot_of,
)
from app.core.placement.windows import NodeLevel, fold

GI = 1 << 30
MIDNIGHT = 20 * DAY  # a day's start, UTC


def learned(usage: list[float], key: str = "w", profiles: Profiles | None = None) -> Profiles:
    """Profiles where workload `key` (one pod, `key`-0) had a sample in each slot of a day:
    usage[slot] millicores and as many bytes."""
    profiles = profiles if profiles is not None else Profiles()
    for s in range(SLOTS):
        profiles.fold_run(
            [(key, "ns", f"{key}-0", MIDNIGHT + s * SLOT_SECONDS, usage[s] / 1000, usage[s])]
        )
    return profiles


def test_slots_are_quarters_of_an_hour_of_the_utc_day() -> None:
    assert SLOTS == 96
    assert slot_of(MIDNIGHT) == 0 and slot_of(MIDNIGHT + 899.9) == 0
    assert slot_of(MIDNIGHT + 900) == 1 and slot_of(MIDNIGHT - 1) == SLOTS - 1


def test_nothing_ahead_until_every_slot_of_the_day_had_a_sample() -> None:
    profiles = Profiles()
    for s in range(SLOTS - 1):
        profiles.fold_run([("w", "ns", "p", MIDNIGHT + s * SLOT_SECONDS, 0.1, 1.0)])
    p = profiles.profile("w")
    assert p is not None and not p.complete and p.ahead(MIDNIGHT, 4) is None
    profiles.fold_run([("w", "ns", "p", MIDNIGHT + (SLOTS - 1) * SLOT_SECONDS, 0.1, 1.0)])
    assert p.complete and p.ahead(MIDNIGHT, 4) is not None  # a view of the row: it follows


def test_ahead_reads_the_next_slots_across_midnight() -> None:
    p = learned([float(s) for s in range(SLOTS)]).profile("w")
    assert p is not None
    cpu, memory = p.ahead(MIDNIGHT + DAY - 2 * SLOT_SECONDS + 10, 4)  # type: ignore[misc]
    assert cpu.tolist() == pytest.approx([94.0, 95.0, 0.0, 1.0]) and memory.tolist() == cpu.tolist()


def test_a_slot_is_a_mean_that_forgets_by_time_not_by_count() -> None:
    profiles = Profiles()
    profiles.fold_run([("w", "ns", "p", MIDNIGHT + 10, 0.1, 0.0)])
    profiles.fold_run([("w", "ns", "p", MIDNIGHT + 20, 0.3, 0.0)])  # 10 s later: ~equal weights
    p = profiles.profile("w")
    assert p is not None and p.cpu[0] == pytest.approx(200.0, rel=1e-4)
    profiles.fold_run([("w", "ns", "p", MIDNIGHT + 20, 1e6, 0.0)])  # the same read again
    assert p.cpu[0] == pytest.approx(200.0, rel=1e-4)
    profiles.fold_run([("q", "ns", "p", MIDNIGHT + 10, 0.1, 0.0)])
    profiles.fold_run([("q", "ns", "p", MIDNIGHT + 10 + MEMORY, 0.3, 0.0)])  # a week later
    old = math.exp(-1)  # the old sample weighs 1/e of the new one
    q = profiles.profile("q")
    assert q is not None and q.cpu[0] == pytest.approx((100.0 * old + 300.0) / (old + 1.0))


def test_a_run_folds_each_workloads_usage_per_pod() -> None:
    profiles = Profiles()
    at = MIDNIGHT + 100
    profiles.fold_run(
        [
            ("web", "shop", "web-1", at, 0.2, 100.0),  # two containers of one pod
            ("web", "shop", "web-1", at, 0.1, None),  # memory not reported: 0
            ("web", "shop", "web-2", at, 0.5, 300.0),
            ("db", "shop", "db-0", at - 5, 1.0, 1000.0),
            ("web", "shop", "web-3", at, 0.4, 200.0),  # the same workload again, later
        ]
    )
    web, db = profiles.profile("web"), profiles.profile("db")
    assert web is not None and db is not None
    assert web.cpu[0] == pytest.approx(400.0) and web.memory[0] == pytest.approx(200.0)
    assert db.cpu[0] == pytest.approx(1000.0) and len(profiles) == 2
    assert profiles.workload_of_pod == {
        ("shop", "web-1"): "web",
        ("shop", "web-2"): "web",
        ("shop", "db-0"): "db",
        ("shop", "web-3"): "web",
    }
    profiles.fold_run([("db", "shop", "db-1", at + 60, 1.0, 1.0)])
    assert profiles.workload_of_pod == {("shop", "db-1"): "db"}  # the pods of the last run
    assert profiles.forget(["db"]) == 1 and list(profiles.index) == ["db"]
    assert profiles.profile("web") is None
    profiles.fold_run([("api", "shop", "api-0", at, 0.7, 7.0)])  # takes the freed row, empty
    api = profiles.profile("api")
    assert api is not None and api.cpu[0] == pytest.approx(700.0)
    assert int((api.weight > 0).sum()) == 1


def test_many_workloads_fold_as_each_alone() -> None:
    """The run folded column-wise (and the rows grown past their first size) gives each
    workload what a run of its own samples gives it."""
    together = Profiles()
    run = [
        (f"w{i}", "ns", f"p{i}-{j}", MIDNIGHT + i, 0.001 * (i + j), float(i))
        for i in range(150)
        for j in range(3)
    ]
    together.fold_run(run)
    for i in range(150):
        alone = Profiles()
        alone.fold_run([s for s in run if s[0] == f"w{i}"])
        a, b = together.profile(f"w{i}"), alone.profile(f"w{i}")
        assert a is not None and b is not None
        assert a.cpu.tolist() == b.cpu.tolist() and a.seen_at.tolist() == b.seen_at.tolist()


def test_a_nodes_level_ahead_moves_by_its_pods_changes() -> None:
    change = np.array([0.0, 100.0, -50.0]) + np.array([0.0, 300.0, 0.0])  # two pods' changes
    assert node_ahead(0.5, 1000.0, change) == pytest.approx((0.5, 0.9, 0.45))
    assert node_ahead(0.5, 0.0, change) == ()  # no allocatable: no level


def level(name: str, cpu: float, memory: float) -> NodeLevel:
    return NodeLevel(name, 4000, 16 * GI, (cpu,) * 3, (memory,) * 3, MIDNIGHT, cpu, memory)


def test_each_nodes_level_ahead_comes_from_the_profiles_of_the_pods_it_runs() -> None:
    evening = [100.0] * 62 + [1100.0] * 34  # 100m a pod all day, 1 core more from 15:30
    profiles = learned(evening, "batch")
    at = MIDNIGHT + DAY + 15 * 3600  # 15:00 the next day: the rise is half an hour ahead
    profiles.fold_run(  # this run: batch's two pods as its profile has them, a young workload
        [
            ("batch", "ns", "b-1", at, 0.1, 100.0),
            ("batch", "ns", "b-2", at, 0.1, 100.0),
            ("young", "ns", "y", at, 0.5, 100.0),  # less than a day: nothing known
        ]
    )
    nodes = [level("a", 0.2, 0.1), level("b", 0.2, 0.1), level("c", 0.2, 0.1)]
    running = [  # long started (or no start time known): all in the 15-minute level
        ("a", "ns", "b-1", at - DAY),
        ("a", "ns", "b-2", None),
        ("b", "ns", "y", at - DAY),
        ("c", "ns", "unknown", at - DAY),
    ]
    a, b, c = with_ahead([dataclass_at(n, at) for n in nodes], running, profiles, 3)
    # one level an hour, its four slots' mean: 2 pods x 1000m / 4000m from the third slot on
    assert a.cpu_ahead == pytest.approx((0.2 + 0.5 / 2, 0.7, 0.7))
    rise = 2000 / (16 * GI)
    assert a.memory_ahead == pytest.approx((0.1 + rise / 2, 0.1 + rise, 0.1 + rise))
    assert b.cpu_ahead == () and c.cpu_ahead == ()  # no pod with a whole day learned
    assert with_ahead(nodes, running, profiles, 0) == nodes


def test_the_levels_ahead_start_from_the_15_minute_level_not_the_newest_sample() -> None:
    """A node's newest sample is one scrape: noise, carried through every hour ahead, would
    make the spread ahead chase it (benchmarks/README.md, "Noisy usage"). The levels ahead
    start from the 15-minute window's level; the windows keep the newest sample as their floor."""
    profiles = learned([100.0] * SLOTS, "flat")
    at = MIDNIGHT + DAY + 15 * 3600
    profiles.fold_run([("flat", "ns", "f-1", at, 0.1, 100.0)])
    spiked = NodeLevel("a", 4000, 16 * GI, (0.3, 0.25, 0.2), (0.1, 0.1, 0.1), at, 0.6, 0.4)
    [a] = with_ahead([spiked], [("a", "ns", "f-1", None)], profiles, 2)
    assert a.cpu_ahead == pytest.approx((0.3, 0.3))  # a flat profile: no change from 0.3
    assert a.memory_ahead == pytest.approx((0.1, 0.1))
    assert a.effective() == ((0.6, 0.6, 0.6), (0.4, 0.4, 0.4))  # the windows' floor: unchanged


def test_a_pod_started_minutes_ago_adds_what_the_15_minute_level_lacks_of_it() -> None:
    """The 15-minute window has taken in 1 - exp(-age / 900) of a pod started `age` seconds
    ago: the rest of its present usage (its profile's) is added to its node's levels ahead."""
    profiles = learned([400.0] * SLOTS, "flat")  # 400m a pod, all day
    at = MIDNIGHT + DAY + 15 * 3600
    profiles.fold_run([("flat", "ns", p, at, 0.4, 1000.0) for p in ("old", "new", "born")])
    nodes = [level("a", 0.2, 0.1), level("b", 0.2, 0.1), level("c", 0.2, 0.1)]
    running = [
        ("a", "ns", "old", at - DAY),  # long in the window: nothing to add
        ("b", "ns", "new", at - 900.0),  # 15 minutes: exp(-1) of it still missing
        ("c", "ns", "born", at + 5.0),  # started after the metrics (clocks apart): all of it
    ]
    a, b, c = with_ahead([dataclass_at(n, at) for n in nodes], running, profiles, 2)
    assert a.cpu_ahead == pytest.approx((0.2, 0.2))
    assert b.cpu_ahead == pytest.approx((0.2 + math.exp(-1) * 0.1,) * 2)  # 400m of 4000m
    assert c.cpu_ahead == pytest.approx((0.3, 0.3))
    assert c.memory_ahead == pytest.approx((0.1 + 1000 / (16 * GI),) * 2)


def test_a_pod_started_before_its_nodes_first_sample_is_wholly_in_the_windows() -> None:
    """A node's first sample sets every window: the pods it runs then add nothing, those
    started after it what the window lacks of them (a node added with its pods, a scale-up)."""
    profiles = learned([400.0] * SLOTS, "flat")
    at = MIDNIGHT + DAY + 15 * 3600
    profiles.fold_run([("flat", "ns", p, at, 0.4, 1000.0) for p in ("early", "late")])
    first = fold(None, "a", 4000, 16 * GI, 800, 2**30, at - 120.0)  # its first sample
    node = fold(first, "a", 4000, 16 * GI, 800, 2**30, at)
    assert node.first_at == at - 120.0
    [alone] = with_ahead([node], [("a", "ns", "early", at - 300.0)], profiles, 1)
    assert alone.cpu_ahead == pytest.approx((0.2,))  # in the first sample: nothing to add
    [both] = with_ahead(
        [node], [("a", "ns", "early", at - 300.0), ("a", "ns", "late", at - 60.0)], profiles, 1
    )
    assert both.cpu_ahead == pytest.approx((0.2 + math.exp(-60 / 900) * 0.1,))


def dataclass_at(n: NodeLevel, at: float) -> NodeLevel:
    return dataclasses.replace(n, metrics_at=at)


@given(st.lists(st.floats(0, 1e4), min_size=SLOTS, max_size=SLOTS), st.integers(1, SLOTS))
def test_a_learned_day_is_read_back_as_it_was(usage: list[float], slots: int) -> None:
    p = learned(usage).profile("w")
    assert p is not None
    cpu, _ = p.ahead(MIDNIGHT, slots)  # type: ignore[misc]
    assert cpu.tolist() == pytest.approx(usage[:slots])
