"""Exponential and decaying histograms, as the VPA recommender keeps them.

Buckets grow geometrically, so the relative error of a percentile is bounded (5% with ratio 1.05)
over six orders of magnitude with only 176 buckets. The decaying variant multiplies each sample's
weight by 2^((t - reference) / half_life) instead of shrinking old weights, so adding a sample is
O(1); the reference is moved forward (and all weights rescaled) only when exponents grow large.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate

_log = math.log
MAX_CHECKPOINT_WEIGHT = 10_000
MAX_DECAY_EXPONENT = 100


@dataclass(frozen=True)
class ExponentialBuckets:
    """Bucket i covers [start(i), start(i+1)); start(i) = first * (ratio^i - 1) / (ratio - 1)."""

    max_value: float
    first_bucket_size: float
    ratio: float = 1.05
    epsilon: float = 1e-4
    num_buckets: int = field(init=False)
    _scale: float = field(init=False, repr=False, compare=False)
    _log_ratio: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if (
            self.max_value <= 0
            or self.first_bucket_size <= 0
            or self.ratio <= 1
            or self.epsilon <= 0
        ):
            raise ValueError("histogram needs max_value > 0, first_bucket_size > 0, ratio > 1")
        n = math.ceil(
            math.log(self.max_value * (self.ratio - 1) / self.first_bucket_size + 1)
            / math.log(self.ratio)
        )
        object.__setattr__(self, "num_buckets", n + 1)
        # find_bucket's constants, computed once (the same operations in the same order: the
        # same bucket, bit for bit; it runs several times for each sample)
        object.__setattr__(self, "_scale", self.ratio - 1)
        object.__setattr__(self, "_log_ratio", math.log(self.ratio))

    def bucket_start(self, bucket: int) -> float:
        if bucket == 0:
            return 0.0
        return self.first_bucket_size * (self.ratio**bucket - 1) / (self.ratio - 1)

    def find_bucket(self, value: float) -> int:
        first = self.first_bucket_size
        if value < first:
            return 0
        bucket = int(_log(value * self._scale / first + 1) / self._log_ratio)
        last = self.num_buckets - 1
        return bucket if bucket < last else last

    def find_buckets(self, values: list[float]) -> list[int]:
        """[find_bucket(v) for v in values], in one call (the same expression: the same buckets)."""
        first, scale, log_ratio = self.first_bucket_size, self._scale, self._log_ratio
        last = self.num_buckets - 1
        out = []
        for value in values:
            if value < first:
                out.append(0)
            else:
                bucket = int(_log(value * scale / first + 1) / log_ratio)
                out.append(bucket if bucket < last else last)
        return out


@dataclass
class HistogramCheckpoint:
    """Compact form for storage: bucket weights scaled so the largest is MAX_CHECKPOINT_WEIGHT."""

    bucket_weights: dict[int, int]
    total_weight: float
    reference_time: float | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "bucketWeights": {str(k): v for k, v in sorted(self.bucket_weights.items())},
            "totalWeight": self.total_weight,
            "referenceTimestamp": self.reference_time,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> HistogramCheckpoint:
        raw = data.get("bucketWeights") or {}
        if not isinstance(raw, dict):
            raise ValueError("bucketWeights must be an object")
        total = data.get("totalWeight", 0.0)
        ref = data.get("referenceTimestamp")
        if not isinstance(total, int | float):
            raise ValueError("totalWeight must be a number")
        if ref is not None and not isinstance(ref, int | float):
            raise ValueError("referenceTimestamp must be a number")
        return cls({int(k): int(v) for k, v in raw.items()}, float(total), ref)


class Histogram:
    """Weights per bucket; a bucket lighter than epsilon counts as empty."""

    def __init__(self, buckets: ExponentialBuckets) -> None:
        self.buckets = buckets
        self.weights = [0.0] * buckets.num_buckets
        self.total_weight = 0.0
        self.min_bucket = buckets.num_buckets - 1
        self.max_bucket = 0

    def add_sample(self, value: float, weight: float, bucket: int | None = None) -> None:
        """`bucket`, when given, is find_bucket(value) already computed by the caller."""
        if weight < 0:
            raise ValueError("sample weight must be non-negative")
        b = self.buckets.find_bucket(value) if bucket is None else bucket
        weights = self.weights
        weights[b] += weight
        self.total_weight += weight
        if weights[b] >= self.buckets.epsilon:
            if b < self.min_bucket:
                self.min_bucket = b
            if b > self.max_bucket:
                self.max_bucket = b

    def subtract_sample(self, value: float, weight: float) -> None:
        if weight < 0:
            raise ValueError("sample weight must be non-negative")
        b = self.buckets.find_bucket(value)
        if weight > self.weights[b] - self.buckets.epsilon:
            weight = self.weights[b]  # never leave a bucket negative through rounding
        self.weights[b] -= weight
        self.total_weight -= weight
        self._update_min_max()

    def is_empty(self) -> bool:
        return self.weights[self.min_bucket] < self.buckets.epsilon

    def percentile(self, p: float) -> float:
        """The END of the bucket where the running weight first reaches p * total (VPA's
        histogram.Percentile: the walk from the lightest bucket with weight stops at the
        heaviest one, whose end is the answer when no earlier bucket reaches it)."""
        return self.percentiles((p,))[0]

    def percentiles(self, ps: Sequence[float]) -> list[float]:
        """[percentile(p) for p in ps]: the running weight of the buckets from min_bucket to
        max_bucket summed once, in that order (itertools.accumulate: the same sums, bit for bit,
        as the walk adds them one by one), and each threshold found in it by bisection. That is
        the first bucket the walk stops at as long as the running weight never decreases, which
        holds for weights that are not negative; a NaN among them (or a NaN threshold, which the
        walk never reaches) is read as the walk reads it."""
        if self.is_empty():
            return [0.0] * len(ps)
        low, high, total = self.min_bucket, self.max_bucket, self.total_weight
        walked = self.weights[low:high]
        running = list(accumulate(walked))
        if running and not (running[-1] == running[-1] and min(walked) >= 0):
            return [self._walk(p) for p in ps]  # a NaN or a negative weight: the plain walk
        last, start = self.buckets.num_buckets - 1, self.buckets.bucket_start
        out = []
        for p in ps:
            threshold = p * total
            b = high if threshold != threshold else low + bisect_left(running, threshold)
            out.append(start(b + 1) if b < last else start(b))  # the last bucket has no end
        return out

    def _walk(self, p: float) -> float:
        """percentile(p), bucket by bucket (VPA's loop as it is written)."""
        threshold = p * self.total_weight
        running = 0.0
        b = self.min_bucket
        while b < self.max_bucket:
            running += self.weights[b]
            if running >= threshold:
                break
            b += 1
        if b < self.buckets.num_buckets - 1:
            return self.buckets.bucket_start(b + 1)
        return self.buckets.bucket_start(b)

    def scale(self, factor: float) -> None:
        if factor < 0:
            raise ValueError("scale factor must be non-negative")
        for b in range(self.min_bucket, self.max_bucket + 1):
            self.weights[b] *= factor
        self.total_weight *= factor
        self._update_min_max()

    def _update_min_max(self) -> None:
        eps, last = self.buckets.epsilon, self.buckets.num_buckets - 1
        while self.weights[self.min_bucket] < eps and self.min_bucket < last:
            self.min_bucket += 1
        while self.weights[self.max_bucket] < eps and self.max_bucket > 0:
            self.max_bucket -= 1

    def save(self) -> HistogramCheckpoint:
        heaviest = max(self.weights[self.min_bucket : self.max_bucket + 1], default=0.0)
        out: dict[int, int] = {}
        if heaviest > 0:
            ratio = MAX_CHECKPOINT_WEIGHT / heaviest
            for b in range(self.min_bucket, self.max_bucket + 1):
                w = math.floor(self.weights[b] * ratio + 0.5)
                if w > 0:
                    out[b] = w
        return HistogramCheckpoint(out, max(self.total_weight, 0.0))

    def load(self, cp: HistogramCheckpoint) -> None:
        """Adds the checkpoint's samples to this histogram (VPA semantics: load appends)."""
        if cp.total_weight < 0:
            raise ValueError(f"checkpoint has negative total weight {cp.total_weight}")
        for b, w in cp.bucket_weights.items():
            if not 0 <= b < self.buckets.num_buckets:
                raise ValueError(f"checkpoint bucket {b} outside 0..{self.buckets.num_buckets - 1}")
            if w < 0:
                raise ValueError(f"checkpoint bucket {b} has negative weight {w}")
        total = sum(cp.bucket_weights.values())
        if total == 0:
            return
        ratio = cp.total_weight / total
        for b, w in cp.bucket_weights.items():
            self.weights[b] += w * ratio
            self.min_bucket = min(self.min_bucket, b)
            self.max_bucket = max(self.max_bucket, b)
        self.total_weight += cp.total_weight


class DecayingHistogram(Histogram):
    """A sample at time t weighs 2^((t - reference) / half_life): it halves every half-life."""

    def __init__(self, buckets: ExponentialBuckets, half_life: float) -> None:
        super().__init__(buckets)
        if half_life <= 0:
            raise ValueError("half_life must be positive")
        self.half_life = half_life
        self.reference_time: float | None = None

    def add_sample_at(
        self, value: float, weight: float, t: float, bucket: int | None = None
    ) -> None:
        ref = self.reference_time  # _decay_factor, inlined: this runs for every sample
        if ref is None or t > ref + MAX_DECAY_EXPONENT * self.half_life:
            self._shift_reference(t)
            ref = self.reference_time
            assert ref is not None
        self.add_sample(value, weight * 2.0 ** ((t - ref) / self.half_life), bucket)

    def add_samples_at(self, weights: list[float], times: list[float], buckets: list[int]) -> None:
        """add_sample_at(value, weights[i], times[i], buckets[i]) for each i in order (buckets[i]
        being the bucket of the value): the same weights, bit for bit, with the decay factor
        computed once for each run of equal times and the running totals kept in locals."""
        half_life, eps = self.half_life, self.buckets.epsilon
        ref = self.reference_time
        limit = 0.0 if ref is None else ref + MAX_DECAY_EXPONENT * half_life
        bucket_weights = self.weights
        total, low, high = self.total_weight, self.min_bucket, self.max_bucket
        last_t: float | None = None
        factor = 0.0
        for weight, t, b in zip(weights, times, buckets, strict=True):
            if ref is None or t > limit:
                self.total_weight, self.min_bucket, self.max_bucket = total, low, high
                self._shift_reference(t)
                total, low, high = self.total_weight, self.min_bucket, self.max_bucket
                ref = self.reference_time
                assert ref is not None
                limit, last_t = ref + MAX_DECAY_EXPONENT * half_life, None
            if t != last_t:
                factor, last_t = 2.0 ** ((t - ref) / half_life), t
            weight *= factor
            if weight < 0:
                self.total_weight, self.min_bucket, self.max_bucket = total, low, high
                raise ValueError("sample weight must be non-negative")
            bucket_weights[b] += weight
            total += weight
            if bucket_weights[b] >= eps:
                if b < low:
                    low = b
                if b > high:
                    high = b
        self.total_weight, self.min_bucket, self.max_bucket = total, low, high

    def subtract_sample_at(self, value: float, weight: float, t: float) -> None:
        self.subtract_sample(value, weight * self._decay_factor(t))

    def _decay_factor(self, t: float) -> float:
        if (
            self.reference_time is None
            or t > self.reference_time + MAX_DECAY_EXPONENT * self.half_life
        ):
            self._shift_reference(t)
        assert self.reference_time is not None
        weight: float = 2.0 ** ((t - self.reference_time) / self.half_life)
        return weight

    def _shift_reference(self, t: float) -> None:
        # Keep the reference a whole number of half-lives from the epoch (Go's Time.Round).
        new_ref = math.floor(t / self.half_life + 0.5) * self.half_life
        if self.reference_time is None:
            self.scale(0.0)  # nothing to carry over
        else:
            exponent = math.floor((self.reference_time - new_ref) / self.half_life + 0.5)
            self.scale(math.ldexp(1.0, exponent))
        self.reference_time = new_ref

    def save(self) -> HistogramCheckpoint:
        cp = super().save()
        cp.reference_time = self.reference_time
        return cp

    def load(self, cp: HistogramCheckpoint) -> None:
        super().load(cp)
        self.reference_time = cp.reference_time
