"""The service's settings as one frozen, typed object, grouped by the part that uses them.

app/config.py builds it once from the RIGHTSIZER_* variables (its table says which variable fills
which field; docs/configuration.md documents them) and `create_app` keeps it on the Flask app:
code reads `settings_of(app)` or, inside a request or command, `settings()`, and hands each part
the group it needs. Nothing here has a default: every value comes from that table.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import Flask, current_app

from app.core.placement.table import PlacementOptions
from app.core.recommend.settings import RecommenderSettings
from app.core.scope import ALWAYS_EXCLUDED
from app.core.sizing.priority import UpdaterSettings

EXTENSION = "rightsizer.settings"


@dataclass(frozen=True)
class ClusterSettings:
    kubeconfig: str  # empty: in-cluster config in a pod, else $KUBECONFIG or ~/.kube/config
    namespace: str  # rightsizer's own
    excluded_namespaces: frozenset[str]
    kube_api_qps: float  # the jobs' client-side request rate limit (0: none), as client-go's QPS
    kube_api_burst: int  # requests sent at once before the limit applies, as client-go's Burst
    # The cluster's identity in a shared database (app.store.clusters); empty: the kube-system
    # namespace's uid, read at start by a process that reaches the cluster.
    cluster_id: str
    cluster_name: str  # shown in the fleet view; empty: the id
    cluster_labels: tuple[tuple[str, str], ...]  # what policies select clusters by

    @property
    def left_alone(self) -> frozenset[str]:
        """Namespaces the jobs never act on: the excluded ones and rightsizer's own."""
        return self.excluded_namespaces | {self.namespace}

    @property
    def never_sized(self) -> frozenset[str]:
        """Namespaces the webhook configuration's namespaceSelector keeps out (kube-system too):
        their pods come back from an eviction exactly as written, so the updater leaves them
        alone as well."""
        return frozenset({*ALWAYS_EXCLUDED, *self.left_alone})


@dataclass(frozen=True)
class RecommenderJobSettings:
    interval: float
    checkpoint_batch_size: int
    idle_after_seconds: float
    gc_grace_seconds: float
    checkpoint_interval_seconds: float
    model: RecommenderSettings
    # which workloads are learned (app.jobs.tracking): {"all"}, or "policies" and/or "labelled"
    track: frozenset[str]
    track_label: str  # the namespace label of "labelled" (Goldilocks' habit)


@dataclass(frozen=True)
class PrometheusSettings:
    url: str  # empty: no history loaded at start
    step: float
    history_seconds: float
    # how to reach it (app.prometheus.client): one of bearer token, token file, or basic auth
    bearer_token: str
    bearer_token_file: str  # read at each load: a rotated token is used
    username: str
    password: str
    password_file: str
    ca_file: str  # empty: the system's trusted CAs
    client_cert_file: str
    client_key_file: str
    insecure: bool  # skip verifying the server's certificate
    headers: tuple[tuple[str, str], ...]  # sent with every query (a tenant: X-Scope-OrgID)
    query_timeout_seconds: float
    retry_seconds: float  # how long a first load retries while it is down, backing off
    # what to query (app.jobs.history): VPA's prometheus history provider flags
    cadvisor_job_name: str  # empty: no job matcher
    cpu_metric: str
    memory_metric: str
    namespace_label: str
    pod_label: str
    container_label: str
    pod_labels_metric: str  # empty: deleted pods' history is not attributed
    pod_label_prefix: str
    pod_namespace_label: str
    pod_name_label: str


@dataclass(frozen=True)
class ScalerJobSettings:
    interval: float


@dataclass(frozen=True)
class UpdaterJobSettings:
    interval: float
    dry_run: bool
    min_history_seconds: float
    evictions_per_second: float
    eviction_burst: int
    evictions_in_flight: int
    sizing: UpdaterSettings


@dataclass(frozen=True)
class LeaseSettings:
    name: str
    namespace: str  # empty: the cluster settings' namespace
    duration: float
    renew_deadline: float
    retry_period: float


@dataclass(frozen=True)
class ServingSettings:
    bind: str  # empty: 0.0.0.0:8080, or 0.0.0.0:8443 with TLS
    workers: int
    threads: int
    access_log: bool
    tls_cert_file: str
    tls_key_file: str
    # seconds a client may take for each stage of a request (app.serving.intake), each capped at
    # the webhook's timeout
    tls_handshake_timeout_seconds: float
    header_timeout_seconds: float
    body_timeout_seconds: float


@dataclass(frozen=True)
class AuthSettings:
    mode: str  # "tokens" or "kubernetes"
    token_file: str
    public_reads: bool
    api_group: str
    cache_seconds: float


@dataclass(frozen=True)
class ApiSettings:
    max_body_bytes: int


@dataclass(frozen=True)
class WebhookSettings:
    cache_refresh_seconds: float
    cache_max_age_seconds: float
    register: bool | str  # True, False or "auto"
    audit_interval_seconds: float
    watch_cluster: bool | str  # True, False or "auto"
    config_name: str
    service: str
    port: int
    url: str
    probe_address: str
    timeout_seconds: int
    max_cpu_boost: int  # millicores; 0: a startup boost is not capped
    placement_scheduler: str  # `placement: waterLevel` pods get it; "": off


@dataclass(frozen=True)
class CertSettings:
    directory: str
    rotate: bool
    secret: str
    check_seconds: float
    extra_names: frozenset[str]


@dataclass(frozen=True)
class DashboardSettings:
    price_per_core_hour: float  # of a requested core, in `currency`
    price_per_gib_hour: float  # of a requested GiB of memory
    currency: str  # written before amounts: "$", "€", "CHF "


@dataclass(frozen=True)
class PlacementSettings:
    """Water-level placement: the leader's node levels, the extender (docs/placement.md)."""

    interval: float  # seconds between the leader's NodeMetrics samples
    refresh_seconds: float  # how often each server process reloads the levels
    window_weights: tuple[float, float, float]  # 15m, 1h, 1d
    min_weight: float  # `w` of the ideal level
    filter_threshold: float  # 0: no filter
    ahead_hours: int  # the levels ahead (one an hour) from the pods' daily profiles; 0: none
    ahead_weight: float  # their weight against the windows' weights' sum
    spread_weight: float  # the share of the score that is the cluster's spread ahead
    spread_memory_weight: float  # the memory spread's weight in it, against the CPU's 1

    def options(self) -> PlacementOptions:
        """What the extender scores with (and the dashboard's current_scores)."""
        return PlacementOptions(
            self.window_weights,
            self.min_weight,
            self.filter_threshold,
            self.ahead_weight,
            self.spread_weight,
            self.spread_memory_weight,
        )


@dataclass(frozen=True)
class Settings:
    database_url: str
    log_level: str
    jobs: bool
    cluster: ClusterSettings
    recommender: RecommenderJobSettings
    prometheus: PrometheusSettings
    scaler: ScalerJobSettings
    updater: UpdaterJobSettings
    lease: LeaseSettings
    serving: ServingSettings
    auth: AuthSettings
    api: ApiSettings
    webhook: WebhookSettings
    certs: CertSettings
    dashboard: DashboardSettings
    placement: PlacementSettings


def settings_of(app: Flask) -> Settings:
    """The settings `create_app` built for `app`."""
    found: Settings = app.extensions[EXTENSION]
    return found


def settings() -> Settings:
    """The settings of the application handling the current request or command."""
    return settings_of(current_app)
