"""Settings from RIGHTSIZER_* environment variables; every one is in docs/configuration.md.

The table below says which field of the typed `app.settings.Settings` each variable fills, with its
default and parser. `configure` builds that frozen object once per application and keeps it on the
app; nothing else reads settings by name. Tests override settings by the variable's name without
RIGHTSIZER_ (`create_app({"PUBLIC_READS": True})`), given typed or as the environment would say it.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any, get_type_hints

from flask import Flask

from app.core.quantity import amount
from app.core.recommend.settings import RecommenderSettings
from app.documents.policy import DNS_SUBDOMAIN
from app.settings import EXTENSION, Settings, settings_of

DEFAULT_DATABASE_URL = "sqlite:///rightsizer.db"


def boolean(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(text)


def names(text: str) -> frozenset[str]:
    return frozenset(n.strip() for n in text.split(",") if n.strip())


def positive(parse: Any) -> Any:
    def check(text: str) -> Any:
        value = parse(text)
        if value <= 0:
            raise ValueError(text)
        return value

    check.__name__ = f"positive {parse.__name__}"
    return check


def non_negative(parse: Any) -> Any:
    def check(text: str) -> Any:
        value = parse(text)
        if value < 0:
            raise ValueError(text)
        return value

    check.__name__ = f"non-negative {parse.__name__}"
    return check


def auth_mode(text: str) -> str:
    value = text.strip().lower()
    if value not in AUTH_MODES:
        raise ValueError(text)
    return value


def cpu_millicores(text: str) -> int:
    """A CPU quantity ("4", "500m") in millicores; 0 for none."""
    return amount("cpu", text.strip() or "0")


def auto_or_boolean(text: str) -> bool | str:
    return "auto" if text.strip().lower() == "auto" else boolean(text)


def scheduler_name(text: str) -> str:
    """Empty, or a name kube-apiserver accepts in a pod's spec.schedulerName (a DNS-1123
    subdomain, as ValidatePodSpec checks it): the webhook writes it into pods."""
    if text and not DNS_SUBDOMAIN.fullmatch(text):
        raise ValueError(
            "must be a scheduler name: lower-case letters, digits, '-' and '.' (a DNS subdomain)"
        )
    return text


def webhook_timeout(text: str) -> int:
    """kube-apiserver accepts 1 to 30 seconds."""
    value = int(text)
    if not 1 <= value <= 30:
        raise ValueError(text)
    return value


def cluster_identity(text: str) -> str:
    """At most 253 printable characters (a uid, a DNS name, a readable name)."""
    value = text.strip()
    if len(value) > 253 or not value.isprintable():
        raise ValueError(text)
    return value


TRACK_MODES = ("all", "policies", "labelled")
_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP token
_QUALIFIED = re.compile(
    r"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]"
)


def track_modes(text: str) -> frozenset[str]:
    """`all`, or `policies` and/or `labelled` (comma-separated: a workload either holds is
    learned)."""
    modes = names(text.lower())
    if not modes or not modes <= set(TRACK_MODES) or ("all" in modes and len(modes) > 1):
        raise ValueError(text)
    return modes


def label_key(text: str) -> str:
    value = text.strip()
    if not _QUALIFIED.fullmatch(value):
        raise ValueError(text)
    return value


_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?")


def cluster_labels(text: str) -> tuple[tuple[str, str], ...]:
    """`env=prod,region=eu`: Kubernetes label keys and values, each key once."""
    out: dict[str, str] = {}
    for item in (i.strip() for i in text.split(",")):
        if not item:
            continue
        key, eq, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or key in out or not _LABEL_VALUE.fullmatch(value):
            raise ValueError(text)
        out[label_key(key)] = value
    return tuple(out.items())


def metric_name(text: str) -> str:
    if not _METRIC_NAME.fullmatch(text.strip()):
        raise ValueError(text)
    return text.strip()


def label_name(text: str) -> str:
    if not _LABEL_NAME.fullmatch(text.strip()):
        raise ValueError(text)
    return text.strip()


def http_headers(text: str) -> tuple[tuple[str, str], ...]:
    """`Name=value,Name2=value2` (values without commas)."""
    out = []
    for part in filter(str.strip, text.split(",")):
        name, sep, value = part.partition("=")
        if not sep or not _HEADER_NAME.fullmatch(name.strip()) or "\n" in value:
            raise ValueError(text)
        out.append((name.strip(), value.strip()))
    return tuple(out)


track_modes.__name__ = "all, or policies and/or labelled (comma-separated)"
label_key.__name__ = "label key (e.g. goldilocks.fairwinds.com/enabled)"
metric_name.__name__ = "Prometheus metric name"
label_name.__name__ = "Prometheus label name"
http_headers.__name__ = "list of Name=value headers (comma-separated)"

AUTH_MODES = ("tokens", "kubernetes")
auth_mode.__name__ = "auth mode (tokens or kubernetes)"
boolean.__name__ = "boolean (true/false)"
auto_or_boolean.__name__ = "auto, true or false"
cluster_identity.__name__ = "text of at most 253 printable characters"
cluster_labels.__name__ = "comma-separated key=value labels (Kubernetes label syntax)"
webhook_timeout.__name__ = "whole number of seconds from 1 to 30"
names.__name__ = "comma-separated list"


def finite_at_least_zero(name: str) -> Any:
    """A parser of finite numbers, 0 or more, called `name` in errors."""

    def check(text: str) -> float:
        value = float(text)
        if not math.isfinite(value) or value < 0:
            raise ValueError(text)
        return value

    check.__name__ = name
    return check


price = finite_at_least_zero("price (a number, 0 or more)")


def window_weights(text: str) -> tuple[float, float, float]:
    """Three weights, comma-separated (15m, 1h, 1d): finite, not negative, not all 0."""
    parts = [float(p) for p in text.split(",")]
    if len(parts) != 3 or any(not math.isfinite(p) or p < 0 for p in parts) or sum(parts) <= 0:
        raise ValueError(text)
    return parts[0], parts[1], parts[2]


def ahead_hours(text: str) -> int:
    """Hours of levels ahead, one level an hour: 0 (none) to 24 (a day: the profiles' length)."""
    value = int(text)
    if not 0 <= value <= 24:
        raise ValueError(text)
    return value


ahead_hours.__name__ = "whole hours from 0 to 24"


finite_non_negative = finite_at_least_zero("finite non-negative number")


def fraction(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise ValueError(text)
    return value


window_weights.__name__ = "three comma-separated weights (15m, 1h, 1d), not all 0"
fraction.__name__ = "fraction from 0 to 1"
cpu_millicores.__name__ = "CPU quantity (e.g. 4 or 500m)"

# Variable -> (field of Settings, default, parser)
ENVIRONMENT: dict[str, tuple[str, Any, Callable[[str], Any]]] = {
    "RIGHTSIZER_DATABASE_URL": ("database_url", DEFAULT_DATABASE_URL, str),
    "RIGHTSIZER_LOG_LEVEL": ("log_level", "INFO", str),
    "RIGHTSIZER_CHECKPOINT_BATCH_SIZE": ("recommender.checkpoint_batch_size", 500, positive(int)),
    "RIGHTSIZER_JOBS": ("jobs", False, boolean),
    "RIGHTSIZER_KUBECONFIG": ("cluster.kubeconfig", "", str),
    "RIGHTSIZER_CLUSTER_ID": ("cluster.cluster_id", "", cluster_identity),
    "RIGHTSIZER_CLUSTER_NAME": ("cluster.cluster_name", "", cluster_identity),
    "RIGHTSIZER_CLUSTER_LABELS": ("cluster.cluster_labels", (), cluster_labels),
    "RIGHTSIZER_NAMESPACE": ("cluster.namespace", "rightsizer", str),
    "RIGHTSIZER_EXCLUDED_NAMESPACES": ("cluster.excluded_namespaces", frozenset(), names),
    "RIGHTSIZER_KUBE_API_QPS": ("cluster.kube_api_qps", 5.0, non_negative(float)),
    "RIGHTSIZER_KUBE_API_BURST": ("cluster.kube_api_burst", 10, positive(int)),
    "RIGHTSIZER_RECOMMENDER_INTERVAL": ("recommender.interval", 60.0, positive(float)),
    # Which workloads the recommender learns (docs/configuration.md, opt-in tracking).
    "RIGHTSIZER_TRACK": ("recommender.track", frozenset({"all"}), track_modes),
    "RIGHTSIZER_TRACK_LABEL": (
        "recommender.track_label",
        "goldilocks.fairwinds.com/enabled",
        label_key,
    ),
    "RIGHTSIZER_SCALER_INTERVAL": ("scaler.interval", 10.0, positive(float)),
    "RIGHTSIZER_UPDATER_INTERVAL": ("updater.interval", 60.0, positive(float)),
    "RIGHTSIZER_UPDATER_DRY_RUN": ("updater.dry_run", False, boolean),
    "RIGHTSIZER_UPDATER_MIN_HISTORY_SECONDS": ("updater.min_history_seconds", 3600.0, float),
    "RIGHTSIZER_UPDATER_MIN_LIFETIME_SECONDS": (
        "updater.sizing.min_lifetime_seconds",
        12 * 3600.0,
        float,
    ),
    "RIGHTSIZER_UPDATER_MIN_CHANGE": ("updater.sizing.min_change", 0.1, float),
    "RIGHTSIZER_UPDATER_QUICK_OOM_SECONDS": ("updater.sizing.quick_oom_seconds", 600.0, float),
    "RIGHTSIZER_EVICTION_TOLERANCE": ("updater.sizing.eviction_tolerance", 0.5, float),
    "RIGHTSIZER_UPDATER_MIN_REPLICAS": ("updater.sizing.default_min_replicas", 2, positive(int)),
    "RIGHTSIZER_UPDATER_IN_PLACE_SKIP_DISRUPTION_BUDGET": (
        "updater.sizing.in_place_skip_disruption_budget",
        False,
        boolean,
    ),
    "RIGHTSIZER_EVICTIONS_PER_SECOND": ("updater.evictions_per_second", 0.0, float),
    "RIGHTSIZER_EVICTION_BURST": ("updater.eviction_burst", 1, positive(int)),
    # Evictions sent at once, each with its disruption budget reserved first (app.jobs.evictions).
    "RIGHTSIZER_UPDATER_EVICTIONS_IN_FLIGHT": (
        "updater.evictions_in_flight",
        4,
        positive(int),
    ),
    "RIGHTSIZER_GC_GRACE_SECONDS": ("recommender.gc_grace_seconds", 600.0, positive(float)),
    # Each container's checkpoint is rewritten about this often, the oldest first (VPA: oldest
    # first within --checkpoints-timeout); at most the run interval: every one, every run.
    "RIGHTSIZER_CHECKPOINT_INTERVAL_SECONDS": (
        "recommender.checkpoint_interval_seconds",
        600.0,
        positive(float),
    ),
    "RIGHTSIZER_IDLE_AFTER_SECONDS": (
        "recommender.idle_after_seconds",
        8 * 86400.0,
        positive(float),
    ),
    "RIGHTSIZER_LEASE_NAME": ("lease.name", "rightsizer-leader", str),
    "RIGHTSIZER_LEASE_NAMESPACE": ("lease.namespace", "", str),
    "RIGHTSIZER_LEASE_DURATION": ("lease.duration", 15.0, positive(float)),
    "RIGHTSIZER_LEASE_RENEW_DEADLINE": ("lease.renew_deadline", 10.0, positive(float)),
    "RIGHTSIZER_LEASE_RETRY_PERIOD": ("lease.retry_period", 2.0, positive(float)),
    "RIGHTSIZER_PROMETHEUS_URL": ("prometheus.url", "", str),
    "RIGHTSIZER_PROMETHEUS_STEP": ("prometheus.step", 300.0, positive(float)),
    "RIGHTSIZER_BIND": ("serving.bind", "", str),
    "RIGHTSIZER_WORKERS": ("serving.workers", 2, positive(int)),
    "RIGHTSIZER_THREADS": ("serving.threads", 4, positive(int)),
    "RIGHTSIZER_ACCESS_LOG": ("serving.access_log", True, boolean),
    "RIGHTSIZER_TLS_CERT_FILE": ("serving.tls_cert_file", "", str),
    "RIGHTSIZER_TLS_KEY_FILE": ("serving.tls_key_file", "", str),
    # A client's TLS handshake, request headers and body each within this (app.serving.intake).
    "RIGHTSIZER_TLS_HANDSHAKE_TIMEOUT_SECONDS": (
        "serving.tls_handshake_timeout_seconds",
        3.0,
        positive(float),
    ),
    "RIGHTSIZER_HEADER_TIMEOUT_SECONDS": ("serving.header_timeout_seconds", 3.0, positive(float)),
    "RIGHTSIZER_BODY_TIMEOUT_SECONDS": ("serving.body_timeout_seconds", 3.0, positive(float)),
    "RIGHTSIZER_PROMETHEUS_HISTORY_SECONDS": (
        "prometheus.history_seconds",
        8 * 86400.0,
        positive(float),
    ),
    # Reaching Prometheus or a server of its HTTP API (docs/configuration.md).
    "RIGHTSIZER_PROMETHEUS_BEARER_TOKEN": ("prometheus.bearer_token", "", str),
    "RIGHTSIZER_PROMETHEUS_BEARER_TOKEN_FILE": ("prometheus.bearer_token_file", "", str),
    "RIGHTSIZER_PROMETHEUS_USERNAME": ("prometheus.username", "", str),
    "RIGHTSIZER_PROMETHEUS_PASSWORD": ("prometheus.password", "", str),
    "RIGHTSIZER_PROMETHEUS_PASSWORD_FILE": ("prometheus.password_file", "", str),
    "RIGHTSIZER_PROMETHEUS_CA_FILE": ("prometheus.ca_file", "", str),
    "RIGHTSIZER_PROMETHEUS_CLIENT_CERT_FILE": ("prometheus.client_cert_file", "", str),
    "RIGHTSIZER_PROMETHEUS_CLIENT_KEY_FILE": ("prometheus.client_key_file", "", str),
    "RIGHTSIZER_PROMETHEUS_INSECURE": ("prometheus.insecure", False, boolean),
    "RIGHTSIZER_PROMETHEUS_HEADERS": ("prometheus.headers", (), http_headers),
    "RIGHTSIZER_PROMETHEUS_QUERY_TIMEOUT_SECONDS": (
        "prometheus.query_timeout_seconds",
        300.0,
        positive(float),
    ),
    "RIGHTSIZER_PROMETHEUS_RETRY_SECONDS": (
        "prometheus.retry_seconds",
        120.0,
        non_negative(float),
    ),
    # What to query: VPA's prometheus history provider flags (docs/configuration.md).
    "RIGHTSIZER_PROMETHEUS_CADVISOR_JOB_NAME": ("prometheus.cadvisor_job_name", "", str),
    "RIGHTSIZER_PROMETHEUS_CPU_METRIC": (
        "prometheus.cpu_metric",
        "container_cpu_usage_seconds_total",
        metric_name,
    ),
    "RIGHTSIZER_PROMETHEUS_MEMORY_METRIC": (
        "prometheus.memory_metric",
        "container_memory_working_set_bytes",
        metric_name,
    ),
    "RIGHTSIZER_PROMETHEUS_NAMESPACE_LABEL": (
        "prometheus.namespace_label",
        "namespace",
        label_name,
    ),
    "RIGHTSIZER_PROMETHEUS_POD_LABEL": ("prometheus.pod_label", "pod", label_name),
    "RIGHTSIZER_PROMETHEUS_CONTAINER_LABEL": (
        "prometheus.container_label",
        "container",
        label_name,
    ),
    "RIGHTSIZER_PROMETHEUS_POD_LABELS_METRIC": ("prometheus.pod_labels_metric", "", str),
    "RIGHTSIZER_PROMETHEUS_POD_LABEL_PREFIX": ("prometheus.pod_label_prefix", "pod_label_", str),
    "RIGHTSIZER_PROMETHEUS_POD_NAMESPACE_LABEL": (
        "prometheus.pod_namespace_label",
        "kubernetes_namespace",
        label_name,
    ),
    "RIGHTSIZER_PROMETHEUS_POD_NAME_LABEL": (
        "prometheus.pod_name_label",
        "kubernetes_pod_name",
        label_name,
    ),
    "RIGHTSIZER_WEBHOOK_CACHE_REFRESH_SECONDS": (
        "webhook.cache_refresh_seconds",
        5.0,
        positive(float),
    ),
    "RIGHTSIZER_WEBHOOK_CACHE_MAX_AGE_SECONDS": (
        "webhook.cache_max_age_seconds",
        300.0,
        positive(float),
    ),
    "RIGHTSIZER_WEBHOOK_REGISTER": ("webhook.register", "auto", auto_or_boolean),
    "RIGHTSIZER_WEBHOOK_AUDIT_INTERVAL_SECONDS": (
        "webhook.audit_interval_seconds",
        60.0,
        positive(float),
    ),
    # The webhook watches LimitRanges and ReplicaSet/Job owners (docs/webhook.md).
    "RIGHTSIZER_WEBHOOK_WATCH_CLUSTER": ("webhook.watch_cluster", "auto", auto_or_boolean),
    "RIGHTSIZER_WEBHOOK_CONFIG_NAME": ("webhook.config_name", "rightsizer", str),
    "RIGHTSIZER_WEBHOOK_SERVICE": ("webhook.service", "rightsizer", str),
    "RIGHTSIZER_WEBHOOK_PORT": ("webhook.port", 443, positive(int)),
    "RIGHTSIZER_WEBHOOK_URL": ("webhook.url", "", str),
    # Where the updater reaches the webhook to check it serves (docs/configuration.md).
    "RIGHTSIZER_WEBHOOK_PROBE_ADDRESS": ("webhook.probe_address", "", str),
    "RIGHTSIZER_WEBHOOK_TIMEOUT_SECONDS": ("webhook.timeout_seconds", 5, webhook_timeout),
    # VPA's --max-allowed-cpu-boost (docs/policies.md, "CPU startup boost"); 0: no cap.
    "RIGHTSIZER_MAX_CPU_BOOST": ("webhook.max_cpu_boost", 0, cpu_millicores),
    # The water-level scheduler's name, set by the chart when it runs it (docs/policies.md,
    # "Placement"); empty: `placement: waterLevel` changes nothing.
    "RIGHTSIZER_PLACEMENT_SCHEDULER_NAME": ("webhook.placement_scheduler", "", scheduler_name),
    "RIGHTSIZER_CERT_DIR": ("certs.directory", "certs", str),
    # Certificates kept and renewed by the server itself (docs/webhook.md).
    "RIGHTSIZER_CERT_ROTATE": ("certs.rotate", False, boolean),
    "RIGHTSIZER_CERT_SECRET": ("certs.secret", "", str),
    "RIGHTSIZER_CERT_CHECK_SECONDS": ("certs.check_seconds", 3600.0, positive(float)),
    "RIGHTSIZER_CERT_EXTRA_NAMES": ("certs.extra_names", frozenset(), names),
    # REST API and dashboard authentication (docs/api.md).
    "RIGHTSIZER_AUTH_MODE": ("auth.mode", "tokens", auth_mode),
    "RIGHTSIZER_AUTH_TOKEN_FILE": ("auth.token_file", "", str),
    "RIGHTSIZER_PUBLIC_READS": ("auth.public_reads", False, boolean),
    "RIGHTSIZER_AUTH_API_GROUP": ("auth.api_group", "rightsizer.io", str),
    "RIGHTSIZER_AUTH_CACHE_SECONDS": ("auth.cache_seconds", 10.0, positive(float)),
    # Largest REST request body (docs/api.md); /mutate has its own 3 MiB limit.
    "RIGHTSIZER_API_MAX_BODY_BYTES": ("api.max_body_bytes", 1024 * 1024, positive(int)),
    # What requests cost, for the dashboard's savings in money (docs/dashboard.md).
    "RIGHTSIZER_PRICE_PER_CORE_HOUR": ("dashboard.price_per_core_hour", 0.04, price),
    "RIGHTSIZER_PRICE_PER_GIB_HOUR": ("dashboard.price_per_gib_hour", 0.005, price),
    "RIGHTSIZER_CURRENCY": ("dashboard.currency", "$", str),
    # Water-level placement: node levels and the scheduler extender (docs/placement.md).
    "RIGHTSIZER_PLACEMENT_INTERVAL_SECONDS": ("placement.interval", 30.0, positive(float)),
    "RIGHTSIZER_PLACEMENT_REFRESH_SECONDS": ("placement.refresh_seconds", 5.0, positive(float)),
    "RIGHTSIZER_PLACEMENT_WINDOW_WEIGHTS": (
        "placement.window_weights",
        (0.5, 0.3, 0.2),
        window_weights,
    ),
    "RIGHTSIZER_PLACEMENT_MIN_WEIGHT": ("placement.min_weight", 1.0, non_negative(float)),
    "RIGHTSIZER_PLACEMENT_FILTER_THRESHOLD": ("placement.filter_threshold", 0.9, fraction),
    "RIGHTSIZER_PLACEMENT_AHEAD_HOURS": ("placement.ahead_hours", 6, ahead_hours),
    "RIGHTSIZER_PLACEMENT_AHEAD_WEIGHT": ("placement.ahead_weight", 1.0, finite_non_negative),
    "RIGHTSIZER_PLACEMENT_SPREAD_WEIGHT": ("placement.spread_weight", 0.8, fraction),
    "RIGHTSIZER_PLACEMENT_SPREAD_MEMORY_WEIGHT": (
        "placement.spread_memory_weight",
        0.3,
        finite_non_negative,
    ),
}


class ConfigError(ValueError):
    pass


def recommender_env_var(field_name: str) -> str:
    return "RIGHTSIZER_" + field_name.upper()


def recommender_settings(env: Mapping[str, str]) -> RecommenderSettings:
    """RecommenderSettings with each field overridable by RIGHTSIZER_<FIELD>."""
    values: dict[str, float] = {}
    for f in fields(RecommenderSettings):
        var = recommender_env_var(f.name)
        if var in env:
            try:
                values[f.name] = float(env[var])
            except ValueError:
                raise ConfigError(f"{var}={env[var]!r} is not a number") from None
    try:
        return RecommenderSettings(**values)
    except ValueError as e:
        field = str(e).split(" ", 1)[0]
        raise ConfigError(f"{recommender_env_var(field)}: {e}") from None


def idle_after_seconds(env: Mapping[str, str]) -> float:
    """RIGHTSIZER_IDLE_AFTER_SECONDS alone, for `recommend --from-csv` (which needs no other
    setting): the replay expires idle aggregates as the service does."""
    var = "RIGHTSIZER_IDLE_AFTER_SECONDS"
    _, default, parse = ENVIRONMENT[var]
    raw = env.get(var)
    return float(default if raw is None or raw == "" else _parsed(var, raw, parse))


def absolute_sqlite_path(url: str) -> str:
    """Makes `sqlite:///relative.db` relative to the working directory, as users expect.

    (Flask-SQLAlchemy would otherwise put it in Flask's instance folder inside the install.)
    """
    prefix = "sqlite:///"
    path = url[len(prefix) :] if url.startswith(prefix) else None
    if not path or path.startswith("/") or path == ":memory:" or path.startswith("file:"):
        return url
    return prefix + os.path.abspath(path)


# create_app's overrides name a variable without RIGHTSIZER_; the database URL also goes by
# Flask-SQLAlchemy's own name, which tests use.
OVERRIDES: dict[str, str] = {var.removeprefix("RIGHTSIZER_"): var for var in ENVIRONMENT} | {
    "SQLALCHEMY_DATABASE_URI": "RIGHTSIZER_DATABASE_URL"
}
MODEL_FIELD = "recommender.model"  # RecommenderSettings, from the RIGHTSIZER_<FIELD> variables
LEAVES = frozenset(field for field, _, _ in ENVIRONMENT.values()) | {MODEL_FIELD}


def _parsed(name: str, raw: str, parse: Callable[[str], Any]) -> Any:
    try:
        return parse(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a valid {parse.__name__}") from None


def environment_values(env: Mapping[str, str]) -> dict[str, Any]:
    """Every field of the settings (by its dotted path) from `env`, defaults where unset."""
    values: dict[str, Any] = {}
    for var, (field, default, parse) in ENVIRONMENT.items():
        raw = env.get(var)
        values[field] = default if raw is None or raw == "" else _parsed(var, raw, parse)
    values[MODEL_FIELD] = recommender_settings(env)
    return values


def override_values(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The fields `overrides` (override names) set; a string is parsed as the variable's text."""
    values: dict[str, Any] = {}
    for key, value in overrides.items():
        var = OVERRIDES.get(key)
        if var is None:
            raise ConfigError(
                f"{key} is not a setting (a RIGHTSIZER_* variable without its prefix)"
            )
        field, _, parse = ENVIRONMENT[var]
        values[field] = _parsed(key, value, parse) if isinstance(value, str) else value
    return values


def _build(cls: Any, values: Mapping[str, Any], prefix: str = "") -> Any:
    """An instance of the dataclass `cls` from dotted paths, its groups built the same way."""
    hints = get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        path = prefix + f.name
        kwargs[f.name] = (
            values[path] if path in LEAVES else _build(hints[f.name], values, path + ".")
        )
    return cls(**kwargs)


def flatten(settings: Any, prefix: str = "") -> dict[str, Any]:
    """The fields of `settings` by dotted path, as the table names them."""
    values: dict[str, Any] = {}
    for f in fields(settings):
        path = prefix + f.name
        value = getattr(settings, f.name)
        if path in LEAVES:
            values[path] = value
        else:
            values.update(flatten(value, path + "."))
    return values


def _settings(values: dict[str, Any]) -> Settings:
    values["database_url"] = absolute_sqlite_path(values["database_url"])
    settings: Settings = _build(Settings, values)
    if bool(settings.serving.tls_cert_file) != bool(settings.serving.tls_key_file):
        raise ConfigError("RIGHTSIZER_TLS_CERT_FILE and RIGHTSIZER_TLS_KEY_FILE go together")
    _check_prometheus(settings.prometheus)
    return settings


def _check_prometheus(p: Any) -> None:
    """One way to authenticate, as VPA's flags allow (--prometheus-bearer-token,
    --prometheus-bearer-token-file and --username are exclusive), and the pairs complete."""
    given = [
        var
        for var, value in (
            ("RIGHTSIZER_PROMETHEUS_BEARER_TOKEN", p.bearer_token),
            ("RIGHTSIZER_PROMETHEUS_BEARER_TOKEN_FILE", p.bearer_token_file),
            ("RIGHTSIZER_PROMETHEUS_USERNAME", p.username),
        )
        if value
    ]
    if len(given) > 1:
        raise ConfigError(f"{' and '.join(given)} are exclusive: set one way to authenticate")
    if p.username and not (p.password or p.password_file):
        raise ConfigError(
            "RIGHTSIZER_PROMETHEUS_USERNAME needs RIGHTSIZER_PROMETHEUS_PASSWORD or "
            "RIGHTSIZER_PROMETHEUS_PASSWORD_FILE"
        )
    if p.password and p.password_file:
        raise ConfigError(
            "RIGHTSIZER_PROMETHEUS_PASSWORD and RIGHTSIZER_PROMETHEUS_PASSWORD_FILE are exclusive"
        )
    if (p.password or p.password_file) and not p.username:
        raise ConfigError("a Prometheus password needs RIGHTSIZER_PROMETHEUS_USERNAME")
    if bool(p.client_cert_file) != bool(p.client_key_file):
        raise ConfigError(
            "RIGHTSIZER_PROMETHEUS_CLIENT_CERT_FILE and RIGHTSIZER_PROMETHEUS_CLIENT_KEY_FILE "
            "go together"
        )


def from_environment(
    env: Mapping[str, str] | None = None, overrides: Mapping[str, Any] | None = None
) -> Settings:
    """The settings `env` (default: os.environ) says, with `overrides` (override names) on top."""
    values = environment_values(os.environ if env is None else env)
    values.update(override_values(overrides or {}))
    return _settings(values)


def with_overrides(settings: Settings, overrides: Mapping[str, Any]) -> Settings:
    values = flatten(settings)
    values.update(override_values(overrides))
    return _settings(values)


def flask_config(settings: Settings) -> dict[str, Any]:
    """What Flask-SQLAlchemy reads from app.config."""
    return {
        "SQLALCHEMY_DATABASE_URI": settings.database_url,
        "SQLALCHEMY_ENGINE_OPTIONS": {"pool_pre_ping": True},
    }


def configure(app: Flask, config: Mapping[str, Any] | None = None) -> Settings:
    """Builds `app`'s settings once, from the environment with `config`'s overrides on top, and
    keeps them on it. Keys of `config` that are Flask's or Flask-SQLAlchemy's own (TESTING,
    SQLALCHEMY_ENGINE_OPTIONS) go to app.config; any other unknown key is an error."""
    config = config or {}
    ours = {k: v for k, v in config.items() if k in OVERRIDES}
    flasks = {k: v for k, v in config.items() if k not in OVERRIDES}
    unknown = sorted(k for k in flasks if k not in app.config and not k.startswith("SQLALCHEMY_"))
    if unknown:
        raise ConfigError(f"unknown settings: {', '.join(unknown)}")
    settings = from_environment(overrides=ours)
    app.config.from_mapping(flask_config(settings))
    app.config.from_mapping(flasks)
    app.extensions[EXTENSION] = settings
    return settings


def override(app: Flask, changes: Mapping[str, Any]) -> Settings:
    """Gives `app` a copy of its settings with `changes` (override names): for tests, and for a
    command's in-process read. What reads its settings per request or command sees the change;
    what create_app built from them (auth, the webhook's cache) keeps the values it had."""
    settings = with_overrides(settings_of(app), changes)
    app.extensions[EXTENSION] = settings
    return settings
