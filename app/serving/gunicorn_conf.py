"""gunicorn settings for `rightsizer serve` (loaded as `-c python:app.serving.gunicorn_conf`).

Threads per worker (gthread) keep the webhook answering while a slow request is in flight; each
worker takes new connections only while it holds the fewest (app.serving.worker). With TLS
files configured, the master watches them and reloads the workers gracefully when they change, so
a renewed certificate is served without dropping a connection. With RIGHTSIZER_CERT_ROTATE the
master also renews the certificates itself (app.serving.rotation) and reloads at once.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import ssl
import sys
import threading
from typing import Any

from prometheus_client import multiprocess

from app.config import from_environment
from app.serving.intake import ReadBounds
from app.serving.request_end import BODY_LIMIT
from app.serving.worker import gate_for
from app.settings import Settings

_settings = from_environment()
_serving = _settings.serving
_cert, _key = _serving.tls_cert_file, _serving.tls_key_file

bind = _serving.bind or ("0.0.0.0:8443" if _cert else "0.0.0.0:8080")
workers = _serving.workers
threads = _serving.threads
# gunicorn's gthread worker, taking new connections only while it holds the fewest (kept-alive
# connections would otherwise stay wherever the kernel first put them: app.serving.accept_gate)
worker_class = "app.serving.worker.BalancedThreadWorker"
# made here in the master, before any worker forks: the table the workers share
GATE = gate_for(workers)


def read_bounds(settings: Settings) -> ReadBounds:
    """The seconds a client has for its TLS handshake, request headers and body, each at most
    the webhook's timeout: kube-apiserver gives up on the webhook by then anyway. And the largest
    body read: the larger of the webhook's limit and the REST API's."""
    cap = float(settings.webhook.timeout_seconds)
    s = settings.serving
    return ReadBounds(
        handshake=min(s.tls_handshake_timeout_seconds, cap),
        headers=min(s.header_timeout_seconds, cap),
        body=min(s.body_timeout_seconds, cap),
        body_bytes=max(BODY_LIMIT, settings.api.max_body_bytes),
    )


READ_BOUNDS = read_bounds(_settings)
accesslog = "-" if _serving.access_log else None
graceful_timeout = 30
timeout = 60
keepalive = 75  # longer than kube-apiserver's idle connection reuse
control_socket_disable = True  # gunicorn 27 would write one under $HOME (read-only in the pod)
if _cert:
    certfile, keyfile = _cert, _key


def ssl_context(conf: Any, default_ssl_context_factory: Any) -> ssl.SSLContext:
    ctx: ssl.SSLContext = default_ssl_context_factory()
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    return ctx


# Seconds a thread may hold the GIL while another one waits for it (CPython's default: 5 ms). A
# worker's threads share one GIL: while one runs Python without blocking (the webhook cache's
# refresh and the patches rebuilt after it, tens of ms every few seconds), a thread whose answer is
# ready waits up to this long each time it needs the GIL back (after each recv and send). 0.5 ms
# keeps those waits short; handing over costs a few microseconds, only when threads contend.
# Measured in one process with a thread refreshing the cache and reviewing in a loop: a review
# behind a socket, p99 27.5 ms at 5 ms, 10.5 ms at 1 ms, 8.5 ms at 0.5 ms (4 ms without it).
SWITCH_INTERVAL = 0.0005


def post_worker_init(worker: Any) -> None:
    # The app is loaded: move its ~100k long-lived objects out of the collector's way, so a full
    # collection does not pause a webhook answer for 100+ ms.
    gc.freeze()
    sys.setswitchinterval(SWITCH_INTERVAL)


class TlsFiles:
    """Reloads gunicorn's workers (SIGHUP to the master) when the TLS files change on disk."""

    def __init__(self, cert: str, key: str) -> None:
        self.cert, self.key = cert, key
        self.lock = threading.Lock()
        self.seen = self.mtimes()

    def mtimes(self) -> tuple[float, float] | None:
        try:
            return (os.stat(self.cert).st_mtime, os.stat(self.key).st_mtime)
        except OSError:
            return None  # being replaced; look again next time

    def reload_if_changed(self) -> bool:
        with self.lock:
            now = self.mtimes()
            if now is None or now == self.seen:
                return False
            self.seen = now
        logging.getLogger("gunicorn.error").info("TLS files changed: reloading workers")
        os.kill(os.getpid(), signal.SIGHUP)
        return True


def when_ready(server: Any) -> None:
    if not _cert:
        return
    tls = TlsFiles(_cert, _key)

    def watch() -> None:  # files replaced by someone else (a mounted Secret, cert-manager)
        stop = threading.Event()
        while not stop.wait(30):
            tls.reload_if_changed()

    threading.Thread(target=watch, name="tls-watch", daemon=True).start()
    if _settings.certs.rotate:
        # Only a master that renews the certificates loads that code (and the Kubernetes client).
        from app.serving.rotation import start_rotation

        start_rotation(_settings, tls.reload_if_changed)


def pre_fork(server: Any, worker: Any) -> None:
    worker.gate, worker.gate_slot = GATE, GATE.claim()
    worker.read_bounds = READ_BOUNDS
    if _settings.certs.rotate:  # fork only between certificate checks (app.serving.rotation)
        from app.serving.rotation import between_checks

        between_checks()


def child_exit(server: Any, worker: Any) -> None:
    GATE.release(worker.gate_slot)
    # A worker gone (reload, crash): its live gauges leave the merged metrics; its counters stay.
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.mark_process_dead(worker.pid)
