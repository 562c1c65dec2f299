"""The MutatingWebhookConfiguration, registered with our CA when the server starts and again when
the CA is renewed (RIGHTSIZER_WEBHOOK_REGISTER)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from flask import Flask

from app.kube.client import api_client
from app.kube.webhook_config import WebhookRegistration, register_webhook
from app.serving.certs import CertPaths
from app.settings import ClusterSettings, Settings, settings_of

log = logging.getLogger(__name__)


def should_register(setting: bool | str) -> bool:
    """`auto` registers when running in a pod (where the Service the configuration names exists)."""
    if setting == "auto":
        return bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
    return bool(setting)


def registration(settings: Settings) -> WebhookRegistration:
    """The configuration the settings describe (RIGHTSIZER_WEBHOOK_*, RIGHTSIZER_NAMESPACE, ...)."""
    webhook, cluster = settings.webhook, settings.cluster
    return WebhookRegistration(
        config_name=webhook.config_name,
        service=webhook.service,
        namespace=cluster.namespace,
        port=webhook.port,
        url=webhook.url,
        timeout_seconds=webhook.timeout_seconds,
        excluded_namespaces=tuple(sorted(cluster.excluded_namespaces)),
    )


def register_webhook_on_start(app: Flask) -> str | None:
    """Creates or updates the MutatingWebhookConfiguration with our CA. Never fatal: with
    failurePolicy Ignore, a webhook that is not registered only means pods keep their requests."""
    settings = settings_of(app)
    if not should_register(settings.webhook.register):
        return None
    ca = CertPaths(Path(settings.certs.directory)).ca
    try:
        outcome = register(settings, ca.read_bytes())
    except Exception as e:
        log.error("webhook not registered: %s", e)
        return None
    log.info("MutatingWebhookConfiguration %s %s", settings.webhook.config_name, outcome)
    return outcome


def cluster_api(cluster: ClusterSettings) -> Any:
    """The API client of the configured cluster (RIGHTSIZER_KUBECONFIG, else in-cluster)."""
    return api_client(cluster.kubeconfig or None)


def register(settings: Settings, ca_bundle: bytes, api: Any = None) -> str:
    """Creates or updates the configuration with `ca_bundle`; returns what was done."""
    return register_webhook(api or cluster_api(settings.cluster), registration(settings), ca_bundle)
