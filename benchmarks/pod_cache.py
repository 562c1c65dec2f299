"""Benchmark: what the pod cache keeps per pod, and what reading a pod into it costs.

Lists the pods of the simulator's scale mode once (`rightsizer sim --nodes N --pods M`, in this
process), then builds the cache three times from the same LIST body, each time from a fresh
json.loads: the trimmed JSON alone (app.kube.cluster.trim_pod, what the cache held before the
typed views), the trimmed JSON read into an app.core.pods.PodView (app.kube.cluster.pod_view),
and that view with the equal parts of pods kept once (app.kube.cluster.Shared: labels,
ownerReferences, containers; what the cache holds now). For each: the bytes still allocated per
pod once the LIST body is dropped (tracemalloc, the JSON parsed under tracing), and the time per
pod of json.loads plus the transform (the mean of three rounds).

    .venv/bin/python benchmarks/pod_cache.py [--nodes 100 --pods 5000]

Not run by the tests.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kubernetes import client

from app.kube.cluster import Shared, pod_view, trim_pod
from app.simulator.simulator import Simulator
from tests.support.json_bodies import raw_body


def list_body(nodes: int, pods: int) -> bytes:
    with Simulator(nodes=nodes, pods=pods) as sim:
        api = sim.api_client()
        try:
            core = client.CoreV1Api(api)
            body: bytes = raw_body(core.list_pod_for_all_namespaces(_preload_content=False))
            return body
        finally:
            api.close()


def measure(name: str, body: bytes, transform: Callable[[dict[str, Any]], Any]) -> None:
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    items = json.loads(body)["items"]
    cache = [transform(x) for x in items]
    del items
    gc.collect()
    retained = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    began = time.perf_counter()
    for _ in range(3):
        cache = [transform(x) for x in json.loads(body)["items"]]
    per_pod = (time.perf_counter() - began) / 3 / len(cache)
    print(
        f"{name:28} {len(cache):7d} pods  {retained / len(cache):7.0f} bytes/pod retained  "
        f"{per_pod * 1e6:6.1f} us/pod (json.loads + transform)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--pods", type=int, default=5000)
    args = parser.parse_args()
    body = list_body(args.nodes, args.pods)
    measure("trimmed JSON (trim_pod)", body, trim_pod)
    measure("PodView (pod_view)", body, pod_view)
    shared = Shared()
    measure("PodView, equal parts shared", body, lambda p: pod_view(p, shared))


if __name__ == "__main__":
    main()
