"""`rightsizer recommend --from-csv` gives what the running recommender job gives for the same
samples, also across a gap longer than the idle limit (8 days) (issue #15).

The job is the real RecommenderJob (its feed, expiry and recommend code), run once a minute while
the trace has samples and once an hour through the gap, over a cluster view that serves the
trace's samples as metrics.k8s.io PodMetrics; the replay is the real CLI in its own process.
"""

from __future__ import annotations

import bisect
import json
import random
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from app.core.nodes import NodeView
from app.core.pods import PodView
from app.core.recommend.podmetrics import PodMetrics, decode_pod_metrics_list
from app.core.recommend.trace import recommendations_json
from app.core.sizing.node_fit import DaemonTemplate
from app.core.workload_key import WorkloadKey
from tests.support.recommender_runs import recommender_job

NS = "shop"
DAY = 86400
START = 1_780_000_000  # whole minutes
WEB = WorkloadKey(NS, "Deployment", "web")
CLOCK = WorkloadKey(NS, "Deployment", "other")


def samples(seed: int, start: int, minutes: int) -> list[tuple[int, int, int]]:
    """(time, CPU millicores, memory bytes) once a minute."""
    rnd = random.Random(seed)
    return [
        (start + 60 * i, rnd.randint(50, 900), rnd.randint(200, 700) * 2**20)
        for i in range(minutes)
    ]


def pod(name: str) -> PodView:
    return PodView.parse(
        {
            "metadata": {"namespace": NS, "name": name, "uid": f"uid-{name}", "labels": {}},
            "spec": {
                "containers": [
                    {"name": "app", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}
                ]
            },
            "status": {},
        }
    )


def pod_metrics(name: str, t: int, millicores: int, memory: int) -> dict[str, Any]:
    stamp = datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "metadata": {"namespace": NS, "name": name},
        "timestamp": stamp,
        "window": "15s",
        "containers": [{"name": "app", "usage": {"cpu": f"{millicores}m", "memory": str(memory)}}],
    }


class Pods:
    def __init__(self) -> None:
        self.live: list[PodView] = []
        self.owners: dict[str, WorkloadKey] = {}
        self.added = 0  # pods added: their owners may differ from the last run's

    def items(self) -> list[PodView]:
        return self.live

    def snapshot(self) -> dict[tuple[str, str], PodView]:
        return {(p.namespace, p.name): p for p in self.live}

    def add(self, name: str, workload: WorkloadKey) -> None:
        self.live.append(pod(name))
        self.owners[name] = workload
        self.added += 1


class TraceCluster:
    """The part of ClusterView the recommender job reads, serving one run's PodMetrics."""

    def __init__(self) -> None:
        self.pods = Pods()
        self.metrics: list[dict[str, Any]] = []

    def wait_synced(self, timeout: float) -> bool:
        return True

    def pod_metrics(self) -> list[PodMetrics]:
        """The LIST, read as ClusterView reads it."""
        return decode_pod_metrics_list(json.dumps({"items": self.metrics}).encode())

    def workload_of(self, p: PodView) -> WorkloadKey:
        return self.pods.owners[p.name]

    def owners_version(self) -> tuple[int, ...]:
        """ClusterView.owners_version: moves when `workload_of` may answer otherwise."""
        return (self.pods.added,)

    def hpa_conflicts(self) -> dict[WorkloadKey, dict[str, str]]:
        return {}

    def node_views(self) -> list[NodeView]:
        return []  # no node known: nothing capped to fit one

    def daemon_templates(self) -> list[DaemonTemplate]:
        return []

    def workload_exists(self, w: WorkloadKey) -> bool:
        return True


def service(app: Flask, trace: list[tuple[int, int, int]], other_workload: bool) -> Any:
    """The job's recommendation for `web` after running through the trace as a service would:
    every minute with samples, every hour through gaps (the pod gone meanwhile)."""
    cluster = TraceCluster()
    job = recommender_job(app, cluster, time.time)
    by_time = {t: (cpu, mem) for t, cpu, mem in trace}
    times = sorted(by_time)
    t = times[0]
    while True:
        cluster.metrics, cluster.pods.live = [], []
        if t in by_time:
            cluster.pods.add("web-0", WEB)
            cluster.metrics.append(pod_metrics("web-0", t, *by_time[t]))
        if other_workload:  # another workload reporting all along moves the model's clock
            cluster.pods.add("other-0", CLOCK)
            cluster.metrics.append(pod_metrics("other-0", t, 100, 100 * 2**20))
        job.run_once(lambda: True)
        i = bisect.bisect_right(times, t)
        if i == len(times):
            break
        t = min(times[i], t + 3600)
    return recommendations_json(job.model.recommend(WEB, []))


def replay_cli(tmp_path: Path, trace: list[tuple[int, int, int]]) -> Any:
    path = tmp_path / "trace.csv"
    lines = ["timestamp,pod,container,cpu,memory,cpu_request"]
    lines += [f"{t},web-0,app,{cpu / 1000},{mem},0.5" for t, cpu, mem in trace]
    path.write_text("\n".join(lines) + "\n")
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", "recommend", "--from-csv", str(path), "-o", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout)


@pytest.mark.parametrize("other_workload", [True, False], ids=["busy-cluster", "alone"])
def test_a_nine_day_gap_gives_the_same_recommendation_replayed_and_in_the_service(
    app: Flask, tmp_path: Path, other_workload: bool
) -> None:
    before = samples(1, START, 24 * 60)  # a day
    after = samples(2, before[-1][0] + 9 * DAY + 7 * 3600, 3 * 60)  # 9 days 7 h later: 3 h
    trace = before + after
    replayed = replay_cli(tmp_path, trace)
    assert replayed == service(app, trace, other_workload)
    # The history before the gap expired in both: only the three hours after it count, so the
    # replay of those alone gives the same answer.
    assert replayed == replay_cli(tmp_path, after)
