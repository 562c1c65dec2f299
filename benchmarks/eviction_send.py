"""Benchmark: an eviction's client CPU, as the updater sends it, beside the client's own ways.

Against the simulator (a separate `rightsizer sim` process, 50 nodes and 1,500 pods by default),
every pod is evicted with `dryRun=All` (nothing changes, so each round evicts the same pods) by:
- `updater`: PodActions.send_eviction through the updater's EvictionSender, 4 in flight (the
  request written on a connection of the client's pool, the answer parsed by httptools:
  app.kube.posts, app.kube.http1);
- `urlopen`: the same request through urllib3's `urlopen` on the same pool, answered at once
  (http.client underneath, as the client's REST layer sends it);
- `typed`: CoreV1Api.create_namespaced_pod_eviction, the official client's typed call.
It prints the client CPU (this thread's user + system time) per eviction, the wall time, and the
ratios to `updater`; the best of `--rounds` rounds each, taken in turn.

    .venv/bin/python benchmarks/eviction_send.py [--nodes 50 --pods 1500] [--rounds 5]

Not run by the tests.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scale_common import ROOT, SimProcess, emit, machine, table, temp_workdir

sys.path.insert(0, str(ROOT))

from kubernetes import client

from app.core.bodies import EvictionBody
from app.jobs.evictions import EvictionSender
from app.kube.actions import EVICTION_PATH, PodActions
from tests.support.json_bodies import plain, raw_body


def _timed(fn: Callable[[], int]) -> tuple[float, float, int]:
    cpu, wall = time.thread_time(), time.perf_counter()
    done = fn()
    return time.thread_time() - cpu, time.perf_counter() - wall, done


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, default=50)
    p.add_argument("--pods", type=int, default=1500)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)
    with temp_workdir() as wd:
        sim = SimProcess(args.nodes, args.pods, Path(wd))
        try:
            api = sim.api_client()
            listed = client.CoreV1Api(api).list_pod_for_all_namespaces(_preload_content=False)
            metas = [p["metadata"] for p in json.loads(raw_body(listed))["items"]]
            bodies = [EvictionBody(m["namespace"], m["name"], m["uid"]) for m in metas]
            results = _compare(api, bodies, args.rounds)
        finally:
            sim.stop()
    best = {name: min(r, key=lambda t: t[0]) for name, r in results.items()}
    ours = best["updater"][0]
    rows = [
        [
            name,
            f"{cpu / len(bodies) * 1000:.3f}",
            f"{wall:.2f}",
            f"{cpu / ours:.1f}x",
            str(done),
        ]
        for name, (cpu, wall, done) in best.items()
    ]
    lines = [
        f"eviction sending: {len(bodies)} dry-run evictions per round, best of {args.rounds}",
        f"machine: {machine()}",
        table(["way", "client CPU ms each", "wall s", "CPU vs updater", "answered 201"], rows),
    ]
    return emit(lines, args.output)


def _compare(api: Any, bodies: list[EvictionBody], rounds: int) -> dict[str, list[Any]]:
    actions = PodActions(api, dry_run=True)
    core = client.CoreV1Api(api)
    pool = api.rest_client.pool_manager.connection_from_url(api.configuration.host)
    headers = {**api.default_headers, "Accept": "application/json"}
    headers["Content-Type"] = "application/json"

    def updater() -> int:
        outcomes: list[str] = []
        with EvictionSender(actions.send_eviction, 4) as sender:
            for b in bodies:
                sender.submit(b, outcomes.append)
        return outcomes.count("done")

    def urlopen() -> int:
        done = 0
        for b in bodies:
            path = EVICTION_PATH.format(namespace=b.namespace, name=b.name) + "?dryRun=All"
            data = json.dumps(b.to_dict()).encode()
            r = pool.urlopen("POST", path, body=data, headers=headers, preload_content=False)
            r.drain_conn()
            r.release_conn()
            done += r.status == 201
        return done

    def typed() -> int:
        for b in bodies:
            core.create_namespaced_pod_eviction(
                b.name, b.namespace, plain(b.to_dict()), dry_run="All"
            )
        return len(bodies)

    ways = {"updater": updater, "urlopen": urlopen, "typed": typed}
    results: dict[str, list[Any]] = {name: [] for name in ways}
    for _ in range(rounds):
        for name, fn in ways.items():
            results[name].append(_timed(fn))
    return results


if __name__ == "__main__":
    sys.exit(main())
