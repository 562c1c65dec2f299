"""Benchmark: the least a Python recommender must do per sample, against `json.loads`.

Issue 22's target for a recommender run is at most 3x `json.loads` of the same PodMetrics LIST.
This measures how much of that budget the unavoidable part of any run in Python takes, with
rightsizer's own primitives and nothing else: a PodMetrics LIST of `--pods` pods (`--containers`
each, 1 as in the scale benchmark; items as the simulator's metrics-server writes them: CPU in
nanocores, memory in Ki) is parsed
(`json.loads`, the baseline; `orjson.loads`, for comparison; and the recommender's own reading,
`app.core.recommend.podmetrics.decode_pod_metrics_list`, typed with msgspec), then each item's pod
is found in a dict of the pod cache's keys, its two quantities are read
(`app.core.recommend.samples._amount`, the recommender's fast path) and each value's histogram
bucket found (`ExponentialBuckets.find_bucket`) and weighted in a dict per workload container.
No model, no decay, no memory peaks, no estimation: a floor, not a recommender. Beside it, the
columnar floor: the same with every value's bucket found and weighted by numpy for all workload
containers at once, as a model kept in arrays would (numpy is the `bench` extra's:
`pip install -e '.[bench]'`; without it that line says it was not measured).
Each figure is the best of `--rounds`, with the cyclic garbage collector paused as in the
recommender's runs. What is left of 3x after the floor is what the per-container work
(estimation, results, the save of recommendations, checkpoints and history) may take; beside it,
what rightsizer's estimation alone takes for those containers (`results_from_model`: VPA's
percentiles, bounds, rounding, caps and each checkpoint, over a model fed the LIST's samples),
and the least write of a run (`database_floor`: each container's recommendation row updated by
its id, one executemany UPDATE on a throw-away SQLite database, no read, no other table).

    .venv/bin/python benchmarks/metrics_floor.py [--pods 150000] [--replicas 10] [--containers 1]

Not run by the tests.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.util
import json
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import scale_common as sc

from app.core.recommend.aggregate import cpu_buckets, memory_buckets
from app.core.recommend.array_model import ArrayModel
from app.core.recommend.histogram import ExponentialBuckets
from app.core.recommend.podmetrics import PodMetrics, decode_pod_metrics_list
from app.core.recommend.samples import _amount
from app.core.recommend.settings import RecommenderSettings
from app.core.workload_key import WorkloadKey
from app.store.results import results_from_model

NAMES = ("app", "proxy", "log-shipper", "cache")
START = datetime(2026, 7, 12, tzinfo=UTC)


def pod_metrics_list(pods: int, replicas: int, containers: int, seed: int = 1) -> bytes:
    """A PodMetricsList as metrics-server serves it (metrics.k8s.io/v1beta1)."""
    rng = random.Random(seed)
    items = [
        {
            "kind": "PodMetrics",
            "apiVersion": "metrics.k8s.io/v1beta1",
            "metadata": {
                "name": f"w-{i // replicas}-{i % replicas:05d}",
                "namespace": f"ns-{i % 100}",
                "creationTimestamp": "2026-07-12T00:00:00Z",
                "labels": {"app": f"w-{i // replicas}", "pod-template-hash": "5d8f7c9b6d"},
            },
            "timestamp": "2026-07-12T00:00:00Z",
            "window": "30s",
            "containers": [
                {
                    "name": name,
                    "usage": {
                        "cpu": f"{rng.randint(10**5, 2 * 10**9)}n",
                        "memory": f"{rng.randint(10**4, 4 * 10**6)}Ki",
                    },
                }
                for name in NAMES[:containers]
            ],
        }
        for i in range(pods)
    ]
    doc = {"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1", "metadata": {}}
    return json.dumps({**doc, "items": items}).encode()


def floor(items: list[PodMetrics], workload_of: dict[tuple[str, str], int]) -> int:
    """Each sample's pod found, values read, buckets found and weighted; returns the samples."""
    s = RecommenderSettings()
    find_cpu, find_memory = cpu_buckets(s).find_bucket, memory_buckets(s).find_bucket
    histograms: dict[tuple[int, str], tuple[dict[int, float], dict[int, float]]] = {}
    samples = 0
    for item in items:
        meta = item.metadata
        w = workload_of.get((meta.namespace, meta.name))
        if w is None:
            continue
        for c in item.containers:
            usage = c.usage
            cores, bytes_ = _amount(usage.cpu), _amount(usage.memory)
            key = (w, c.name)
            h = histograms.get(key)
            if h is None:
                h = histograms[key] = ({}, {})
            cpu, memory = h
            b = find_cpu(cores)
            cpu[b] = cpu.get(b, 0.0) + 1.0
            b = find_memory(bytes_)
            memory[b] = memory.get(b, 0.0) + 1.0
            samples += 2
    return samples


