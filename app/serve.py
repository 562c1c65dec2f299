"""What `rightsizer serve` does before handing over to gunicorn (migrate, certificates, register
the webhook), and the certificate rotation gunicorn's master runs while serving."""

from __future__ import annotations

import datetime as dt
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from flask import Flask
from flask_migrate import upgrade

from app.certs import CA_FILE, CertPaths, DirectoryStore, Store, ensure_in, service_names

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
        outcome = _register(cfg, ca.read_bytes())
    except Exception as e:
        log.error("webhook not registered: %s", e)
        return None
    log.info("MutatingWebhookConfiguration %s %s", cfg["WEBHOOK_CONFIG_NAME"], outcome)
    return outcome


def _api(cfg: Mapping[str, Any]) -> Any:
    from app.kube.client import api_client

    return api_client(cfg["KUBECONFIG"] or None)


def _register(cfg: Mapping[str, Any], ca_bundle: bytes, api: Any = None) -> str:
    from app.kube.webhook_config import WebhookRegistration, register_webhook

    return register_webhook(api or _api(cfg), WebhookRegistration.from_config(cfg), ca_bundle)


METRICS_DIR_ENV = "PROMETHEUS_MULTIPROC_DIR"


def metrics_directory(env: MutableMapping[str, str]) -> Path:
    """prometheus_client's multiprocess mode for gunicorn's workers: each worker writes its
    metric values to files in one directory and a scrape, whichever worker answers it, merges
    them all. Without it a scrape would show one worker's counts only.

    A directory given in PROMETHEUS_MULTIPROC_DIR is emptied of metric files (those of a previous
    run would be counted again); without one, a new directory under the temporary directory (an
    emptyDir in the chart) is made. Sets the variable for gunicorn and returns the directory."""
    given = env.get(METRICS_DIR_ENV)
    if given:
        path = Path(given)
        path.mkdir(parents=True, exist_ok=True)
        for old in path.glob("*.db"):
            old.unlink()
    else:
        path = Path(tempfile.mkdtemp(prefix="rightsizer-metrics-"))
    env[METRICS_DIR_ENV] = str(path)
    log.info("metrics of all workers merged through %s", path)
    return path


def certificate_names(cfg: Mapping[str, Any]) -> list[str]:
    names = service_names(cfg["WEBHOOK_SERVICE"], cfg["NAMESPACE"])
    return names + sorted(n for n in cfg["CERT_EXTRA_NAMES"] if n not in names)


def rotate_certificates(
    cfg: Mapping[str, Any],
    api: Any = None,
    now: dt.datetime | None = None,
    register: bool = True,
) -> tuple[list[str], bool]:
    """Creates or renews the CA and serving certificate where they are kept (RIGHTSIZER_CERT_SECRET,
    else RIGHTSIZER_CERT_DIR) and copies them to RIGHTSIZER_CERT_DIR, which gunicorn serves.

    Returns what was done here and whether the files on disk changed (renewed here or, with a
    Secret, by another replica): then gunicorn must reload. When the CA changed and registration is
    on, the webhook's caBundle is updated to the new CA *and* the old one, so pods keep being
    admitted while replicas still serve certificates of the old CA.
    """
    disk = DirectoryStore(Path(cfg["CERT_DIR"]))
    before = disk.load()
    store: Store = disk
    if cfg["CERT_SECRET"]:
        from app.kube.secrets import SecretStore

        api = api or _api(cfg)
        store = SecretStore(api, cfg["NAMESPACE"], cfg["CERT_SECRET"])
    files, done = ensure_in(store, certificate_names(cfg), now)
    if store is not disk:
        disk.save(files)
    changed = files != before
    for line in done:
        log.info("certificates in %s: %s", store, line)
    old_ca, new_ca = before.get(CA_FILE), files[CA_FILE]
    if register and old_ca and old_ca != new_ca and should_register(cfg["WEBHOOK_REGISTER"]):
        outcome = _register(cfg, new_ca + old_ca, api)
        log.info("new CA: MutatingWebhookConfiguration caBundle %s (new and old CA)", outcome)
    return done, changed


def rotation_loop(
    cfg: Mapping[str, Any], reload: Callable[[], object], stop: threading.Event | None = None
) -> None:
    """Checks the certificates every RIGHTSIZER_CERT_CHECK_SECONDS (first at once) and calls
    `reload` when the files changed. Errors are logged and retried at the next check."""
    stop = stop or threading.Event()
    while not stop.is_set():
        try:
            _, changed = rotate_certificates(cfg)
            if changed:
                log.info("TLS files renewed: reloading")
                reload()
        except Exception as e:
            log.error(
                "certificate check failed (next try in %ss): %s", cfg["CERT_CHECK_SECONDS"], e
            )
        stop.wait(cfg["CERT_CHECK_SECONDS"])


def start_rotation(cfg: Mapping[str, Any], reload: Callable[[], object]) -> threading.Event:
    """The rotation thread (gunicorn's master runs it); set the returned event to stop it."""
    stop = threading.Event()
    threading.Thread(
        target=rotation_loop, args=(cfg, reload, stop), name="cert-rotation", daemon=True
    ).start()
    return stop


def prepare(app: Flask, migrate: bool) -> None:
    with app.app_context():
        if migrate:
            upgrade()
    if app.config["CERT_ROTATE"]:
        # Before gunicorn loads them; the caBundle is written just below.
        done, _ = rotate_certificates(app.config, register=False)
        for line in done:
            log.info("certificates: %s", line)
    register_webhook_on_start(app)
