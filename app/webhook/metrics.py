"""Prometheus metrics of the admission webhook (exposed by the /metrics endpoint of app.api).

Gauges carry `multiprocess_mode` so they aggregate sensibly under gunicorn's several workers
when prometheus_client runs in multiprocess mode. The cache's age is computed at scrape time from
its last load time (`CacheAge`, registered through app.web.probes, which app.api serves).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from app.web.probes import derived_metric

REVIEWS = Counter(
    "rightsizer_webhook_reviews_total",
    "AdmissionReviews answered, by outcome: patched, unchanged, unfit (left unchanged: no sizing "
    "would pass the API server's LimitRange and pod-level checks), invalid_quantity (left "
    "unchanged: a request or limit is not a valid quantity, the API server refuses the pod), "
    "failed_open (allowed without patch because of our own fault), invalid (HTTP 400), "
    "too_large (HTTP 413).",
    ["outcome"],
)
FAILED_OPEN = Counter(
    "rightsizer_webhook_failed_open_total",
    "Reviews allowed without a patch because of rightsizer's own trouble, by reason: "
    "internal_error, cache_empty, cache_stale.",
    ["reason"],
)
DURATION = Histogram(
    "rightsizer_webhook_review_duration_seconds",
    "Time to answer one AdmissionReview inside the application (TLS and queueing excluded).",
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 2.5),
)
CACHE_REFRESHES = Counter(
    "rightsizer_webhook_cache_refreshes_total",
    "Loads of policies and recommendations into the webhook cache, by result: ok, failed.",
    ["result"],
)
CACHE_LAST_SUCCESS = Gauge(
    "rightsizer_webhook_cache_last_success_timestamp_seconds",
    "Unix time of the last successful cache load.",
    multiprocess_mode="max",
)
CACHE_OBJECTS = Gauge(
    "rightsizer_webhook_cache_objects",
    "Objects held by the webhook cache after its last load, by type: policies, recommendations.",
    ["type"],
    multiprocess_mode="max",
)
AUDIT_FLUSHES = Counter(
    "rightsizer_webhook_audit_flushes_total",
    "Writes of the per-workload mutation counts to the audit trail, by result: ok, failed (kept "
    "for the next write).",
    ["result"],
)
AUDIT_DROPPED = Counter(
    "rightsizer_webhook_audit_dropped_total",
    "Pod mutations left out of the audit trail because too many workloads were waiting to be "
    "written (the database down for long).",
)

OUTCOMES = ("patched", "unchanged", "invalid_quantity", "failed_open", "invalid", "too_large")
FAILURE_REASONS = ("internal_error", "cache_empty", "cache_stale")

# Every label value exists from the start, so dashboards show 0 instead of no data.
for _outcome in OUTCOMES:
    REVIEWS.labels(_outcome)
for _reason in FAILURE_REASONS:
    FAILED_OPEN.labels(_reason)
for _result in ("ok", "failed"):
    CACHE_REFRESHES.labels(_result)
    AUDIT_FLUSHES.labels(_result)


LAST_LOAD = "rightsizer_webhook_cache_last_success_timestamp_seconds"


class CacheAge(Collector):
    """rightsizer_webhook_cache_age_seconds: seconds since the newest successful load of the
    webhook cache (over all workers in multiprocess mode); no sample before the first load."""

    def __init__(self, source: Collector) -> None:
        self.source = source

    def collect(self) -> Iterator[Metric]:
        loads = [
            s.value
            for family in self.source.collect()
            for s in family.samples
            if s.name == LAST_LOAD
        ]
        family = GaugeMetricFamily(
            "rightsizer_webhook_cache_age_seconds",
            "Seconds since the webhook cache last loaded policies and recommendations.",
        )
        if loads and max(loads) > 0:
            family.add_metric([], max(0.0, time.time() - max(loads)))
        yield family


derived_metric(CacheAge, CACHE_LAST_SUCCESS)
