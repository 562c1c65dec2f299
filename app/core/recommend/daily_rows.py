"""The per-day usage counts of many workload containers, kept in arrays (issue 43).

The numbers of daily.py (a DayUsage per UTC day of each workload container) for rows of
containers at once: a row keeps `retained` day slots, the day d in slot d % retained (the days
kept span fewer than `retained` consecutive days, so they never share one), each slot with its
day, the CPU and memory sample counts, sums and maxima, the largest memory at an OOM kill, and
for each resource the bucket range its counts span (what a DayUsage's BucketCounts holds: the
lowest and highest bucket counted, or the range a checkpoint gave). The counts per bucket are
sparse cells, sorted by (row, slot, resource, bucket) in one key array beside their counts: a
container's day holds a few dozen nonzero buckets of the ~175 a histogram has.

A batch of samples of one resource (`add`) is counted with one scatter per column, in order
per (row, day) as DailyUsage counted them one by one (np.add.at applies repeated indices in
order, so the sums are the same floats); it must span fewer days than are kept, so that no
sample of it is dropped by a newer one of the same batch. A day older than `retained` days
before its row's newest is dropped: a sample of it is ignored, and a kept slot holding it is
left to be reused (readers skip it).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from app.core.recommend.settings import DAY

Array = Any
NO_DAY = np.iinfo(np.int64).min  # an empty slot, a row with no day yet
CPU, MEMORY = 0, 1


class DailyRows:
    def __init__(self, num_buckets: int, retained: int, size: int = 1) -> None:
        self.nb, self.retained = num_buckets, retained
        r = retained
        self.newest = np.full(size, NO_DAY, dtype=np.int64)  # per row: its newest day
        self.day = np.full((size, r), NO_DAY, dtype=np.int64)  # per slot: its day
        self.count = np.zeros((size, r, 2), dtype=np.int64)  # per slot and resource
        self.sum = np.zeros((size, r, 2))
        self.max = np.zeros((size, r, 2))
        self.oom = np.zeros((size, r))
        self.offset = np.zeros((size, r, 2), dtype=np.int32)  # the bucket range counted
        self.length = np.zeros((size, r, 2), dtype=np.int32)
        # cell (row, slot, resource, bucket), sorted: 4 bytes while the rows' keys fit (435,000
        # rows at 14 days of 176 buckets), then 8
        self.keys: Array = np.empty(0, dtype=self._key_type(size))
        self.cells = np.empty(0, dtype=np.uint32)  # its count (4 bytes, as BucketCounts')
        # counts of add_one not yet in the cells (a dict: one sample is not worth a copy of
        # the arrays), merged before anything reads or moves the cells
        self.pending: dict[int, int] = {}

    def nbytes(self) -> int:
        """The arrays' size (the pending one-by-one counts not counted)."""
        arrays = (self.newest, self.day, self.count, self.sum, self.max, self.oom)
        more = (self.offset, self.length, self.keys, self.cells)
        return int(sum(a.nbytes for a in (*arrays, *more)))

    def grow(self, size: int) -> None:
        have = len(self.newest)
        if size <= have:
            return
        more = size - have

        def grown(a: Array, fill: float | int) -> Array:
            return np.concatenate([a, np.full((more, *a.shape[1:]), fill, dtype=a.dtype)])

        self.newest, self.day = grown(self.newest, NO_DAY), grown(self.day, NO_DAY)
        self.count, self.sum, self.max = (
            grown(self.count, 0),
            grown(self.sum, 0),
            grown(self.max, 0),
        )
        self.oom = grown(self.oom, 0)
        self.offset, self.length = grown(self.offset, 0), grown(self.length, 0)
        self.keys = self.keys.astype(self._key_type(size), copy=False)

    def _find(self, keys: Array) -> Array:
        """Where the keys are or would go among the cells (searched in the cells' own type:
        numpy would otherwise copy every cell to the wider type of the keys asked)."""
        return np.searchsorted(self.keys, np.asarray(keys).astype(self.keys.dtype, copy=False))

    def _key_type(self, rows: int) -> type:
        return np.int32 if rows * self.retained * 2 * self.nb < 2**31 else np.int64

    def _key(self, rows: Array, slots: Array, resource: Array | int, buckets: Array | int) -> Array:
        return ((rows * self.retained + slots) * 2 + resource) * self.nb + buckets

    # Writing -----------------------------------------------------------------------------------
    def _slots(self, rows: Array, days: Array) -> tuple[Array, Array]:
        """The samples of days `days` kept (the others older than their rows' retained days),
        their slots opened (a slot of another day emptied) and their rows' newest days moved:
        (which samples are kept, their slots)."""
        newest = self.newest[rows]
        keep = (newest == NO_DAY) | (days > newest - self.retained)
        rows, days = rows[keep], days[keep]
        np.maximum.at(self.newest, rows, days)
        slots = days % self.retained
        stale = self.day[rows, slots] != days
        if stale.any():
            pairs = np.unique(rows[stale] * self.retained + slots[stale])
            self._empty(pairs // self.retained, pairs % self.retained)
            self.day[rows[stale], slots[stale]] = days[stale]
        return keep, slots

    def _empty(self, rows: Array, slots: Array) -> None:
        """Empties the slots (distinct (row, slot) pairs)."""
        self.count[rows, slots] = 0
        self.sum[rows, slots] = 0.0
        self.max[rows, slots] = 0.0
        self.oom[rows, slots] = 0.0
        self.offset[rows, slots] = 0
        self.length[rows, slots] = 0
        self.day[rows, slots] = NO_DAY
        self._flush()
        first = self._key(rows, slots, 0, 0)
        lo, hi = self._find(first), self._find(first + 2 * self.nb)
        n = hi - lo
        if n.sum():
            starts = np.repeat(lo - np.cumsum(np.r_[0, n[:-1]]), n)
            at = starts + np.arange(int(n.sum()))
            self.keys, self.cells = np.delete(self.keys, at), np.delete(self.cells, at)

    def add(self, rows: Array, t: Array, values: Array, buckets: Array, resource: int) -> None:
        """Samples of one resource (rows, times, values, their buckets), in order, spanning
        fewer than `retained` days."""
        if not len(rows):
            return
        days = np.floor(t / DAY).astype(np.int64)
        keep, slots = self._slots(rows, days)
        if not keep.all():
            rows, values, buckets = rows[keep], values[keep], buckets[keep]
        if not len(rows):
            return
        values = values + 0.0  # -0.0 counts as 0.0 in the maximum, as max(0.0, -0.0) does
        at = (rows, slots, resource)
        np.add.at(self.count, at, 1)
        np.add.at(self.sum, at, values)
        np.maximum.at(self.max, at, values)
        # the bucket ranges, per slot counted: widened to its buckets (a slot with none counted
        # yet takes theirs)
        pairs, which = np.unique(rows * self.retained + slots, return_inverse=True)
        low = np.full(len(pairs), self.nb, dtype=np.int64)
        high = np.full(len(pairs), -1, dtype=np.int64)
        np.minimum.at(low, which, buckets)
        np.maximum.at(high, which, buckets)
        r, s = pairs // self.retained, pairs % self.retained
        offset, length = self.offset[r, s, resource], self.length[r, s, resource]
        had = length > 0
        low[had] = np.minimum(low[had], offset[had])
        high[had] = np.maximum(high[had], offset[had] + length[had] - 1)
        self.offset[r, s, resource] = low
        self.length[r, s, resource] = high - low + 1
        keys, n = np.unique(self._key(rows, slots, resource, buckets), return_counts=True)
        self._flush()
        self._count(keys, n)

    def _count(self, keys: Array, n: Array) -> None:
        """Adds n to the cells of the keys (sorted, distinct), new cells inserted."""
        i: Array = self._find(keys)
        found = np.zeros(len(keys), dtype=bool)
        inside = i < len(self.keys)
        found[inside] = self.keys[i[inside]] == keys[inside]
        self.cells[i[found]] += n[found].astype(np.uint32)
        if not found.all():
            new = ~found
            self.keys = np.insert(self.keys, i[new], keys[new])
            self.cells = np.insert(self.cells, i[new], n[new])

    def add_one(self, row: int, t: float, value: float, bucket: int, resource: int) -> None:
        """One sample (add of one, in scalars)."""
        d = math.floor(t / DAY)
        newest = int(self.newest[row])
        if newest != NO_DAY and d <= newest - self.retained:
            return
        s = self._open(row, d, newest)
        n = int(self.length[row, s, resource])
        if n == 0:
            self.offset[row, s, resource], self.length[row, s, resource] = bucket, 1
        else:
            lo = int(self.offset[row, s, resource])
            low, high = min(lo, bucket), max(lo + n - 1, bucket)
            self.offset[row, s, resource], self.length[row, s, resource] = low, high - low + 1
        self.count[row, s, resource] += 1
        self.sum[row, s, resource] = float(self.sum[row, s, resource]) + value
        self.max[row, s, resource] = max(float(self.max[row, s, resource]), value)
        key = ((row * self.retained + s) * 2 + resource) * self.nb + bucket
        pending = self.pending
        pending[key] = pending.get(key, 0) + 1
        if len(pending) > 4096:
            self._flush()

    def _flush(self) -> None:
        """The pending counts into the cells."""
        if self.pending:
            keys = np.array(sorted(self.pending), dtype=np.int64)
            n = np.array([self.pending[k] for k in keys.tolist()], dtype=np.int64)
            self.pending = {}
            self._count(keys, n)

    def _open(self, row: int, d: int, newest: int) -> int:
        """The slot of day d of the row (kept: not older than its retained days), opened."""
        if newest == NO_DAY or d > newest:
            self.newest[row] = d
        s = d % self.retained
        if self.day[row, s] != d:
            self._empty(np.array([row]), np.array([s]))
            self.day[row, s] = d
        return s

    def add_oom(self, row: int, t: float, used: float) -> None:
        d = math.floor(t / DAY)
        newest = int(self.newest[row])
        if newest != NO_DAY and d <= newest - self.retained:
            return
        s = self._open(row, d, newest)
        self.oom[row, s] = max(float(self.oom[row, s]), used)

    def clear(self, row: int) -> None:
        """The row with no day."""
        self._empty(np.full(self.retained, row), np.arange(self.retained))
        self.newest[row] = NO_DAY

    # Reading -----------------------------------------------------------------------------------
    def kept(self, row: int) -> list[int]:
        """The row's slots of the days kept, oldest day first."""
        newest = int(self.newest[row])
        if newest == NO_DAY:
            return []
        days = self.day[row].tolist()
        return sorted(
            (s for s, d in enumerate(days) if d != NO_DAY and d > newest - self.retained),
            key=days.__getitem__,
        )

    def counts(self, row: int, slot: int, resource: int) -> tuple[int, list[int]]:
        """The slot's counts per bucket over its range: (offset, counts)."""
        return self.row_counts(row, [slot])[slot, resource]

    def row_counts(
        self, row: int, slots: list[int]
    ) -> dict[tuple[int, int], tuple[int, list[int]]]:
        """The counts per bucket of the row's `slots` over their ranges, by (slot, resource):
        the row's cells found with one search (each row's checkpoint is saved in turn)."""
        self._flush()
        first = self._key(row, 0, 0, 0)
        lo, hi = self._find([first, first + self.retained * 2 * self.nb]).tolist()
        offsets, lengths = self.offset[row].tolist(), self.length[row].tolist()
        out = {}
        for s in slots:
            for r in (0, 1):
                out[s, r] = (offsets[s][r], [0] * lengths[s][r])
        if hi > lo:
            pair, bucket = np.divmod(self.keys[lo:hi].astype(np.int64) - first, self.nb)
            get = out.get
            cells = self.cells[lo:hi].tolist()
            for p, b, c in zip(pair.tolist(), bucket.tolist(), cells, strict=True):
                entry = get(divmod(p, 2))
                if entry is not None and 0 <= b - entry[0] < len(entry[1]):
                    entry[1][b - entry[0]] = c
        return out

    # Checkpoints -------------------------------------------------------------------------------
    def load_day(
        self,
        row: int,
        day: int,
        counts: tuple[tuple[int, list[int]], tuple[int, list[int]]],
        sums: tuple[float, float],
        maxima: tuple[float, float],
        oom: float,
    ) -> None:
        """A day read from a checkpoint, replacing the slot's (load the kept days of a row after
        `clear`)."""
        s = day % self.retained
        self._empty(np.array([row]), np.array([s]))
        self.day[row, s] = day
        newest = int(self.newest[row])
        self.newest[row] = day if newest == NO_DAY else max(newest, day)
        self.oom[row, s] = oom
        for resource, (offset, cs) in enumerate(counts):
            self.offset[row, s, resource], self.length[row, s, resource] = offset, len(cs)
            self.count[row, s, resource] = sum(cs)
            self.sum[row, s, resource], self.max[row, s, resource] = (
                sums[resource],
                maxima[resource],
            )
            nonzero = [(b, c) for b, c in enumerate(cs, offset) if c]
            if nonzero:
                buckets = np.array([b for b, _ in nonzero], dtype=np.int64)
                self._count(self._key(row, s, resource, buckets), np.array([c for _, c in nonzero]))
