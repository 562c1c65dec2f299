"""Decaying histograms kept as rows of numpy arrays: one row per workload container.

The same histogram as app/core/recommend/histogram.py's DecayingHistogram (VPA's decaying
histogram), bit for bit, for many at once: a row's bucket weights, total weight, reference time
(NaN: none yet) and lightest and heaviest bucket with weight are columns of arrays, and a batch
of samples for any rows is added with one scatter (`numpy.add.at`, which adds repeated indices
one after the other in the order given: the sums per bucket and per row are the per-sample
loop's, in its order).

Where numpy's arithmetic could round otherwise than the per-object code, the per-object
expression is used: the decay factor 2^((t - reference) / half-life) is Python's `2.0 ** x` of
each distinct exponent (numpy's `power` may use another implementation), and a bucket index,
computed with numpy's `log`, is recomputed with `math.log` wherever it lies within rounding of a
bucket edge. Rare cases (a reference shift, a row restored without a reference time, a subtracted
sample, a negative or NaN weight met by a percentile) go through the scalar code below, which is
the per-object histogram's, statement for statement.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from app.core.recommend.histogram import (
    MAX_CHECKPOINT_WEIGHT,
    MAX_DECAY_EXPONENT,
    ExponentialBuckets,
    Histogram,
    HistogramCheckpoint,
)

Array = Any  # numpy arrays (numpy's own typing is not checked here)


def find_buckets(buckets: ExponentialBuckets, values: Array) -> Array:
    """[buckets.find_bucket(v) for v in values], vectorised (the same buckets: see above)."""
    values = np.asarray(values, dtype=np.float64)
    first, scale, log_ratio = buckets.first_bucket_size, buckets._scale, buckets._log_ratio
    last = buckets.num_buckets - 1
    small = values < first
    with np.errstate(all="ignore"):
        q = np.log(np.where(small, first, values) * scale / first + 1) / log_ratio
        # within rounding of an edge: the per-object expression decides
        near = np.abs(q - np.rint(q)) < 1e-9 * np.maximum(1.0, np.abs(q))
    for i in np.flatnonzero(near & ~small):
        q[i] = math.log(float(values[i]) * scale / first + 1) / log_ratio
    with np.errstate(all="ignore"):
        out = np.minimum(np.trunc(q), last)
    out[small] = 0
    return out.astype(np.int64)


class HistogramRows:
    """Decaying histograms of one bucket layout, one per row, each with its half-life
    (`hl`: a policy may tune a workload's, ArrayModel.tune)."""

    def __init__(self, buckets: ExponentialBuckets, half_life: float, capacity: int = 64) -> None:
        if half_life <= 0:
            raise ValueError("half_life must be positive")
        self.buckets = buckets
        self.half_life = half_life  # a new row's (`hl` holds each row's own)
        n = buckets.num_buckets
        self.last = n - 1
        self.weights = np.zeros((capacity, n))
        self.total = np.zeros(capacity)
        self.ref = np.full(capacity, np.nan)
        self.hl = np.full(capacity, float(half_life))
        self.low = np.full(capacity, n - 1, dtype=np.int64)
        self.high = np.zeros(capacity, dtype=np.int64)
        # percentile(p)'s answer for a walk stopping at bucket b (the last bucket has no end)
        self.ends = np.array(
            [
                buckets.bucket_start(b + 1) if b < n - 1 else buckets.bucket_start(b)
                for b in range(n)
            ]
        )

    # Rows ----------------------------------------------------------------------------------
    def grow(self, capacity: int) -> None:
        old = len(self.total)
        if capacity <= old:
            return
        extra = capacity - old
        n = self.buckets.num_buckets
        self.weights = np.vstack([self.weights, np.zeros((extra, n))])
        self.total = np.concatenate([self.total, np.zeros(extra)])
        self.ref = np.concatenate([self.ref, np.full(extra, np.nan)])
        self.hl = np.concatenate([self.hl, np.full(extra, float(self.half_life))])
        self.low = np.concatenate([self.low, np.full(extra, n - 1, dtype=np.int64)])
        self.high = np.concatenate([self.high, np.zeros(extra, dtype=np.int64)])

    def clear(self, row: int) -> None:
        """The row as a new histogram: no weight, no reference time, the default half-life."""
        self.weights[row] = 0.0
        self.total[row] = 0.0
        self.ref[row] = np.nan
        self.hl[row] = self.half_life
        self.low[row] = self.last
        self.high[row] = 0

    # Batches -------------------------------------------------------------------------------
    def add(self, rows: Array, buckets: Array, weights: Array, times: Array) -> None:
        """add_sample_at(value, weights[i], times[i]) to row rows[i], value in bucket
        buckets[i], for each i in order."""
        rows = np.asarray(rows, dtype=np.int64)
        if not len(rows):
            return
        buckets = np.asarray(buckets, dtype=np.int64)
        weights = np.asarray(weights, dtype=np.float64)
        times = np.asarray(times, dtype=np.float64)
        hl = self.hl[rows]
        # A new row takes its reference from its first sample (_shift_reference of a row
        # without one: the scale by 0 of nothing changes nothing else).
        fresh = np.isnan(self.ref[rows])
        if fresh.any():
            first_rows, first_at = np.unique(rows[fresh], return_index=True)
            first_times = times[fresh][first_at]
            clean = self.total[first_rows] == 0
            for row, t in zip(first_rows[clean].tolist(), first_times[clean].tolist(), strict=True):
                row_hl = float(self.hl[row])
                self.ref[row] = math.floor(t / row_hl + 0.5) * row_hl
        ref = self.ref[rows]
        with np.errstate(invalid="ignore"):
            scalar = np.isnan(ref) | (times > ref + MAX_DECAY_EXPONENT * hl) | (weights < 0)
        if scalar.any():
            slow_rows = np.unique(rows[scalar])
            slow = np.isin(rows, slow_rows)
            for row, b, w, t in zip(
                rows[slow].tolist(),
                buckets[slow].tolist(),
                weights[slow].tolist(),
                times[slow].tolist(),
                strict=True,
            ):
                self.add_one(row, b, w, t)
            keep = ~slow
            rows, buckets, weights, times, ref, hl = (
                rows[keep],
                buckets[keep],
                weights[keep],
                times[keep],
                ref[keep],
                hl[keep],
            )
            if not len(rows):
                return
        exponents = (times - ref) / hl
        distinct, inverse = np.unique(exponents, return_inverse=True)
        factors = np.array([2.0 ** float(x) for x in distinct.tolist()])[inverse]
        added = weights * factors
        np.add.at(self.weights, (rows, buckets), added)
        np.add.at(self.total, rows, added)
        heavy = self.weights[rows, buckets] >= self.buckets.epsilon
        np.minimum.at(self.low, rows[heavy], buckets[heavy])
        np.maximum.at(self.high, rows[heavy], buckets[heavy])

    def subtract(self, rows: Array, values: Array, times: Array) -> None:
        """subtract_sample_at(values[i], 1.0, times[i]) from row rows[i], each row at most once
        (so the order does not matter)."""
        rows = np.asarray(rows, dtype=np.int64)
        values = np.asarray(values, dtype=np.float64)
        times = np.asarray(times, dtype=np.float64)
        hl, eps = self.hl[rows], self.buckets.epsilon
        ref = self.ref[rows]
        with np.errstate(invalid="ignore"):
            scalar = np.isnan(ref) | (times > ref + MAX_DECAY_EXPONENT * hl)
        for i in np.flatnonzero(scalar).tolist():
            self.subtract_one(int(rows[i]), float(values[i]), 1.0, float(times[i]))
        keep = ~scalar
        rows, values, times, ref, hl = rows[keep], values[keep], times[keep], ref[keep], hl[keep]
        if not len(rows):
            return
        distinct, inverse = np.unique((times - ref) / hl, return_inverse=True)
        weight = np.array([2.0 ** float(x) for x in distinct.tolist()])[inverse]
        b = find_buckets(self.buckets, values)
        have = self.weights[rows, b]
        weight = np.where(weight > have - eps, have, weight)
        self.weights[rows, b] = have - weight
        self.total[rows] -= weight
        # _update_min_max: the first bucket from the lightest on, and the last from the
        # heaviest back, not lighter than epsilon (or the ends)
        idx = np.arange(self.buckets.num_buckets)
        stop = ~(self.weights[rows] < eps)
        low, high = self.low[rows], self.high[rows]
        from_low = stop & (idx >= low[:, None])
        self.low[rows] = np.where(from_low.any(axis=1), from_low.argmax(axis=1), self.last)
        to_high = (stop & (idx <= high[:, None]))[:, ::-1]
        self.high[rows] = np.where(to_high.any(axis=1), self.last - to_high.argmax(axis=1), 0)

    # One sample (the per-object code, statement for statement) -----------------------------
    def add_one(self, row: int, bucket: int, weight: float, t: float) -> None:
        ref, hl = float(self.ref[row]), float(self.hl[row])
        if math.isnan(ref) or t > ref + MAX_DECAY_EXPONENT * hl:
            self.shift_reference(row, t)
            ref = float(self.ref[row])
        weight = weight * 2.0 ** ((t - ref) / hl)
        if weight < 0:
            raise ValueError("sample weight must be non-negative")
        self.weights[row, bucket] += weight
        self.total[row] += weight
        if self.weights[row, bucket] >= self.buckets.epsilon:
            if bucket < self.low[row]:
                self.low[row] = bucket
            if bucket > self.high[row]:
                self.high[row] = bucket

    def subtract_one(self, row: int, value: float, weight: float, t: float) -> None:
        ref, hl = float(self.ref[row]), float(self.hl[row])
        if math.isnan(ref) or t > ref + MAX_DECAY_EXPONENT * hl:
            self.shift_reference(row, t)
            ref = float(self.ref[row])
        weight = weight * 2.0 ** ((t - ref) / hl)
        if weight < 0:
            raise ValueError("sample weight must be non-negative")
        b = self.buckets.find_bucket(value)
        have = float(self.weights[row, b])
        if weight > have - self.buckets.epsilon:
            weight = have
        self.weights[row, b] = have - weight
        self.total[row] -= weight
        self._update_min_max(row)

    def shift_reference(self, row: int, t: float) -> None:
        hl = float(self.hl[row])
        new_ref = math.floor(t / hl + 0.5) * hl
        ref = float(self.ref[row])
        if math.isnan(ref):
            self.scale(row, 0.0)
        else:
            self.scale(row, math.ldexp(1.0, math.floor((ref - new_ref) / hl + 0.5)))
        self.ref[row] = new_ref

    def scale(self, row: int, factor: float) -> None:
        low, high = int(self.low[row]), int(self.high[row])
        if high >= low:
            self.weights[row, low : high + 1] *= factor
        self.total[row] *= factor
        self._update_min_max(row)

    def _update_min_max(self, row: int) -> None:
        eps, last, w = self.buckets.epsilon, self.last, self.weights[row]
        low, high = int(self.low[row]), int(self.high[row])
        while w[low] < eps and low < last:
            low += 1
        while w[high] < eps and high > 0:
            high -= 1
        self.low[row], self.high[row] = low, high

    # Reading -------------------------------------------------------------------------------
    def is_empty(self, rows: Array) -> Array:
        rows = np.asarray(rows, dtype=np.int64)
        return self.weights[rows, self.low[rows]] < self.buckets.epsilon

    def histogram(self, row: int) -> Histogram:
        """The row as a per-object Histogram (the same weights, total and bounds)."""
        h = Histogram(self.buckets)
        h.weights = self.weights[row].tolist()
        h.total_weight = float(self.total[row])
        h.min_bucket, h.max_bucket = int(self.low[row]), int(self.high[row])
        return h

    def percentiles(self, rows: Array, ps: Sequence[float]) -> Array:
        """Histogram.percentiles(ps) of each row: an array of len(rows) x len(ps). The running
        weight is a cumulative sum over the row's weights from its lightest bucket with weight
        (those before it and from its heaviest on read as 0, which adds nothing: the same sums
        as the per-object walk's)."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.zeros((len(rows), len(ps)))
        if not len(rows):
            return out
        low, high = self.low[rows], self.high[rows]
        idx = np.arange(self.buckets.num_buckets)
        walked = (idx >= low[:, None]) & (idx < high[:, None])
        w = np.where(walked, self.weights[rows], 0.0)
        running = np.cumsum(w, axis=1)
        total = self.total[rows]
        empty = self.is_empty(rows)
        odd = ~empty & (np.isnan(running[:, -1]) | (w < 0).any(axis=1))
        for k, p in enumerate(ps):
            threshold = p * total
            below = ((running < threshold[:, None]) & walked).sum(axis=1)
            b = np.where(np.isnan(threshold), high, low + below)
            out[:, k] = np.where(empty, 0.0, self.ends[b])
        for i in np.flatnonzero(odd):
            out[i] = self.histogram(int(rows[i])).percentiles(ps)
        return out

    # Checkpoints ---------------------------------------------------------------------------
    def save(self, row: int) -> HistogramCheckpoint:
        """DecayingHistogram.save of the row."""
        low, high = int(self.low[row]), int(self.high[row])
        weights = self.weights[row, low : high + 1].tolist()
        heaviest = max(weights, default=0.0)
        out: dict[int, int] = {}
        if heaviest > 0:
            ratio = MAX_CHECKPOINT_WEIGHT / heaviest
            for b, weight in enumerate(weights, start=low):
                n = math.floor(weight * ratio + 0.5)
                if n > 0:
                    out[b] = n
        ref = float(self.ref[row])
        return HistogramCheckpoint(
            out, max(float(self.total[row]), 0.0), None if math.isnan(ref) else ref
        )

    def load(self, row: int, cp: HistogramCheckpoint) -> None:
        """DecayingHistogram.load into the row (its checks, its sums)."""
        h = self.histogram(row)
        h.load(cp)
        self.weights[row] = h.weights
        self.total[row] = h.total_weight
        self.low[row], self.high[row] = h.min_bucket, h.max_bucket
        self.ref[row] = np.nan if cp.reference_time is None else cp.reference_time
