"""A cluster of one workload whose pods and metrics are what a test set, for the recommender job
(the parts of app.kube.cluster.ClusterView it reads): every pod is the workload's, its metrics
one scrape at a fixed time with the same usage, and nothing moves by itself. `cache_pod` is a
pod of such a workload whose status shows OOM kills."""

from __future__ import annotations

import json
from typing import Any

from app.core.nodes import NodeView
from app.core.pods import PodView
from app.core.recommend.podmetrics import PodMetrics, decode_pod_metrics_list
from app.core.sizing.node_fit import DaemonTemplate
from app.core.workload_key import WorkloadKey


class Pods:
    def __init__(self) -> None:
        self.live: list[PodView] = []

    def items(self) -> list[PodView]:
        return list(self.live)

    def snapshot(self) -> dict[tuple[str, str], PodView]:
        return {(p.namespace, p.name): p for p in self.live}


class FixedCluster:
    def __init__(
        self, workload: WorkloadKey, container: str, usage: dict[str, str], scrape: str
    ) -> None:
        self.workload, self.container, self.usage, self.scrape = workload, container, usage, scrape
        self.pods = Pods()
        self.owners_moved = 0  # bumped by a test that changes `workload` (owners_version)

    def wait_synced(self, timeout: float) -> bool:
        return True

    def pod_metrics(self) -> list[PodMetrics]:
        """The LIST metrics-server would send, read as ClusterView reads it."""
        items = [
            {
                "metadata": {"name": p.name, "namespace": p.namespace},
                "timestamp": self.scrape,
                "window": "15s",
                "containers": [{"name": self.container, "usage": dict(self.usage)}],
            }
            for p in self.pods.live
        ]
        return decode_pod_metrics_list(json.dumps({"items": items}).encode())

    def workload_of(self, p: PodView) -> WorkloadKey:
        return self.workload

    def owners_version(self) -> tuple[int, ...]:
        return (self.owners_moved,)

    def hpa_conflicts(self) -> dict[WorkloadKey, dict[str, str]]:
        return {}

    def node_views(self) -> list[NodeView]:
        return []  # no node known: nothing capped to fit one

    def daemon_templates(self) -> list[DaemonTemplate]:
        return []

    def workload_exists(self, w: WorkloadKey) -> bool:
        return True


def cache_pod(restarts: int, killed_at: str | None) -> PodView:
    """A StatefulSet's pod (shop/cache-0, container redis), OOM-killed `restarts` times, the
    last at `killed_at`."""
    status: dict[str, Any] = {"name": "redis", "restartCount": restarts}
    if killed_at is not None:
        status["lastState"] = {
            "terminated": {"reason": "OOMKilled", "exitCode": 137, "finishedAt": killed_at}
        }
    return PodView.parse(
        {
            "metadata": {"name": "cache-0", "namespace": "shop", "uid": "uid-0"},
            "spec": {
                "nodeName": "n1",
                "containers": [
                    {
                        "name": "redis",
                        "resources": {
                            "requests": {"cpu": "100m", "memory": "128Mi"},
                            "limits": {"memory": "160Mi"},
                        },
                    }
                ],
            },
            "status": {"phase": "Running", "containerStatuses": [status]},
        }
    )
