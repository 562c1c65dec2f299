"""Usage history from Prometheus (cAdvisor series), so a new recommender starts with days of data.

Loaded once at start, for workloads without a checkpoint. Series are matched to workloads through
the pods in the cache. A pod that no longer exists (replaced by a rollout, say) is attributed as
VPA attributes it, through its labels: with RIGHTSIZER_PROMETHEUS_POD_LABELS_METRIC (VPA's
`--metric-for-pod-labels`: `kube_pod_labels` of kube-state-metrics, or `up{job="kubernetes-pods"}`
with the `pod_label_` prefix), its last labels are read and it goes to the one workload of its
namespace whose selector matches them (the six well-known kinds' selectors, from the cache);
without that metric, or without exactly one match, its series are skipped (logged). Queries (app/
prometheus/client.py): the CPU usage rate and the memory working set, the series metrics-server
itself is built on, with VPA's metric and label names configurable. While Prometheus is down (it
cannot be reached, times out or answers 5xx) the load is tried again, backing off (2 s, doubling,
at most 60 s between attempts) for at most RIGHTSIZER_PROMETHEUS_RETRY_SECONDS; then, or at once
for an error waiting does not fix (credentials, TLS, a refused query), the recommender starts
without history and says why.

The samples are fed oldest first (app.core.recommend.timeline.replay), so the recommendation
history gets the point an hour the running recommender would have written over those days (its
target, the usage percentiles of the hour, the requests the pods have now) instead of one point
at start: the dashboard's charts start with the history, not empty.
"""

from __future__ import annotations

import heapq
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from app.core.recommend.array_model import ArrayModel
from app.core.recommend.timeline import HistoryPoint, Sample, replay
from app.core.recommendation import ContainerPolicy
from app.core.savings import pod_requests
from app.core.selectors import LabelSelector
from app.core.workload_key import WorkloadKey
from app.documents.selector import parse_selector
from app.kube.cluster import ClusterView
from app.prometheus.client import HistoryError, PrometheusClient, cpu_query, memory_query
from app.settings import PrometheusSettings

log = logging.getLogger(__name__)
MAX_DELAY = 60.0  # seconds between two attempts, at most

__all__ = ["HistoryError", "HistoryLoad", "PrometheusHistory"]


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
Tracked = Callable[[WorkloadKey, Mapping[str, str]], bool]
Target = tuple[WorkloadKey, dict[str, float]]  # a pod's workload, its containers' CPU requests


class HistorySource(Protocol):
    """What the recommender's start asks of a history source (PrometheusHistory): feed the
    model the usage of the workloads not in `have`, and say what was fed."""

    def __call__(
        self,
        model: ArrayModel,
        cluster: ClusterView,
        have: set[WorkloadKey],
        policies_for: PoliciesFor | None = None,
        /,
        *,
        tracked: Tracked | None = None,
        on_sample: Callable[[Sample], None] | None = None,
    ) -> HistoryLoad: ...


