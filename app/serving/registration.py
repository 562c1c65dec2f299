"""The MutatingWebhookConfiguration, registered with our CA when the server starts and again when
the CA is renewed (RIGHTSIZER_WEBHOOK_REGISTER)."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask

from app.kube.client import api_client
from app.kube.webhook_config import WebhookRegistration, register_webhook
from app.serving.certs import CertPaths

log = logging.getLogger(__name__)


def should_register(setting: bool | str) -> bool:
    """`auto` registers when running in a pod (where the Service the configuration names exists)."""
    if setting == "auto":
        return bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
    return bool(setting)


def register_webhook_on_start(app: Flask) -> str | None:
    """Creates or updates the MutatingWebhookConfiguration with our CA. Never fatal: with
    failurePolicy Ignore, a webhook that is not registered only means pods keep their requests."""
    cfg = app.config
    if not should_register(cfg["WEBHOOK_REGISTER"]):
        return None
    ca = CertPaths(Path(cfg["CERT_DIR"])).ca
    try:
        outcome = register(cfg, ca.read_bytes())
    except Exception as e:
        log.error("webhook not registered: %s", e)
        return None
    log.info("MutatingWebhookConfiguration %s %s", cfg["WEBHOOK_CONFIG_NAME"], outcome)
    return outcome


def cluster_api(cfg: Mapping[str, Any]) -> Any:
    """The API client of the configured cluster (RIGHTSIZER_KUBECONFIG, else in-cluster)."""
    return api_client(cfg["KUBECONFIG"] or None)


def register(cfg: Mapping[str, Any], ca_bundle: bytes, api: Any = None) -> str:
    """Creates or updates the configuration with `ca_bundle`; returns what was done."""
    return register_webhook(
        api or cluster_api(cfg), WebhookRegistration.from_config(cfg), ca_bundle
    )
