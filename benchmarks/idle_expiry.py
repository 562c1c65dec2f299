"""Benchmark: many workloads going idle in the same recommender run.

When a namespace of many workloads is deleted, all their aggregates reach the idle time (8 days
without a sample) together and one run drops them all, with their pod containers' windows. This
builds a model of `--workloads` workloads, `--idle` of them idle (one pod each) and the others
live with `--pods` pods each, and times `ArrayModel.expire_idle` (each row dropped with its own
pod containers' windows, no pass over the others'). Until issue 43 this compared the per-object
model's one-pass drop with its former pass over every window per aggregate (results/
idle-expiry.txt).

    .venv/bin/python benchmarks/idle_expiry.py [--workloads 15000] [--idle 3000] [--pods 10]

Not run by the tests.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import scale_common as sc

from app.core.recommend.array_model import ArrayModel
from app.core.workload_key import WorkloadKey

NOW = 1_751_000_000.0


def model_of(workloads: int, idle: int, pods: int) -> ArrayModel:
    m = ArrayModel()
    for i in range(workloads):
        w = WorkloadKey(f"ns-{i % 100}", "Deployment", f"w-{i}")
        t, n = (NOW - 9 * 86400, 1) if i < idle else (NOW, pods)
        for p in range(n):
            m.add_usage(w, f"{w.name}-{p}", "app", t, 0.1, 0.5, 1e8)
    return m


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workloads", type=int, default=15000)
    p.add_argument("--idle", type=int, default=3000)
    p.add_argument("--pods", type=int, default=10, help="pods of each live workload")
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)
    m = model_of(args.workloads, args.idle, args.pods)
    windows = len(m.pods)
    began = time.perf_counter()
    dropped = m.expire_idle(NOW)
    now = time.perf_counter() - began
    left = len(m.pods) == (args.workloads - args.idle) * args.pods and dropped == args.idle
    return sc.emit(
        [
            f"idle expiry: {dropped} of {args.workloads} workloads' rows idle together, "
            f"{windows} pod container windows",
            f"machine: {sc.machine()}",
            "",
            sc.table(["step", "seconds"], [("ArrayModel.expire_idle", f"{now:.3f}")]),
            f"the live workloads' windows left, the idle ones' gone: {'yes' if left else 'NO'}",
        ],
        args.output,
    )


if __name__ == "__main__":
    sys.exit(main())