def columnar_floor(items: list[PodMetrics], workload_of: dict[tuple[str, str], int]) -> int:
    """`floor` with the per-sample arithmetic done in arrays, as a columnar model would do it:
    each item's pod found and its values read in Python (as `floor`), into a row number per
    workload container and two lists of values; then every value's bucket found and weighted for
    all containers at once by numpy (one weight array of containers x buckets per resource, the
    buckets by find_bucket's expression). No model, no decay, no memory peaks: a floor. Returns
    the samples (numpy is the benchmark extra's: `pip install -e '.[bench]'`)."""
    import numpy as np

    s = RecommenderSettings()
    rows: list[int] = []
    cpus: list[float] = []
    memories: list[float] = []
    index: dict[tuple[int, str], int] = {}
    for item in items:
        meta = item.metadata
        w = workload_of.get((meta.namespace, meta.name))
        if w is None:
            continue
        for c in item.containers:
            usage = c.usage
            key = (w, c.name)
            row = index.get(key)
            if row is None:
                row = index[key] = len(index)
            rows.append(row)
            cpus.append(_amount(usage.cpu))
            memories.append(_amount(usage.memory))
    at = np.asarray(rows, dtype=np.int64)
    for values, b in ((cpus, cpu_buckets(s)), (memories, memory_buckets(s))):
        bucket = array_buckets(values, b)
        # the weight of each (container row, bucket), flat: row-major containers x buckets
        np.bincount(at * b.num_buckets + bucket, minlength=len(index) * b.num_buckets)
    return 2 * len(rows)


def array_buckets(values: list[float], b: ExponentialBuckets) -> Any:
    """ExponentialBuckets.find_bucket's expression, with the constants it keeps, over an array
    of values, by numpy (whose vectorised log need not round as the C library's does:
    `bucket_mismatches` counts where the bucket differs)."""
    import numpy as np

    v = np.asarray(values)
    first, last = b.first_bucket_size, b.num_buckets - 1
    bucket = (np.log(v * b._scale / first + 1) / b._log_ratio).astype(np.int64)
    return np.where(v < first, 0, np.minimum(bucket, last))


def bucket_mismatches(items: list[PodMetrics]) -> tuple[int, int]:
    """(values whose array bucket differs from find_bucket's, values compared), both resources."""
    s = RecommenderSettings()
    cpus = [_amount(c.usage.cpu) for i in items for c in i.containers]
    memories = [_amount(c.usage.memory) for i in items for c in i.containers]
    differ = 0
    for values, b in ((cpus, cpu_buckets(s)), (memories, memory_buckets(s))):
        found = b.find_buckets(values)
        by_array = array_buckets(values, b).tolist()
        differ += sum(int(x != y) for x, y in zip(by_array, found, strict=True))
    return differ, len(cpus) + len(memories)


def fed_model(items: list[PodMetrics], workload_of: dict[tuple[str, str], int]) -> ArrayModel:
    """A model fed every sample of the LIST once (one sample per container: a minute's run)."""
    model = ArrayModel()
    keys: dict[int, WorkloadKey] = {}
    for item in items:
        meta = item.metadata
        n = workload_of[(meta.namespace, meta.name)]
        w = keys.get(n) or keys.setdefault(n, WorkloadKey(meta.namespace, "Deployment", f"w-{n}"))
        for c in item.containers:
            usage = c.usage
            cores, bytes_ = _amount(usage.cpu), _amount(usage.memory)
            model.add_usage(w, meta.name, c.name, 1_783_814_400.0, cores, 0.5, bytes_)
    return model


def _row_values(i: int, run: int) -> dict[str, object]:
    """A recommendation row's columns as a steady run writes them (run `run` of container i)."""
    return {
        "target_cpu": 100 + i % 900,
        "target_memory": (200 + i % 800) * 2**20,
        "lower_bound_cpu": 50 + i % 500,
        "lower_bound_memory": (100 + i % 400) * 2**20,
        "upper_bound_cpu": 400 + i % 900 + run,
        "upper_bound_memory": (800 + i % 800 + run) * 2**20,
        "uncapped_target_cpu": 100 + i % 900,
        "uncapped_target_memory": (200 + i % 800) * 2**20,
        "sample_count": 10 * run,
        "first_sample_at": START,
        "last_sample_at": START + timedelta(minutes=run),
        "current_cpu_request": 250,
        "current_memory_request": 512 * 2**20,
        "replicas": 10,
        "requested_cpu_total": 2500,
        "requested_memory_total": 5120 * 2**20,
        "conflicts": {},
        "reason": "vpa: CPU p90 of usage (half-life 24h), memory p90 of daily peaks, each +15%; "
        "confidence 0.0 days",
        "updated_at": START + timedelta(minutes=run),
    }