class PrometheusHistory:
    def __init__(
        self,
        settings: PrometheusSettings,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.settings, self.clock, self.sleep = settings, clock, sleep
        self.client = PrometheusClient(settings)
        self.step, self.window = settings.step, settings.history_seconds

    def query_range(self, query: str, start: float, end: float) -> list[dict[str, Any]]:
        return self.client.query_range(query, start, end)

    def __call__(
        self,
        model: ArrayModel,
        cluster: ClusterView,
        have: set[WorkloadKey],
        policies_for: PoliciesFor | None = None,
        tracked: Tracked | None = None,
        on_sample: Callable[[Sample], None] | None = None,
    ) -> HistoryLoad:
        """Feeds history into `model` for workloads not in `have` (and `tracked`, when given),
        oldest sample first; `on_sample` sees each sample as it is fed (the node groups of
        DaemonSets take theirs, app.jobs.node_groups)."""
        targets: dict[tuple[str, str], Target] = {}
        pods_of: dict[tuple[WorkloadKey, str], list[tuple[int | None, int | None]]] = {}
        for pod in cluster.pods.items():
            w = cluster.workload_of(pod)
            if w is None or w in have or (tracked is not None and not tracked(w, pod.labels)):
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
            cpu, memory, labels = self._fetch(start, end)
        except HistoryError as e:
            log.warning("no history loaded: %s", e)
            return HistoryLoad()
        gone = _GonePods(labels, _selectors(cluster, targets.values()), targets)
        series, skipped = [], 0
        for series_list, is_cpu in ((cpu, True), (memory, False)):
            for one in series_list:
                samples = _samples(one, targets, is_cpu, self.settings, gone)
                if samples is None:
                    skipped += 1
                else:
                    series.append(samples)
        if gone.attributed:
            log.info(
                "history: %d series of deleted pods attributed by their labels", gone.attributed
            )
        if skipped:
            log.info("history: %d series of pods not in the cluster any more were skipped", skipped)
        merged: Iterable[Sample] = heapq.merge(*series, key=lambda s: s.time)
        if on_sample is not None:
            merged = _seen(merged, on_sample)
        fed, points = replay(model, merged, policies_for)
        typical = {}
        for key, pairs in pods_of.items():
            summary = pod_requests(pairs)
            typical[key] = (summary.typical_cpu, summary.typical_memory)
        return HistoryLoad(fed, points, typical)

    def _fetch(
        self, start: float, end: float
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[tuple[str, str], dict[str, str]]]:
        """The CPU and memory series and the deleted pods' labels, retried with back-off while
        Prometheus is down (HistoryError.retry) for at most `retry_seconds`."""
        s = self.settings
        waited, delay = 0.0, 2.0
        while True:
            try:
                cpu = self.client.query_range(cpu_query(s), start, end)
                memory = self.client.query_range(memory_query(s), start, end)
                labels = self._pod_labels(start, end) if s.pod_labels_metric else {}
                return cpu, memory, labels
            except HistoryError as e:
                if not e.retry or waited + delay > s.retry_seconds:
                    raise
                log.warning(
                    "Prometheus history not loaded yet: %s; trying again in %.0fs", e, delay
                )
                self.sleep(delay)
                waited += delay
                delay = min(delay * 2, MAX_DELAY)

    def _pod_labels(self, start: float, end: float) -> dict[tuple[str, str], dict[str, str]]:
        """(namespace, pod) -> the pod's labels as last seen (VPA's readLastLabels)."""
        s = self.settings
        out: dict[tuple[str, str], dict[str, str]] = {}
        last: dict[tuple[str, str], float] = {}
        for series in self.client.query_range(s.pod_labels_metric, start, end):
            metric = series.get("metric") or {}
            key = (metric.get(s.pod_namespace_label, ""), metric.get(s.pod_name_label, ""))
            times = [float(t) for t, _ in series.get("values") or []]
            if not all(key) or not times or max(times) < last.get(key, -1.0):
                continue
            last[key] = max(times)
            out[key] = {
                k[len(s.pod_label_prefix) :]: v
                for k, v in metric.items()
                if k.startswith(s.pod_label_prefix)
            }
        return out


def _selectors(cluster: ClusterView, targets: Iterable[Target]) -> dict[WorkloadKey, LabelSelector]:
    """The selectors of the live workloads of the well-known kinds (from the cache)."""
    out: dict[WorkloadKey, LabelSelector] = {}
    for w, _ in targets:
        if w in out:
            continue
        obj = cluster.lookup(w.namespace, w.kind, w.name) or {}
        selector = (obj.get("spec") or {}).get("selector")
        if isinstance(selector, dict) and selector:
            errors: list[Any] = []
            parsed = parse_selector(selector, "selector", errors)
            if not errors:
                out[w] = parsed
    return out


class _GonePods:
    """Which live workload a deleted pod's series belong to, by the pod's last labels."""

    def __init__(
        self,
        labels: dict[tuple[str, str], dict[str, str]],
        selectors: dict[WorkloadKey, LabelSelector],
        targets: dict[tuple[str, str], Target],
    ) -> None:
        self.labels, self.selectors = labels, selectors
        self.requests: dict[WorkloadKey, dict[str, float]] = {}
        for w, requests_ in targets.values():
            self.requests.setdefault(w, requests_)
        self.attributed = 0

    def target(self, namespace: str, pod: str) -> Target | None:
        labels = self.labels.get((namespace, pod))
        if labels is None:
            return None
        found = [
            w
            for w, sel in self.selectors.items()
            if w.namespace == namespace and sel.size and sel.matches(labels)
        ]
        if len(found) != 1:
            return None  # none, or ambiguous: not guessed
        self.attributed += 1
        return found[0], self.requests[found[0]]


def _samples(
    series: dict[str, Any],
    targets: dict[tuple[str, str], Target],
    is_cpu: bool,
    s: PrometheusSettings,
    gone: _GonePods,
) -> Iterator[Sample] | None:
    """One Prometheus series as samples, oldest first; None if no live or known pod's container."""
    labels = series.get("metric") or {}
    namespace, pod = labels.get(s.namespace_label, ""), labels.get(s.pod_label, "")
    target = targets.get((namespace, pod)) or gone.target(namespace, pod)
    container = labels.get(s.container_label, "")
    if target is None or container not in target[1]:
        return None
    w, requests_ = target
    values = sorted((float(t), float(v)) for t, v in series.get("values") or [])
    if is_cpu:
        return iter([Sample(t, w, pod, container, v, requests_[container]) for t, v in values])
    return iter([Sample(t, w, pod, container, memory_bytes=v) for t, v in values])


def _seen(samples: Iterable[Sample], see: Callable[[Sample], None]) -> Iterator[Sample]:
    for s in samples:
        see(s)
        yield s
