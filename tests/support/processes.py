"""rightsizer as a separate process (`rightsizer serve`) against a simulated cluster."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class AppProcess:
    """One `rightsizer serve` (1 worker), its log in a file, its API on a free port."""

    def __init__(
        self,
        kubeconfig: str,
        database_url: str,
        log_path: Path,
        ca_file: str | None = None,
        port: int | None = None,
        **settings: Any,
    ) -> None:
        """With `ca_file` the app serves HTTPS (settings name its certificate), checked with it;
        on `port`, else on a free one."""
        self.port = port or free_port()
        self.url = f"{'https' if ca_file else 'http'}://localhost:{self.port}"
        self.verify: str | bool = ca_file or True
        self.log_path = log_path
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", "/tmp"),
            "RIGHTSIZER_KUBECONFIG": kubeconfig,
            "RIGHTSIZER_DATABASE_URL": database_url,
            "RIGHTSIZER_BIND": f"127.0.0.1:{self.port}",
            "RIGHTSIZER_WEBHOOK_PROBE_ADDRESS": f"127.0.0.1:{self.port}",
            "RIGHTSIZER_WORKERS": "1",
            "RIGHTSIZER_ACCESS_LOG": "false",
            "RIGHTSIZER_JOBS": "true",
            "RIGHTSIZER_RECOMMENDER_INTERVAL": "1",
            "RIGHTSIZER_SCALER_INTERVAL": "1",
            "RIGHTSIZER_PUBLIC_READS": "true",  # the tests read the API without a token
        }
        env.update({k: str(v) for k, v in settings.items()})
        self._log = log_path.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve"],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"rightsizer exited with {self.proc.returncode}:\n{self.log()}"
                )
            try:
                if (
                    requests.get(f"{self.url}/readyz", timeout=1, verify=self.verify).status_code
                    == 200
                ):
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        raise AssertionError(f"rightsizer not ready after {timeout}s:\n{self.log()}")

    def get(self, path: str, **params: Any) -> Any:
        resp = requests.get(f"{self.url}{path}", params=params, timeout=5, verify=self.verify)
        resp.raise_for_status()
        return resp.json()

    def log(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        if not self._log.closed:
            self._log.close()


def wait_for(predicate: Any, timeout: float, what: str, interval: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


def recommendations(app: AppProcess) -> dict[tuple[str, str, str, str], Mapping[str, Any]]:
    out = {}
    for item in app.get("/api/v1/recommendations")["items"]:
        for c in item["containers"]:
            out[(item["namespace"], item["kind"], item["name"], c["name"])] = c
    return out


def start_with_webhook(
    sim: Any, tmp_path: Path, namespace: str = "rightsizer", **settings: Any
) -> AppProcess:
    """rightsizer over TLS with its webhook registered, and the simulator routing calls to it."""
    from app.serving.certs import ensure, service_names

    paths, _ = ensure(tmp_path / "certs", [*service_names("rightsizer", namespace), "localhost"])
    env = {
        "RIGHTSIZER_TLS_CERT_FILE": paths.cert,
        "RIGHTSIZER_TLS_KEY_FILE": paths.key,
        "RIGHTSIZER_CERT_DIR": paths.directory,
        "RIGHTSIZER_WEBHOOK_REGISTER": "true",
        "RIGHTSIZER_WEBHOOK_CACHE_REFRESH_SECONDS": "1",
        **settings,
    }
    app = AppProcess(
        sim.kubeconfig_path,
        f"sqlite:///{tmp_path}/rightsizer.db",
        tmp_path / "app.log",
        ca_file=str(paths.ca),
        **env,
    )
    app.wait_ready()
    sim.map_service(namespace, "rightsizer", f"127.0.0.1:{app.port}")
    return app


@contextmanager
def updating_from_history(
    sim: Any, tmp_path: Path, ready: Callable[[AppProcess], bool], what: str
) -> Iterator[AppProcess]:
    """rightsizer with its webhook, learning the scenario's history from the simulator's Prometheus
    (8 days: enough for the updater to act) and running the updater every second; yielded once
    `ready(app)` holds (at most 60 s), stopped on exit."""
    a = start_with_webhook(
        sim, tmp_path, RIGHTSIZER_PROMETHEUS_URL=sim.url, RIGHTSIZER_UPDATER_INTERVAL="1"
    )
    try:
        wait_for(lambda: ready(a), 60, what)
        yield a
    finally:
        a.stop()