def database_floor(containers: int, rounds: int) -> float:
    """The least a run writes: each container's recommendation row updated by its id, the
    columns a steady run changes (its sample count and last sample time, at least, change every
    run), in one executemany UPDATE on a throw-away SQLite database migrated as the service's,
    and committed; the rows' parameters built beforehand. No read of the stored rows, no
    checkpoint, history point or condition: a floor, not a save."""
    from sqlalchemy import insert, select

    from app.store.clusters import cluster_key
    from app.store.extensions import db
    from app.store.models import Recommendation

    table = Recommendation.__table__
    with sc.temp_workdir() as workdir:
        app = sc.make_app(f"sqlite:///{workdir}/floor.db")
        with app.app_context():
            db.session.execute(
                insert(table),
                [
                    {"cluster_id": cluster_key(db.session), "namespace": "ns"}
                    | {"kind": "Deployment", "name": f"w-{i}", "container": "app"}
                    | _row_values(i, 0)
                    for i in range(containers)
                ],
            )
            db.session.commit()
            ids = list(db.session.scalars(select(table.c.id)))
            seconds = sc.best_update_by_id(
                table,
                [[{"_id": n} | _row_values(n, run) for n in ids] for run in range(1, rounds + 1)],
            )
            db.session.remove()
            db.engine.dispose()
    return seconds


def _has_numpy() -> bool:
    """numpy is installed; imported here, so its import is not timed with the floor."""
    if importlib.util.find_spec("numpy") is None:
        return False
    importlib.import_module("numpy")
    return True


def _columnar_line(
    columnar: float | None, fast: float, loads: float, items: list[PodMetrics]
) -> str:
    if columnar is None:
        return "columnar floor: not measured (numpy is not installed: pip install -e '.[bench]')"
    differ, compared = bucket_mismatches(items)
    return (
        f"columnar floor (pods found and values read in Python, buckets found and weighted by "
        f"numpy for all containers at once): {columnar:.3f} s, {columnar / loads:.2f}x "
        f"json.loads; with the reading {fast + columnar:.3f} s, "
        f"{(fast + columnar) / loads:.2f}x; numpy's buckets differ from find_bucket's for "
        f"{differ} of {compared} values"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pods", type=int, default=150000)
    p.add_argument("--replicas", type=int, default=10, help="pods per workload")
    p.add_argument("--containers", type=int, default=1, choices=range(1, len(NAMES) + 1))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)
    raw = pod_metrics_list(args.pods, args.replicas, args.containers)
    items = decode_pod_metrics_list(raw)
    workload_of = {
        (i.metadata.namespace, i.metadata.name): n // args.replicas for n, i in enumerate(items)
    }
    containers = len(set(workload_of.values())) * args.containers
    gc.disable()
    try:
        loads = sc.best_of(lambda: json.loads(raw), args.rounds)
        plain = sc.best_of(lambda: orjson.loads(raw), args.rounds)
        fast = sc.best_of(lambda: decode_pod_metrics_list(raw), args.rounds)
        least = sc.best_of(lambda: floor(items, workload_of), args.rounds)
        columnar = (
            sc.best_of(lambda: columnar_floor(items, workload_of), args.rounds)
            if _has_numpy()
            else None
        )
        model = fed_model(items, workload_of)
        estimation = sc.best_of(lambda: list(results_from_model(model)), args.rounds)
        write = database_floor(containers, args.rounds)
    finally:
        gc.enable()
    left = 3 * loads - fast - least
    beyond = left - write
    return sc.emit(
        [
            f"the least a Python recommender does per sample: {args.pods} pods, "
            f"{args.containers} container(s) each, {containers} workload containers, "
            f"PodMetrics LIST {len(raw) / 1e6:.1f} MB",
            f"machine: {sc.machine()}",
            "",
            sc.table(
                [f"step (best of {args.rounds}, gc paused)", "seconds", "x json.loads"],
                [
                    ("baseline: json.loads of the LIST", f"{loads:.3f}", "1.00"),
                    ("orjson.loads of the LIST", f"{plain:.3f}", f"{plain / loads:.2f}"),
                    (
                        "the recommender's reading (decode_pod_metrics_list)",
                        f"{fast:.3f}",
                        f"{fast / loads:.2f}",
                    ),
                    (
                        "pods found, values read, buckets weighted",
                        f"{least:.3f}",
                        f"{least / loads:.2f}",
                    ),
                    (
                        "the two together (the floor)",
                        f"{fast + least:.3f}",
                        f"{(fast + least) / loads:.2f}",
                    ),
                ],
            ),
            _columnar_line(columnar, fast, loads, items),
            f"left of 3x json.loads ({3 * loads:.2f} s) for everything else: {left:.2f} s, "
            f"{left / containers * 1e6:.0f} us per workload container",
            f"rightsizer's estimation alone (results_from_model, {containers} containers): "
            f"{estimation:.2f} s, {estimation / containers * 1e6:.0f} us per container, "
            f"{estimation / left:.1f}x what is left",
            f"the least write of a run (each container's recommendation row updated by id, one "
            f"executemany UPDATE, SQLite): {write:.2f} s, {write / loads:.2f}x json.loads; "
            f"left after it: {beyond:.2f} s, {beyond / containers * 1e6:.0f} us per workload "
            f"container for fetching the LIST, the model's bookkeeping, the estimation, the "
            f"checkpoints, history and conditions",
        ],
        args.output,
    )


if __name__ == "__main__":
    sys.exit(main())
