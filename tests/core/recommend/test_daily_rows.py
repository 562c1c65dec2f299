"""The per-day counts in arrays (app/core/recommend/daily_rows.py) against a plain reference:
random streams of CPU and memory samples and OOM kills for a few rows, over more days than are
kept, counted in batches (one scatter per column) and one by one, with checkpoints restored
midway, leave every row's days as the reference's (a dict of days per row, each sample counted
in its day in order), floats bit for bit."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.recommend.aggregate import cpu_buckets, memory_buckets
from app.core.recommend.daily import RETAINED_DAYS, UsageRows
from app.core.recommend.daily_rows import DailyRows
from app.core.recommend.settings import DAY, RecommenderSettings

S = RecommenderSettings()
BUCKETS = (cpu_buckets(S), memory_buckets(S))
T0 = 1_700_006_400.0  # a UTC midnight
ROWS = 3


class Reference:
    """One row's days, as the docstring of daily.py says, sample by sample."""

    def __init__(self) -> None:
        self.days: dict[int, dict[str, Any]] = {}
        self.newest: int | None = None

    def _day(self, t: float) -> dict[str, Any] | None:
        d = math.floor(t / DAY)
        if self.newest is not None and d <= self.newest - RETAINED_DAYS:
            return None
        if d not in self.days:
            self.days[d] = {"counts": ({}, {}), "sum": [0.0, 0.0], "max": [0.0, 0.0], "oom": 0.0}
            if self.newest is None or d > self.newest:
                self.newest = d
                self.days = {k: v for k, v in self.days.items() if k > d - RETAINED_DAYS}
        return self.days[d]

    def add(self, t: float, value: float, resource: int) -> None:
        day = self._day(t)
        if day is not None:
            counts = day["counts"][resource]
            bucket = BUCKETS[resource].find_bucket(value)
            counts[bucket] = counts.get(bucket, 0) + 1
            day["sum"][resource] += value
            day["max"][resource] = max(day["max"][resource], value)

    def oom(self, t: float, used: float) -> None:
        day = self._day(t)
        if day is not None:
            day["oom"] = max(day["oom"], used)

    def save(self) -> list[dict[str, Any]]:
        def counts(c: dict[int, int]) -> list[int]:
            if not c:
                return [0]
            lo, hi = min(c), max(c)
            return [lo, *(c.get(b, 0) for b in range(lo, hi + 1))]

        return [
            {
                "day": d,
                "cpu": counts(u["counts"][0]),
                "memory": counts(u["counts"][1]),
                "cpuSum": u["sum"][0],
                "memorySum": u["sum"][1],
                "cpuMax": u["max"][0],
                "memoryMax": u["max"][1],
                "oomMax": u["oom"],
            }
            for d, u in sorted(self.days.items())
        ]


values = st.one_of(
    st.sampled_from([0.0, -0.0, 0.5, 1e9]),
    st.floats(min_value=0, max_value=2e9, allow_nan=False),
)
events = st.lists(
    st.tuples(
        st.integers(0, ROWS - 1),
        st.floats(min_value=0, max_value=30 * DAY, allow_nan=False),  # after T0
        values,
        st.sampled_from(["cpu", "memory", "oom", "cpu", "memory"]),
    ),
    min_size=1,
    max_size=80,
)


def _exact(x: Any) -> Any:
    """Floats by their bits (-0.0 is not 0.0)."""
    if isinstance(x, float):
        return x.hex()
    if isinstance(x, list):
        return [_exact(v) for v in x]
    if isinstance(x, dict):
        return {k: _exact(v) for k, v in x.items()}
    return x


@settings(max_examples=300, deadline=None)
@given(events, st.integers(1, 10), st.booleans(), st.integers(0, 80))
def test_array_days_match_the_reference(
    stream: list[tuple[int, float, float, str]], batch: int, sorted_times: bool, restore_at: int
) -> None:
    if sorted_times:
        stream = sorted(stream, key=lambda e: e[1])
    refs = [Reference() for _ in range(ROWS)]
    batched = UsageRows(*BUCKETS, size=ROWS)
    single = UsageRows(*BUCKETS, size=ROWS)
    i = 0
    while i < len(stream):
        if i <= restore_at < i + batch:  # a restart: each row restored from its checkpoint
            for row in range(ROWS):
                saved = batched[row].save()
                batched[row].load(saved)
                single[row].load(saved)
        chunk = stream[i : i + batch]
        i += batch
        days = [math.floor((T0 + t) / DAY) for _, t, _, _ in chunk]
        if max(days) - min(days) >= RETAINED_DAYS:  # a batch spans fewer days than are kept
            chunk = chunk[:1]
            i -= batch - 1
        for row, t, v, what in chunk:
            if what == "oom":
                refs[row].oom(T0 + t, v)
                batched.add_oom(row, T0 + t, v)
                single.add_oom(row, T0 + t, v)
            else:
                resource = 0 if what == "cpu" else 1
                refs[row].add(T0 + t, v, resource)
                single.add_one(row, T0 + t, v, BUCKETS[resource].find_bucket(v), resource)
        for resource, what in ((0, "cpu"), (1, "memory")):
            mine = [(r, t, v) for r, t, v, w in chunk if w == what]
            if mine:
                rows = np.array([r for r, _, _ in mine], dtype=np.int64)
                times = np.array([T0 + t for _, t, _ in mine])
                vs = np.array([v for _, _, v in mine])
                bs = np.array([BUCKETS[resource].find_bucket(v) for v in vs], dtype=np.int64)
                batched.add(rows, times, vs, bs, resource)
    for row in range(ROWS):
        expected = _exact(refs[row].save())
        assert _exact(single[row].save()) == expected
        assert _exact(batched[row].save()) == expected
        assert batched[row].window(3) == single[row].window(3)
        assert batched[row].newest == refs[row].newest


def test_a_cleared_row_keeps_no_day_and_its_neighbours_theirs() -> None:
    rows = UsageRows(*BUCKETS, size=2)
    for row in range(2):
        rows[row].add_cpu(T0 + row, 0.5)
        rows[row].add_memory(T0 + DAY, 1e8)
    kept = rows[1].save()
    rows.clear(0)
    assert (rows[0].save(), rows[0].newest) == ([], None)
    assert rows[1].save() == kept


def test_keys_widen_when_the_rows_outgrow_four_bytes() -> None:
    rows = DailyRows(2**26, RETAINED_DAYS, size=1)  # one row: its keys fit in 4 bytes
    assert rows.keys.dtype == np.int32
    rows.add_one(0, T0, 0.5, 7, 1)
    rows.grow(4)  # four rows of 2^26 buckets: keys up to 2^34
    assert rows.keys.dtype == np.int64
    for row in range(4):
        rows.add(
            np.array([row, row]),
            np.array([T0, T0 + 1]),
            np.array([0.5, 0.6]),
            np.array([5, 3]),
            1,
        )
    slot = rows.kept(3)[0]
    assert rows.counts(3, slot, 1) == (3, [1, 0, 1])
    assert rows.counts(0, rows.kept(0)[0], 1) == (3, [1, 0, 1, 0, 1])  # 7 from before
