"""Settings from RIGHTSIZER_* environment variables; every one is documented in README.md."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from app.core.recommend.settings import RecommenderSettings

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


def auth_mode(text: str) -> str:
    value = text.strip().lower()
    if value not in AUTH_MODES:
        raise ValueError(text)
    return value


def auto_or_boolean(text: str) -> bool | str:
    return "auto" if text.strip().lower() == "auto" else boolean(text)


def webhook_timeout(text: str) -> int:
    """kube-apiserver accepts 1 to 30 seconds."""
    value = int(text)
    if not 1 <= value <= 30:
        raise ValueError(text)
    return value


AUTH_MODES = ("tokens", "kubernetes")
auth_mode.__name__ = "auth mode (tokens or kubernetes)"
boolean.__name__ = "boolean (true/false)"
auto_or_boolean.__name__ = "auto, true or false"
webhook_timeout.__name__ = "whole number of seconds from 1 to 30"
names.__name__ = "comma-separated list"

# Variable -> (Flask config key, default, parser)
ENVIRONMENT: dict[str, tuple[str, Any, Any]] = {
    "RIGHTSIZER_DATABASE_URL": ("SQLALCHEMY_DATABASE_URI", DEFAULT_DATABASE_URL, str),
    "RIGHTSIZER_LOG_LEVEL": ("LOG_LEVEL", "INFO", str),
    "RIGHTSIZER_CHECKPOINT_BATCH_SIZE": ("CHECKPOINT_BATCH_SIZE", 500, positive(int)),
    "RIGHTSIZER_JOBS": ("JOBS", False, boolean),
    "RIGHTSIZER_KUBECONFIG": ("KUBECONFIG", "", str),
    "RIGHTSIZER_NAMESPACE": ("NAMESPACE", "rightsizer", str),
    "RIGHTSIZER_EXCLUDED_NAMESPACES": ("EXCLUDED_NAMESPACES", frozenset(), names),
    "RIGHTSIZER_RECOMMENDER_INTERVAL": ("RECOMMENDER_INTERVAL", 60.0, positive(float)),
    "RIGHTSIZER_SCALER_INTERVAL": ("SCALER_INTERVAL", 10.0, positive(float)),
    "RIGHTSIZER_UPDATER_INTERVAL": ("UPDATER_INTERVAL", 60.0, positive(float)),
    "RIGHTSIZER_UPDATER_DRY_RUN": ("UPDATER_DRY_RUN", False, boolean),
    "RIGHTSIZER_UPDATER_MIN_HISTORY_SECONDS": ("UPDATER_MIN_HISTORY_SECONDS", 3600.0, float),
    "RIGHTSIZER_UPDATER_MIN_LIFETIME_SECONDS": ("UPDATER_MIN_LIFETIME_SECONDS", 12 * 3600.0, float),
    "RIGHTSIZER_UPDATER_MIN_CHANGE": ("UPDATER_MIN_CHANGE", 0.1, float),
    "RIGHTSIZER_UPDATER_QUICK_OOM_SECONDS": ("UPDATER_QUICK_OOM_SECONDS", 600.0, float),
    "RIGHTSIZER_EVICTION_TOLERANCE": ("EVICTION_TOLERANCE", 0.5, float),
    "RIGHTSIZER_UPDATER_MIN_REPLICAS": ("UPDATER_MIN_REPLICAS", 2, positive(int)),
    "RIGHTSIZER_EVICTIONS_PER_SECOND": ("EVICTIONS_PER_SECOND", 0.0, float),
    "RIGHTSIZER_EVICTION_BURST": ("EVICTION_BURST", 1, positive(int)),
    "RIGHTSIZER_GC_GRACE_SECONDS": ("GC_GRACE_SECONDS", 600.0, positive(float)),
    "RIGHTSIZER_IDLE_AFTER_SECONDS": ("IDLE_AFTER_SECONDS", 8 * 86400.0, positive(float)),
    "RIGHTSIZER_LEASE_NAME": ("LEASE_NAME", "rightsizer-leader", str),
    "RIGHTSIZER_LEASE_NAMESPACE": ("LEASE_NAMESPACE", "", str),
    "RIGHTSIZER_LEASE_DURATION": ("LEASE_DURATION", 15.0, positive(float)),
    "RIGHTSIZER_LEASE_RENEW_DEADLINE": ("LEASE_RENEW_DEADLINE", 10.0, positive(float)),
    "RIGHTSIZER_LEASE_RETRY_PERIOD": ("LEASE_RETRY_PERIOD", 2.0, positive(float)),
    "RIGHTSIZER_PROMETHEUS_URL": ("PROMETHEUS_URL", "", str),
    "RIGHTSIZER_PROMETHEUS_STEP": ("PROMETHEUS_STEP", 300.0, positive(float)),
    "RIGHTSIZER_BIND": ("BIND", "", str),
    "RIGHTSIZER_WORKERS": ("WORKERS", 2, positive(int)),
    "RIGHTSIZER_THREADS": ("THREADS", 4, positive(int)),
    "RIGHTSIZER_ACCESS_LOG": ("ACCESS_LOG", True, boolean),
    "RIGHTSIZER_TLS_CERT_FILE": ("TLS_CERT_FILE", "", str),
    "RIGHTSIZER_TLS_KEY_FILE": ("TLS_KEY_FILE", "", str),
    "RIGHTSIZER_PROMETHEUS_HISTORY_SECONDS": (
        "PROMETHEUS_HISTORY_SECONDS",
        8 * 86400.0,
        positive(float),
    ),
    "RIGHTSIZER_WEBHOOK_CACHE_REFRESH_SECONDS": (
        "WEBHOOK_CACHE_REFRESH_SECONDS",
        5.0,
        positive(float),
    ),
    "RIGHTSIZER_WEBHOOK_CACHE_MAX_AGE_SECONDS": (
        "WEBHOOK_CACHE_MAX_AGE_SECONDS",
        300.0,
        positive(float),
    ),
    "RIGHTSIZER_WEBHOOK_REGISTER": ("WEBHOOK_REGISTER", "auto", auto_or_boolean),
    "RIGHTSIZER_WEBHOOK_AUDIT_INTERVAL_SECONDS": (
        "WEBHOOK_AUDIT_INTERVAL_SECONDS",
        60.0,
        positive(float),
    ),
    # The webhook watches LimitRanges and ReplicaSet/Job owners (README "Admission webhook").
    "RIGHTSIZER_WEBHOOK_WATCH_CLUSTER": ("WEBHOOK_WATCH_CLUSTER", "auto", auto_or_boolean),
    "RIGHTSIZER_WEBHOOK_CONFIG_NAME": ("WEBHOOK_CONFIG_NAME", "rightsizer", str),
    "RIGHTSIZER_WEBHOOK_SERVICE": ("WEBHOOK_SERVICE", "rightsizer", str),
    "RIGHTSIZER_WEBHOOK_PORT": ("WEBHOOK_PORT", 443, positive(int)),
    "RIGHTSIZER_WEBHOOK_URL": ("WEBHOOK_URL", "", str),
    # Where the updater reaches the webhook to check it serves (README "Configuration").
    "RIGHTSIZER_WEBHOOK_PROBE_ADDRESS": ("WEBHOOK_PROBE_ADDRESS", "", str),
    "RIGHTSIZER_WEBHOOK_TIMEOUT_SECONDS": ("WEBHOOK_TIMEOUT_SECONDS", 5, webhook_timeout),
    "RIGHTSIZER_CERT_DIR": ("CERT_DIR", "certs", str),
    # Certificates kept and renewed by the server itself (README "Admission webhook").
    "RIGHTSIZER_CERT_ROTATE": ("CERT_ROTATE", False, boolean),
    "RIGHTSIZER_CERT_SECRET": ("CERT_SECRET", "", str),
    "RIGHTSIZER_CERT_CHECK_SECONDS": ("CERT_CHECK_SECONDS", 3600.0, positive(float)),
    "RIGHTSIZER_CERT_EXTRA_NAMES": ("CERT_EXTRA_NAMES", frozenset(), names),
    # REST API and dashboard authentication (README "Authentication").
    "RIGHTSIZER_AUTH_MODE": ("AUTH_MODE", "tokens", auth_mode),
    "RIGHTSIZER_AUTH_TOKEN_FILE": ("AUTH_TOKEN_FILE", "", str),
    "RIGHTSIZER_PUBLIC_READS": ("PUBLIC_READS", False, boolean),
    "RIGHTSIZER_AUTH_API_GROUP": ("AUTH_API_GROUP", "rightsizer.io", str),
    "RIGHTSIZER_AUTH_CACHE_SECONDS": ("AUTH_CACHE_SECONDS", 10.0, positive(float)),
    # Largest REST request body (README "REST API"); /mutate has its own 3 MiB limit.
    "RIGHTSIZER_API_MAX_BODY_BYTES": ("API_MAX_BODY_BYTES", 1024 * 1024, positive(int)),
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
    try:
        return float(default if raw in (None, "") else parse(raw))
    except ValueError:
        raise ConfigError(f"{var}={raw!r} is not a valid {parse.__name__}") from None


def absolute_sqlite_path(url: str) -> str:
    """Makes `sqlite:///relative.db` relative to the working directory, as users expect.

    (Flask-SQLAlchemy would otherwise put it in Flask's instance folder inside the install.)
    """
    prefix = "sqlite:///"
    path = url[len(prefix) :] if url.startswith(prefix) else None
    if not path or path.startswith("/") or path == ":memory:" or path.startswith("file:"):
        return url
    return prefix + os.path.abspath(path)


def from_environment(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    env = os.environ if env is None else env
    config: dict[str, Any] = {}
    for var, (key, default, parse) in ENVIRONMENT.items():
        raw = env.get(var)
        try:
            config[key] = default if raw in (None, "") else parse(raw)
        except ValueError:
            raise ConfigError(f"{var}={raw!r} is not a valid {parse.__name__}") from None
    if bool(config["TLS_CERT_FILE"]) != bool(config["TLS_KEY_FILE"]):
        raise ConfigError("RIGHTSIZER_TLS_CERT_FILE and RIGHTSIZER_TLS_KEY_FILE go together")
    config["SQLALCHEMY_DATABASE_URI"] = absolute_sqlite_path(config["SQLALCHEMY_DATABASE_URI"])
    config["RECOMMENDER_SETTINGS"] = recommender_settings(env)
    config["SQLALCHEMY_ENGINE_OPTIONS"] = {"pool_pre_ping": True}
    return config
