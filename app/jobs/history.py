"""Usage history from Prometheus (cAdvisor series), so a new recommender starts with days of data.

Loaded once at start, for workloads without a checkpoint. Series are matched to workloads through
the pods in the cache: history of pods that no longer exist cannot be attributed without their
labels, so it is skipped (logged). Queries: the CPU usage rate and the memory working set, the
series metrics-server itself is built on.

The samples are fed oldest first (app.core.recommend.timeline.replay), so the recommendation
history gets the point an hour the running recommender would have written over those days (its
target, the usage percentiles of the hour, the requests the pods have now) instead of one point
at start: the dashboard's charts start with the history, not empty.
"""

from __future__ import annotations

import heapq
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from app.core.recommend.capping import ContainerPolicy
from app.core.recommend.model import UsageModel, WorkloadKey
from app.core.recommend.timeline import HistoryPoint, Sample, replay
from app.core.savings import pod_requests
from app.kube.cluster import ClusterView

log = logging.getLogger(__name__)

CPU_QUERY = 'rate(container_cpu_usage_seconds_total{container!="",container!="POD"}[5m])'
MEMORY_QUERY = 'container_memory_working_set_bytes{container!="",container!="POD"}'


class HistoryError(RuntimeError):
    pass


@dataclass
class HistoryLoad:
    """What a load fed into the model, and the history points its replay wrote."""

    fed: int = 0
    points: list[HistoryPoint] = field(default_factory=list)
    # the typical (cpu, memory) request of each container's pods now, for the points
    requests: dict[tuple[WorkloadKey, str], tuple[int | None, int | None]] = field(
        default_factory=dict
    )


PoliciesFor = Callable[[WorkloadKey], list[ContainerPolicy]]


class PrometheusHistory:
    def __init__(
        self,
        url: str,
        step: float,
        window: float,
        clock: Callable[[], float] = time.time,
        timeout: float = 60.0,
    ) -> None:
        self.url, self.step, self.window, self.clock, self.timeout = (
            url.rstrip("/"),
            step,
            window,
            clock,
            timeout,
        )
        self.session = requests.Session()
        retry = Retry(
            total=3, backoff_factor=0.5, status_forcelist=(502, 503, 504), allowed_methods=("GET",)
        )
        self.session.mount("http://", HTTPAdapter(max_retries=retry))
        self.session.mount("https://", HTTPAdapter(max_retries=retry))

    def query_range(self, query: str, start: float, end: float) -> list[dict[str, Any]]:
        try:
            resp = self.session.get(
                f"{self.url}/api/v1/query_range",
                params={
                    "query": query,
                    "start": f"{start:.3f}",
                    "end": f"{end:.3f}",
                    "step": f"{self.step:g}",
                },
                timeout=self.timeout,
            )
            body = resp.json()
        except (requests.RequestException, ValueError) as e:
            raise HistoryError(f"Prometheus query failed: {e}") from None
        if resp.status_code != 200 or body.get("status") != "success":
            raise HistoryError(
                f"Prometheus answered {resp.status_code}: {body.get('error') or body}"
            )
        data = body.get("data") or {}
        if data.get("resultType") != "matrix":
            raise HistoryError(f"expected a matrix, got {data.get('resultType')!r}")
        return list(data.get("result") or [])

    def __call__(
        self,
        model: UsageModel,
        cluster: ClusterView,
        have: set[WorkloadKey],
        policies_for: PoliciesFor | None = None,
    ) -> HistoryLoad:
        """Feeds history into `model` for workloads not in `have`, oldest sample first."""
        targets: dict[tuple[str, str], tuple[WorkloadKey, dict[str, float]]] = {}
        pods_of: dict[tuple[WorkloadKey, str], list[tuple[int | None, int | None]]] = {}
        for pod in cluster.pods.items():
            w = cluster.workload_of(pod)
            if w is None or w in have:
                continue
            resources = pod.resources()
            requests_ = {n: (r.cpu_request or 0) / 1000.0 for n, r in resources.items()}
            targets[(pod.namespace, pod.name)] = (w, requests_)
            for n, r in resources.items():
                pods_of.setdefault((w, n), []).append((r.cpu_request, r.memory_request))
        if not targets:
            return HistoryLoad()
        end = self.clock()
        start = end - self.window
        try:
            cpu = self.query_range(CPU_QUERY, start, end)
            memory = self.query_range(MEMORY_QUERY, start, end)
        except HistoryError as e:
            log.warning("no history loaded: %s", e)
            return HistoryLoad()
        series, skipped = [], 0
        for series_list, is_cpu in ((cpu, True), (memory, False)):
            for one in series_list:
                samples = _samples(one, targets, is_cpu)
                if samples is None:
                    skipped += 1
                else:
                    series.append(samples)
        if skipped:
            log.info("history: %d series of pods not in the cluster any more were skipped", skipped)
        fed, points = replay(model, heapq.merge(*series, key=lambda s: s.time), policies_for)
        typical = {}
        for key, pairs in pods_of.items():
            summary = pod_requests(pairs)
            typical[key] = (summary.typical_cpu, summary.typical_memory)
        return HistoryLoad(fed, points, typical)


def _samples(
    series: dict[str, Any],
    targets: dict[tuple[str, str], tuple[WorkloadKey, dict[str, float]]],
    is_cpu: bool,
) -> Iterator[Sample] | None:
    """One Prometheus series as samples, oldest first; None if no live pod's container."""
    labels = series.get("metric") or {}
    target = targets.get((labels.get("namespace", ""), labels.get("pod", "")))
    container = labels.get("container", "")
    if target is None or container not in target[1]:
        return None
    w, requests_ = target
    pod = labels["pod"]
    values = sorted((float(t), float(v)) for t, v in series.get("values") or [])
    if is_cpu:
        return iter([Sample(t, w, pod, container, v, requests_[container]) for t, v in values])
    return iter([Sample(t, w, pod, container, memory_bytes=v) for t, v in values])
