"""metrics.k8s.io/v1beta1 as metrics-server serves it: one scrape per 15 s of simulated time.

A scrape computes every running pod's usage once and keeps the serialised PodMetrics and
NodeMetrics until the next one, as metrics-server does, so listing metrics for 150,000 pods
costs one computation per resolution window, not one per request.
The scrape of a window is taken by the first request in it, and also at once when the clock is
moved by hand (POST /sim/clock?advance=) and when a scale-mode cluster starts, as metrics-server's
background scrape would have it ready: a client's LIST then costs serving the kept bytes, as it
does against metrics-server, not the computation for every pod of the cluster.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field

from app.simulator.apiserver import quantity
from app.simulator.apiserver.resources import NODE
from app.simulator.apiserver.store import dumps
from app.simulator.control.cluster import SimCluster
from app.simulator.workload.clock import rfc3339
from app.simulator.workload.usage import SAMPLE, observed

# What the node itself (kubelet, runtime, system daemons) uses besides its pods.
NODE_OVERHEAD_CORES = 0.1
NODE_OVERHEAD_BYTES = 512 << 20


@dataclass(slots=True)
class Scrape:
    at: float
    # (namespace, name) -> (labels, serialised PodMetrics)
    pods: dict[tuple[str, str], tuple[dict[str, str], bytes]] = field(default_factory=dict)
    nodes: dict[str, tuple[dict[str, str], bytes]] = field(default_factory=dict)


class MetricsServer:
    def __init__(self, cluster: SimCluster) -> None:
        self.cluster = cluster
        self._lock = threading.Lock()
        self._scrape: Scrape | None = None

    def scrape(self) -> Scrape:
        at = math.floor(self.cluster.now() / SAMPLE) * SAMPLE
        with self._lock:
            if self._scrape is None or self._scrape.at != at:
                self._scrape = self._collect(at)
            return self._scrape

    def _collect(self, at: float) -> Scrape:
        scrape = Scrape(at)
        ts = rfc3339(at)
        with self.cluster.runtime_lock:
            pods = list(self.cluster.runtime.values())
        node_use: dict[str, list[float]] = {}
        for prt in pods:
            containers = []
            for c in prt.containers:
                use = observed(c.profile, c.key, c.life, at, c.cpu_limit, c.memory_limit)
                if use is None:
                    continue
                containers.append(
                    {
                        "name": c.name,
                        "usage": {
                            "cpu": quantity.format_nanocores(use[0]),
                            "memory": quantity.format_kibibytes(use[1]),
                        },
                    }
                )
                total = node_use.setdefault(prt.node, [0.0, 0.0])
                total[0] += use[0]
                total[1] += use[1]
            if not containers:
                continue  # metrics-server leaves out pods it has no container metrics for
            obj = {
                "kind": "PodMetrics",
                "apiVersion": "metrics.k8s.io/v1beta1",
                "metadata": {
                    "name": prt.name,
                    "namespace": prt.namespace,
                    "creationTimestamp": ts,
                    "labels": prt.labels,
                },
                "timestamp": ts,
                "window": f"{int(SAMPLE)}s",
                "containers": containers,
            }
            scrape.pods[(prt.namespace, prt.name)] = (prt.labels, dumps(obj))
        for _, entry in self.cluster.store.scan(NODE)[0]:
            name = entry.obj["metadata"]["name"]
            labels = entry.obj["metadata"].get("labels") or {}
            cpu, mem = node_use.get(name, [0.0, 0.0])
            obj = {
                "kind": "NodeMetrics",
                "apiVersion": "metrics.k8s.io/v1beta1",
                "metadata": {"name": name, "creationTimestamp": ts, "labels": labels},
                "timestamp": ts,
                "window": f"{int(SAMPLE)}s",
                "usage": {
                    "cpu": quantity.format_nanocores(cpu + NODE_OVERHEAD_CORES),
                    "memory": quantity.format_kibibytes(mem + NODE_OVERHEAD_BYTES),
                },
            }
            scrape.nodes[name] = (labels, dumps(obj))
        return scrape
