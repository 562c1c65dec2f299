"""Starts the background jobs in this process when RIGHTSIZER_JOBS is on.

Every process campaigns for the Lease; the winner starts the informers and the jobs, the others
only serve HTTP. Caches are filled on becoming leader (not in every worker), so N workers x M
replicas put the LIST load of one client on the API server.
"""

from __future__ import annotations

import atexit
import logging
import os
import socket
import uuid
from dataclasses import dataclass
from typing import Any

from flask import Flask

from app.core.sizing.priority import UpdaterSettings
from app.jobs.history import PrometheusHistory
from app.jobs.recommender import RecommenderJob, RecommenderOptions
from app.jobs.runner import Job, JobRunner
from app.jobs.scaler import ScalerJob
from app.jobs.updater import UpdaterJob, UpdaterOptions
from app.kube.actions import PodActions
from app.kube.client import api_client
from app.kube.cluster import ClusterView
from app.kube.leader import LeaderElector
from app.kube.limitranges import LimitRangeCache
from app.kube.scale import ScaleClient
from app.kube.webhook_probe import webhook_serving

log = logging.getLogger(__name__)


@dataclass
class Jobs:
    elector: LeaderElector
    runner: JobRunner
    cluster: ClusterView
    limit_ranges: LimitRangeCache

    def stop(self) -> None:
        """Jobs first, then the Lease (so the next leader can start at once), then the caches."""
        self.elector.stop()
        self.cluster.stop()
        self.limit_ranges.stop()


def identity() -> str:
    return f"{socket.gethostname()}_{os.getpid()}_{uuid.uuid4().hex[:6]}"


def updater_options(cfg: Any) -> UpdaterOptions:
    return UpdaterOptions(
        interval=cfg["UPDATER_INTERVAL"],
        settings=UpdaterSettings(
            min_lifetime_seconds=cfg["UPDATER_MIN_LIFETIME_SECONDS"],
            min_change=cfg["UPDATER_MIN_CHANGE"],
            quick_oom_seconds=cfg["UPDATER_QUICK_OOM_SECONDS"],
            eviction_tolerance=cfg["EVICTION_TOLERANCE"],
            default_min_replicas=cfg["UPDATER_MIN_REPLICAS"],
        ),
        min_history_seconds=cfg["UPDATER_MIN_HISTORY_SECONDS"],
        evictions_per_second=cfg["EVICTIONS_PER_SECOND"],
        eviction_burst=cfg["EVICTION_BURST"],
        dry_run=cfg["UPDATER_DRY_RUN"],
        excluded_namespaces=cfg["EXCLUDED_NAMESPACES"] | {cfg["NAMESPACE"]},
        # Every webhook process reloads policies on this period: until then a pod evicted under a
        # new or changed policy would come back without it and be disrupted twice.
        policy_settle_seconds=2 * cfg["WEBHOOK_CACHE_REFRESH_SECONDS"],
    )


def build_jobs(app: Flask) -> Jobs:
    cfg = app.config
    api = api_client(cfg["KUBECONFIG"] or None)
    cluster = ClusterView(api)
    history = None
    if cfg["PROMETHEUS_URL"]:
        history = PrometheusHistory(
            cfg["PROMETHEUS_URL"], cfg["PROMETHEUS_STEP"], cfg["PROMETHEUS_HISTORY_SECONDS"]
        )
    options = RecommenderOptions(
        interval=cfg["RECOMMENDER_INTERVAL"],
        excluded_namespaces=cfg["EXCLUDED_NAMESPACES"] | {cfg["NAMESPACE"]},
        idle_after=cfg["IDLE_AFTER_SECONDS"],
        gc_grace=cfg["GC_GRACE_SECONDS"],
        batch_size=cfg["CHECKPOINT_BATCH_SIZE"],
    )
    elector_box: list[LeaderElector] = []
    limit_ranges = LimitRangeCache(api)  # the updater sizes pods as the webhook does
    recommender = RecommenderJob(app, cluster, options, history)
    jobs: list[Job] = [
        recommender,
        ScalerJob(app, cluster, ScaleClient(api), cfg["SCALER_INTERVAL"]),
        UpdaterJob(
            app,
            cluster,
            PodActions(api, dry_run=cfg["UPDATER_DRY_RUN"]),
            updater_options(cfg),
            lambda: webhook_serving(api, cfg["WEBHOOK_CONFIG_NAME"], cfg["WEBHOOK_PROBE_ADDRESS"]),
            limit_ranges=limit_ranges,
        ),
    ]
    runner = JobRunner(jobs, lambda: elector_box[0].is_leader())

    def started() -> None:
        recommender.forget()  # a new term: resume from the checkpoints, not a stale model
        cluster.start()
        limit_ranges.start()
        runner.start()

    def stopped() -> None:
        runner.stop()

    elector = LeaderElector(
        api,
        cfg["LEASE_NAME"],
        cfg["LEASE_NAMESPACE"] or cfg["NAMESPACE"],
        identity(),
        started,
        stopped,
        lease_duration=cfg["LEASE_DURATION"],
        renew_deadline=cfg["LEASE_RENEW_DEADLINE"],
        retry_period=cfg["LEASE_RETRY_PERIOD"],
    )
    elector_box.append(elector)
    return Jobs(elector, runner, cluster, limit_ranges)


def start_jobs(app: Flask) -> Jobs:
    jobs = build_jobs(app)
    jobs.elector.start()
    atexit.register(jobs.stop)  # gunicorn workers exit normally on SIGTERM: hand the lease back
    log.info("campaigning for lease %s as %s", jobs.elector.name, jobs.elector.identity)
    return jobs
