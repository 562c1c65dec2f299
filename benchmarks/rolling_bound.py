"""How little request can go unused at a given under-provisioning under the rolling protocol,
knowing the future.

benchmarks/quality.py's rolling protocol (--rolling HOURS) judges each container by two figures:
under = A / N, the share of its N judged samples above the request in force, and unused =
U / R, where U is the sum over samples of max(0, request - usage) and R the sum of the requests.
The request changes only when the updater replaces the pod: at a step (every HOURS), and, while
the request stays within its bounds, no sooner than `period` (the updater's 12 h minimum life)
after the previous change. This module bounds, from below, the mean unused over containers any
policy of that kind can reach at a mean under-provisioning of at most B, even one choosing every
request knowing the judged samples. Three relaxations, each only lowering the bound:

1. Changes at least `period` apart make at most one change in each `period` counted from the
   start (the blocks); the bound allows one change anywhere in each block, at a step, and lets
   each block start afresh.
2. R = U + sum of min(request, usage) <= U + S, S the container's total usage, so
   U / R >= U / (U + S) =: g(U), increasing in U.
3. For any mu >= 0, U >= L(mu) - mu A where L(mu) = min over policies of U + mu A, which
   separates over blocks and segments (`lagrangian`): so U >= U_low(A) = max over a grid of mu of
   that line, and unused >= g(U_low(A)) for a container with A samples above.

The mean over containers then goes through weak duality as in benchmarks/slack_bound.py: for any
w >= 0, mean unused >= mean over containers of min over A of (g(U_low(A)) + w A / N) - w B, and
the best w is searched for. A policy whose request leaves its bounds can be replaced sooner than
`period`; the bound does not cover those replacements (quality.py counts them).

Pure: no I/O; numpy. tests/test_rolling_bound.py checks it against brute force on tiny inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MU_POINTS = 64


@dataclass(frozen=True)
class Container:
    """One container's judged samples of one resource: what the dual needs of it."""

    count: int  # N
    options: np.ndarray  # unused lower bound g(U_low(A)) for A = 0..N


def _segment_costs(values: np.ndarray, floor: float, mus: np.ndarray) -> np.ndarray:
    """min over levels L >= floor of (sum of max(0, L - v)) + mu x #(v > L), for each mu."""
    if values.size == 0:
        return np.zeros_like(mus)
    v = np.sort(values)
    n = v.size
    levels = np.unique(np.concatenate(([floor], v[v >= floor])))
    below = np.searchsorted(v, levels, side="right")  # samples <= L
    prefix = np.concatenate(([0.0], np.cumsum(v)))
    unused = below * levels - prefix[below]
    above = n - below
    lowest: np.ndarray = np.min(unused[:, None] + above[:, None] * mus[None, :], axis=0)
    return lowest


def lagrangian(
    times: np.ndarray,
    values: np.ndarray,
    start: float,
    step: float,
    period: float,
    floor: float,
    mus: np.ndarray,
) -> np.ndarray:
    """L(mu) for each mu: the least U + mu A over requests constant between steps, with at most
    one change in each block of `period` from `start` (each block chosen on its own)."""
    total = np.zeros_like(mus)
    block = np.floor((times - start) / period).astype(np.int64)
    step_of = np.floor((times - start) / step).astype(np.int64)
    for b in np.unique(block):
        inside = block == b
        t_steps, t_values = step_of[inside], values[inside]
        # the change may come at any step boundary within the block (or not at all)
        cuts = np.unique(t_steps)
        best = _segment_costs(t_values, floor, mus)
        for c in cuts[1:]:
            before = _segment_costs(t_values[t_steps < c], floor, mus)
            after = _segment_costs(t_values[t_steps >= c], floor, mus)
            best = np.minimum(best, before + after)
        total += best
    return total


def container(
    times: Sequence[float],
    values: Sequence[float],
    *,
    start: float,
    step: float,
    period: float,
    floor: float,
) -> Container:
    """One container's lower bound on unused for every count of samples above."""
    t = np.asarray(times, dtype=float)
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        raise ValueError("a container without judged samples has no bound")
    if floor < 0 or step <= 0 or period <= 0:
        raise ValueError("floor must be >= 0, step and period > 0")
    scale = max(float(v.max()), floor, 1e-12)
    mus = np.concatenate(([0.0], scale * np.geomspace(1e-4, 4.0 * v.size, MU_POINTS)))
    lag = lagrangian(t, v, start, step, period, floor, mus)
    above = np.arange(v.size + 1, dtype=float)
    u_low = np.max(lag[None, :] - above[:, None] * mus[None, :], axis=1)
    u_low = np.maximum(u_low, 0.0)
    total = float(v.sum())
    g = (
        np.where(u_low > 0, u_low / (u_low + total), 0.0)
        if total > 0
        else np.where(u_low > 0, 1.0, 0.0)
    )
    return Container(int(v.size), g)


def dual(containers: Sequence[Container], weight: float, under: float) -> float:
    """The bound weight `weight` proves at mean under-provisioning `under`."""
    total = 0.0
    for c in containers:
        share = np.arange(c.count + 1, dtype=float) / c.count
        total += float(np.min(c.options + weight * share))
    return total / len(containers) - weight * under


def unused_bound(containers: Sequence[Container], under: float, *, top: float = 1000.0) -> float:
    """The best dual bound over weights in [0, top] (concave in the weight: a grid, then a
    ternary search around its best point)."""
    if not containers:
        raise ValueError("no containers")
    grid = [0.0] + [top * 2.0**-k for k in range(30, -1, -1)]
    values = [dual(containers, w, under) for w in grid]
    k = max(range(len(grid)), key=values.__getitem__)
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]
    for _ in range(40):
        a, b = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if dual(containers, a, under) < dual(containers, b, under):
            lo = a
        else:
            hi = b
    return max(values[k], dual(containers, (lo + hi) / 2, under))
