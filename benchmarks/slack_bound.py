"""How low mean memory slack can go at a given mean under-provisioning, knowing the future.

benchmarks/quality.py judges one request per trace (the fixed protocol) by two means over traces:
the share of judged samples above the request (under-provisioning) and 1 - mean / request
(slack). Both depend on each trace's request L alone, so for any weight w >= 0 and any choice of
requests whose mean under-provisioning is at most B,

    mean slack  >=  mean over traces of min over L of (slack(L) + w * under(L))  -  w * B

(weak Lagrangian duality: each trace's term is at least its minimum, and w * mean under is at
most w * B). The best such bound, over w, is what `slack_bound` returns: no strategy that sets
one request per trace, even one chosen knowing the judged samples, reaches lower mean slack at
that under-provisioning. Levels are every distinct judged sample value at or above the lowest
allowed level (a request between two sample values only adds slack), plus that lowest level.

`lowest` is the pod minimum (every strategy keeps it), and, with `at_least_mean`, also the
trace's judged mean: requests below a trace's own average use give negative slack, which lowers
the mean over traces while the trace runs out of memory most of the time, so the bound is given
with that restriction too (see benchmarks/README.md).

Pure: no I/O; tests/test_slack_bound.py checks it against brute force on generated traces.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Levels:
    """One trace's candidate requests: (level, share of samples above it), and the mean."""

    mean: float
    options: tuple[tuple[float, float], ...]

    def best(self, weight: float) -> tuple[float, float]:
        """(slack, under) of the level minimising slack + weight x under (the lowest on a tie)."""
        best: tuple[float, float, float] | None = None
        for level, above in self.options:
            slack = 1.0 - self.mean / level
            cost = slack + weight * above
            if best is None or cost < best[0]:
                best = (cost, slack, above)
        assert best is not None
        return best[1], best[2]


def levels(values: Sequence[float], floor: float, *, at_least_mean: bool) -> Levels:
    """The candidate requests of one trace's judged samples (`values`, not empty)."""
    if not values:
        raise ValueError("a trace without judged samples has no level")
    ordered = sorted(values)
    n = len(ordered)
    mean = sum(ordered) / n
    lowest = max(floor, mean) if at_least_mean else floor
    if lowest <= 0:
        raise ValueError("the lowest level must be greater than 0")
    options = [(lowest, (n - bisect.bisect_right(ordered, lowest)) / n)]
    i = bisect.bisect_right(ordered, lowest)
    while i < n:
        j = bisect.bisect_right(ordered, ordered[i], lo=i)
        options.append((ordered[i], (n - j) / n))
        i = j
    return Levels(mean, tuple(options))


@dataclass(frozen=True)
class Bound:
    slack: float  # no mean slack below this at mean under-provisioning <= `under`
    under: float
    weight: float  # the w that gives it


def dual(traces: Sequence[Levels], weight: float, under: float) -> float:
    """The bound that weight `weight` proves."""
    total = 0.0
    for t in traces:
        slack, above = t.best(weight)
        total += slack + weight * above
    return total / len(traces) - weight * under


def slack_bound(traces: Sequence[Levels], under: float, *, top: float = 1000.0) -> Bound:
    """The best dual bound over weights in [0, top]: `dual` is concave in the weight (a mean of
    minima of lines, minus a line), so a coarse geometric grid then a ternary search finds it."""
    if not traces:
        raise ValueError("no traces")
    grid = [0.0] + [top * 2.0**-k for k in range(30, -1, -1)]
    values = [dual(traces, w, under) for w in grid]
    k = max(range(len(grid)), key=values.__getitem__)
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]
    for _ in range(60):
        a, b = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if dual(traces, a, under) < dual(traces, b, under):
            lo = a
        else:
            hi = b
    best_w = max((grid[k], (lo + hi) / 2), key=lambda w: dual(traces, w, under))
    return Bound(dual(traces, best_w, under), under, best_w)
