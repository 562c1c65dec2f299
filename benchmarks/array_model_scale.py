"""Benchmark: the recommender's model in arrays (issue 43) against `json.loads` of its input.

For each `--pods` size, a PodMetrics LIST as metrics-server serves it (metrics_floor's
generator: CPU in nanocores, memory in Ki, `--replicas` pods per workload, one container each)
for run 1 and another, a minute later with other usage, for run 2. A run is what the
recommender job does with the LIST in memory: its bytes read (`decode_pod_metrics_list`), each
container's quantities parsed and its pod's workload found (a dict standing for the pod cache),
the samples added to the model, and every workload container estimated (the `vpa` strategy,
rounded and capped, with its reason). Run 1 finds every pod container and workload container
new (the cold index); run 2 finds them all (the steady state). Not timed: fetching the LIST,
the database writes (recommendations, checkpoints, history), conditions: this measures the
model, the part issue 43 redesigns, not the job (benchmarks/recommender_scale.py does).

Each run is timed for the model (`ArrayModel.add_usages`, `recommend_all`) from the LIST bytes,
with the cyclic collector paused as in the job's runs; the baseline is the best of three
`json.loads` of the same bytes. (Until issue 43 removed it, the per-object UsageModel was timed
side by side: results/array-model-scale.txt of that time.) Memory per workload container: the
traced allocations (tracemalloc) of the model after run 2 at the first size, indices included.

    nice .venv/bin/python benchmarks/array_model_scale.py --pods 15000 45000 [--output FILE]

Not run by the tests.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import math
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import scale_common as sc
from metrics_floor import pod_metrics_list

from app.core.gcpause import without_cyclic_gc
from app.core.recommend.array_model import ArrayModel, Sample
from app.core.recommend.podmetrics import decode_pod_metrics_list
from app.core.recommend.samples import _usages
from app.core.workload_key import WorkloadKey

RUN1, RUN2 = b"2026-07-12T00:00:00Z", b"2026-07-12T00:01:00Z"
REQUEST = 0.25  # each container's CPU request, cores


def workloads(pods: int, replicas: int) -> dict[tuple[str, str], WorkloadKey]:
    """(namespace, pod) -> its workload, as the pod cache knows it."""
    keys: dict[int, WorkloadKey] = {}
    out = {}
    for i in range(pods):
        n = i // replicas
        w = keys.get(n) or keys.setdefault(n, WorkloadKey(f"ns-{n % 100}", "Deployment", f"w-{n}"))
        out[(f"ns-{i % 100}", f"w-{n}-{i % replicas:05d}")] = w
    return out


def samples_of(body: bytes, owner: dict[tuple[str, str], WorkloadKey]) -> list[Sample]:
    """The LIST read into samples (the job's reading: samples.parsed_columns' parse)."""
    out: list[Sample] = []
    for item in decode_pod_metrics_list(body):
        w = owner[(item.metadata.namespace, item.metadata.name)]
        for pod, name, t, cpu, mem in _usages(item):
            out.append((w, pod, name, t, cpu, REQUEST, mem))
    return out


def array_run(model: ArrayModel, body: bytes, owner: dict[tuple[str, str], WorkloadKey]) -> Any:
    model.add_usages(samples_of(body, owner))
    return model.recommend_all()


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.disable()
    try:
        began = time.perf_counter()
        out = fn()
        return time.perf_counter() - began, out
    finally:
        gc.enable()


def traced_mb(build: Callable[[], object]) -> float:
    gc.collect()
    tracemalloc.start()
    kept = build()
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del kept
    return size / 1e6


def measure(pods: int, replicas: int, rounds: int) -> dict[str, Any]:
    owner = workloads(pods, replicas)
    run1 = pod_metrics_list(pods, replicas, 1, seed=1)
    run2 = pod_metrics_list(pods, replicas, 1, seed=2).replace(RUN1, RUN2)
    with without_cyclic_gc():  # as the runs (and recommender_scale's baseline)
        loads = sc.best_of(lambda: json.loads(run1), rounds)
    res: dict[str, Any] = {"pods": pods, "containers": len(set(owner.values())), "bytes": len(run1)}
    res["json.loads"] = loads
    best = {"run 1": math.inf, "run 2": math.inf}
    for _ in range(rounds):  # each round from a fresh model: run 1 cold, run 2 warm
        arrays = ArrayModel()
        for name, body in (("run 1", run1), ("run 2", run2)):
            a, _ = timed(functools.partial(array_run, arrays, body, owner))
            best[name] = min(best[name], a)
        del arrays
        gc.collect()
    res.update(best)
    return res


def memory(pods: int, replicas: int) -> tuple[float, int]:
    """MB traced for the model after two runs of `pods` pods, and the workload containers."""
    owner = workloads(pods, replicas)
    bodies = [
        pod_metrics_list(pods, replicas, 1, seed=1),
        pod_metrics_list(pods, replicas, 1, seed=2).replace(RUN1, RUN2),
    ]

    def arrays() -> ArrayModel:
        m = ArrayModel()
        for b in bodies:
            m.add_usages(samples_of(b, owner))
        return m

    return traced_mb(arrays), len(set(owner.values()))


def report(
    results: list[dict[str, Any]], mem: tuple[float, int], replicas: int, rounds: int
) -> list[str]:
    rows = []
    for r in results:
        loads = r["json.loads"]
        for run in ("run 1", "run 2"):
            a = r[run]
            rows.append((f"{r['pods']}", run, f"{loads:.3f}", f"{a:.3f}", f"{a / loads:.1f}"))
    a_mb, containers = mem
    return [
        f"the recommender's model in arrays, {replicas} pods per workload, one container each, "
        f"best of {rounds} (LIST decoded, samples added, every container estimated; not the "
        "job: no LIST fetch, no database write)",
        f"machine: {sc.machine()}",
        "",
        sc.table(["pods", "run", "json.loads s", "arrays s", "x json.loads"], rows),
        "",
        f"memory after two runs, {containers} workload containers (tracemalloc, indices "
        f"included): {a_mb:.1f} MB ({a_mb * 1e6 / containers:.0f} B a container)",
    ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pods", type=int, nargs="+", default=[15000, 45000])
    p.add_argument("--replicas", type=int, default=10, help="pods per workload")
    p.add_argument("--rounds", type=int, default=3, help="each figure the best of")
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)
    results = [measure(n, args.replicas, args.rounds) for n in args.pods]
    mem = memory(min(args.pods), args.replicas)
    return sc.emit(report(results, mem, args.replicas, args.rounds), args.output)


if __name__ == "__main__":
    sys.exit(main())
