"""Runs each job every `interval` seconds, in its own thread, only while this process leads.

A failing run is logged and retried at the next interval; it never takes the process down.
Each run logs one line: what it did and how long it took, and counts in Prometheus metrics
(`rightsizer_job_runs_total{job,outcome}`, `rightsizer_job_run_duration_seconds{job,outcome}`,
`rightsizer_job_last_success_timestamp_seconds{job}`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol

from prometheus_client import Counter, Gauge, Histogram

log = logging.getLogger(__name__)

OUTCOMES = ("ok", "failed")
RUNS = Counter(
    "rightsizer_job_runs",
    "Runs of a background job (recommender, scaler, updater), by job and outcome: ok, failed.",
    ["job", "outcome"],
)
DURATION = Histogram(
    "rightsizer_job_run_duration_seconds",
    "Time one run of a background job took, by job and outcome.",
    ["job", "outcome"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
)
LAST_SUCCESS = Gauge(
    "rightsizer_job_last_success_timestamp_seconds",
    "Unix time a background job last finished a run without error, by job.",
    ["job"],
    multiprocess_mode="max",  # under gunicorn only the leader runs jobs: the newest wins
)


class Job(Protocol):
    name: str
    interval: float

    def run_once(self, still_leader: Callable[[], bool]) -> str:
        """Does one pass and returns a one-line summary. Checks still_leader() before writing."""
        ...


class JobRunner:
    def __init__(self, jobs: list[Job], still_leader: Callable[[], bool] = lambda: True) -> None:
        self.jobs, self.still_leader = jobs, still_leader
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self.runs: dict[str, int] = {job.name: 0 for job in jobs}
        self.failures: dict[str, int] = {job.name: 0 for job in jobs}
        for job in jobs:  # every series exists from the start: 0, not "no data"
            for outcome in OUTCOMES:
                RUNS.labels(job.name, outcome)
                DURATION.labels(job.name, outcome)

    @property
    def running(self) -> bool:
        return bool(self._threads)

    def start(self) -> None:
        with self._lock:
            if self._threads:
                return
            self._stop = threading.Event()
            for job in self.jobs:
                t = threading.Thread(
                    target=self._loop, args=(job, self._stop), name=f"job-{job.name}", daemon=True
                )
                t.start()
                self._threads.append(t)
            log.info("jobs started: %s", ", ".join(j.name for j in self.jobs))

    def stop(self, timeout: float = 30.0) -> None:
        with self._lock:
            self._stop.set()
            threads, self._threads = self._threads, []
        for t in threads:
            t.join(timeout)
        if threads:
            log.info("jobs stopped")

    def _loop(self, job: Job, stop: threading.Event) -> None:
        while not stop.is_set():
            started = time.monotonic()
            self.run_one(job, lambda: not stop.is_set() and self.still_leader())
            stop.wait(max(0.0, job.interval - (time.monotonic() - started)))

    def run_one(self, job: Job, still_leader: Callable[[], bool]) -> bool:
        """One run of `job`: logged, counted and timed. True if it finished without error."""
        started = time.monotonic()
        try:
            summary = job.run_once(still_leader)
        except Exception:
            took = time.monotonic() - started
            self.failures[job.name] += 1
            RUNS.labels(job.name, "failed").inc()
            DURATION.labels(job.name, "failed").observe(took)
            log.exception(
                "%s run failed after %.2fs; retrying in %.0fs", job.name, took, job.interval
            )
            return False
        took = time.monotonic() - started
        self.runs[job.name] += 1
        RUNS.labels(job.name, "ok").inc()
        DURATION.labels(job.name, "ok").observe(took)
        LAST_SUCCESS.labels(job.name).set(time.time())
        log.info("%s run: %s in %.2fs", job.name, summary, took)
        return True
