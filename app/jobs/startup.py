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

from app.core.placement.profile import Profiles
from app.jobs.history import PrometheusHistory
from app.jobs.node_levels import NodeLevelsJob
from app.jobs.recommender import RecommenderJob
from app.jobs.runner import Job, JobRunner
from app.jobs.scaler import ScalerJob
from app.jobs.updater import UpdaterJob
from app.kube.actions import PodActions
from app.kube.client import api_client
from app.kube.cluster import ClusterView
from app.kube.leader import LeaderElector
from app.kube.limitranges import LimitRangeCache
from app.kube.scale import ScaleClient
from app.kube.webhook_probe import webhook_serving
from app.settings import Settings
from app.store.session import SessionFactory

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


def build_jobs(settings: Settings, sessions: SessionFactory) -> Jobs:
    """The jobs of `settings`, each given `sessions`, a session factory on the app's database
    (app.store.session.app_sessions): the jobs know no Flask."""
    kube = settings.cluster
    # Every call the recommender and updater make waits for one client-side rate limiter
    # (client-go's QPS/Burst). The Lease has a client of its own, so that evictions never hold
    # up its renewals; so has the scaler (a bucket of its own at the same QPS/burst), so that a
    # busy recommender or updater never delays its few calls a run by seconds.
    api = api_client(kube.kubeconfig or None, qps=kube.kube_api_qps, burst=kube.kube_api_burst)
    scaler_api = api_client(
        kube.kubeconfig or None, qps=kube.kube_api_qps, burst=kube.kube_api_burst
    )
    lease_api = api_client(kube.kubeconfig or None)
    cluster = ClusterView(api)
    history = None
    prometheus = settings.prometheus
    if prometheus.url:
        history = PrometheusHistory(prometheus)
    webhook = settings.webhook
    elector_box: list[LeaderElector] = []
    limit_ranges = LimitRangeCache(api)  # the updater sizes pods as the webhook does
    # the workloads' daily profiles: the recommender feeds them, the node-levels job reads them
    placement = settings.placement
    profiles = Profiles() if placement.ahead_hours else None
    recommender = RecommenderJob(
        sessions, cluster, settings, history, limit_ranges=limit_ranges, profiles=profiles
    )
    jobs: list[Job] = [
        recommender,
        ScalerJob(sessions, cluster, ScaleClient(scaler_api), settings.scaler.interval),
        UpdaterJob(
            sessions,
            cluster,
            PodActions(api, dry_run=settings.updater.dry_run),
            settings,
            lambda: webhook_serving(api, webhook.config_name, webhook.probe_address),
            limit_ranges=limit_ranges,
        ),
        NodeLevelsJob(
            sessions,
            cluster,
            placement.interval,
            profiles=profiles,
            ahead_hours=placement.ahead_hours,
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

    lease = settings.lease
    elector = LeaderElector(
        lease_api,
        lease.name,
        lease.namespace or settings.cluster.namespace,
        identity(),
        started,
        stopped,
        lease_duration=lease.duration,
        renew_deadline=lease.renew_deadline,
        retry_period=lease.retry_period,
    )
    elector_box.append(elector)
    return Jobs(elector, runner, cluster, limit_ranges)


def start_jobs(settings: Settings, sessions: SessionFactory) -> Jobs:
    jobs = build_jobs(settings, sessions)
    jobs.elector.start()
    atexit.register(jobs.stop)  # gunicorn workers exit normally on SIGTERM: hand the lease back
    log.info("campaigning for lease %s as %s", jobs.elector.name, jobs.elector.identity)
    return jobs
