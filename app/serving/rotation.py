"""The certificate renewal gunicorn's master runs while serving (RIGHTSIZER_CERT_ROTATE), and that
`rightsizer serve` runs once before gunicorn starts."""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.kube.secrets import SecretStore
from app.serving.certs import CA_FILE, DirectoryStore, Store, ensure_in, service_names
from app.serving.registration import cluster_api, register, should_register
from app.settings import Settings

log = logging.getLogger(__name__)


def certificate_names(settings: Settings) -> list[str]:
    names = service_names(settings.webhook.service, settings.cluster.namespace)
    return names + sorted(n for n in settings.certs.extra_names if n not in names)


def rotate_certificates(
    settings: Settings,
    api: Any = None,
    now: dt.datetime | None = None,
    register_ca: bool = True,
) -> tuple[list[str], bool]:
    """Creates or renews the CA and serving certificate where they are kept (RIGHTSIZER_CERT_SECRET,
    else RIGHTSIZER_CERT_DIR) and copies them to RIGHTSIZER_CERT_DIR, which gunicorn serves.

    Returns what was done here and whether the files on disk changed (renewed here or, with a
    Secret, by another replica): then gunicorn must reload. When the CA changed and registration is
    on, the webhook's caBundle is updated to the new CA *and* the old one, so pods keep being
    admitted while replicas still serve certificates of the old CA.
    """
    certs = settings.certs
    disk = DirectoryStore(Path(certs.directory))
    before = disk.load()
    store: Store = disk
    if certs.secret:
        api = api or cluster_api(settings.cluster)
        store = SecretStore(api, settings.cluster.namespace, certs.secret)
    files, done = ensure_in(store, certificate_names(settings), now)
    if store is not disk:
        disk.save(files)
    changed = files != before
    for line in done:
        log.info("certificates in %s: %s", store, line)
    old_ca, new_ca = before.get(CA_FILE), files[CA_FILE]
    if register_ca and old_ca and old_ca != new_ca and should_register(settings.webhook.register):
        outcome = register(settings, new_ca + old_ca, api)
        log.info("new CA: MutatingWebhookConfiguration caBundle %s (new and old CA)", outcome)
    return done, changed


# Held while a check runs. A check imports the Kubernetes client's modules (lazily, the first
# time each is used), and gunicorn's master forks its workers meanwhile: a worker forked while
# this thread held a module's import lock inherits it held by a thread it does not have, and
# hangs forever on its first import of that module (seen: a worker stuck importing
# kubernetes.client's CoreV1Api, never serving). `between_checks` (gunicorn's pre_fork) waits.
CHECKING = threading.Lock()
FORK_WAIT_SECONDS = 60.0


def between_checks(timeout: float = FORK_WAIT_SECONDS) -> bool:
    """Waits until no check is running (at most `timeout` s: a hung check does not stop workers
    from starting); whether it got there."""
    if not CHECKING.acquire(timeout=timeout):
        log.warning("certificate check still running after %ss: forking a worker anyway", timeout)
        return False
    CHECKING.release()
    return True


def rotation_loop(
    settings: Settings, reload: Callable[[], object], stop: threading.Event | None = None
) -> None:
    """Checks the certificates every RIGHTSIZER_CERT_CHECK_SECONDS (first at once) and calls
    `reload` when the files changed. Errors are logged and retried at the next check."""
    stop = stop or threading.Event()
    every = settings.certs.check_seconds
    while not stop.is_set():
        try:
            with CHECKING:
                _, changed = rotate_certificates(settings)
            if changed:
                log.info("TLS files renewed: reloading")
                reload()
        except Exception as e:
            log.error("certificate check failed (next try in %ss): %s", every, e)
        stop.wait(every)


def start_rotation(settings: Settings, reload: Callable[[], object]) -> threading.Event:
    """The rotation thread (gunicorn's master runs it); set the returned event to stop it."""
    stop = threading.Event()
    threading.Thread(
        target=rotation_loop, args=(settings, reload, stop), name="cert-rotation", daemon=True
    ).start()
    return stop
