"""`rightsizer demo` and `rightsizer replay`: try rightsizer without a cluster.

`demo` runs the whole service against the built-in simulated cluster; `replay` learns a recorded
usage trace into the database. Both go through the same model, repository and API that the service
uses, so what they show is what it computes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

import click
import requests
from flask import current_app
from flask.cli import with_appcontext
from flask_migrate import upgrade

from app.cli.client import shown
from app.cli.context import config_path
from app.cli.demo_access import (
    check_context_file,
    check_port,
    cli_command,
    next_steps,
    write_context,
    write_token_file,
)
from app.cli.demo_terminal import LOG_NAME, StatusLine, close_log, log_to_file
from app.cli.simulated import load as load_simulator
from app.cli.times import Duration
from app.config import override
from app.core.recommend.array_model import ArrayModel
from app.core.recommend.trace import TraceError, parse_trace
from app.core.recommend.trace import replay as replay_trace
from app.core.workload_key import WorkloadKey
from app.kube.client import api_client, ensure_namespace
from app.kube.cluster import workloads_with_pods
from app.serving.certs import CertPaths, ensure, service_names
from app.settings import settings
from app.store.extensions import db
from app.store.recommendations import save_all
from app.store.results import results_from_model

log = logging.getLogger(__name__)
DEMO_NAMESPACE = "rightsizer"


def load_trace(path: Path, workload: WorkloadKey) -> tuple[int, int]:
    """Migrates the database, replays the trace as `workload`, saves. Returns (rows, containers)."""
    upgrade()
    with path.open(encoding="utf-8", newline="") as fh:
        rows = parse_trace(fh)
    config = settings()
    model = ArrayModel(config.recommender.model)
    replay_trace(rows, model=model, workload=workload)
    report = save_all(
        db.session,
        results_from_model(model),
        datetime.now(UTC),
        config.recommender.checkpoint_batch_size,
    )
    saved, failed = report.saved, report.failed
    if failed:
        raise RuntimeError(f"{failed} recommendations could not be saved; see the log")
    log.info(
        "replayed %d rows of %s into %s: %d containers saved", len(rows), path, workload, saved
    )
    return len(rows), saved


# --- `rightsizer demo`: the whole service against the built-in simulated cluster ------------------


@dataclass
class DemoSettings:
    port: int = 8443
    sim_port: int = 6443
    speed: float = 1.0
    workdir: Path = field(default_factory=Path.cwd)


# Settings the demo chooses unless the user's environment sets them.
DEMO_DEFAULTS = {
    "RIGHTSIZER_PUBLIC_READS": "true",  # the demo is for looking around; writes need a token
    "RIGHTSIZER_UPDATER_INTERVAL": "10",  # a Recreate policy acts within seconds, not a minute
}


def demo_environment(
    sim_url: str, kubeconfig: str, certs: CertPaths, s: DemoSettings, token_file: Path
) -> dict[str, str]:
    """rightsizer's settings for the demo: as a Helm install would set them, with the demo's
    admin token in a static token file."""
    return {
        "RIGHTSIZER_KUBECONFIG": kubeconfig,
        "RIGHTSIZER_PROMETHEUS_URL": sim_url,  # 8 days of history at start
        "RIGHTSIZER_NAMESPACE": DEMO_NAMESPACE,
        "RIGHTSIZER_JOBS": "true",
        "RIGHTSIZER_BIND": f"127.0.0.1:{s.port}",
        # No cluster DNS: the updater probes the webhook where the simulator routes its calls.
        "RIGHTSIZER_WEBHOOK_PROBE_ADDRESS": f"127.0.0.1:{s.port}",
        "RIGHTSIZER_TLS_CERT_FILE": str(certs.cert),
        "RIGHTSIZER_TLS_KEY_FILE": str(certs.key),
        "RIGHTSIZER_CERT_DIR": str(certs.directory),
        "RIGHTSIZER_WEBHOOK_REGISTER": "true",
        "RIGHTSIZER_AUTH_MODE": "tokens",
        "RIGHTSIZER_AUTH_TOKEN_FILE": str(token_file),
        "RIGHTSIZER_ACCESS_LOG": "false",
    }


def requests_table(items: list[dict[str, Any]]) -> str:
    """Per container, its requests now and what rightsizer recommends; a resource rightsizer
    leaves alone (the API's `excluded`: an HPA scales it, kube-system is never sized) shows no
    recommendation, and the last column says why."""
    rows = [
        (
            "WORKLOAD",
            "CONTAINER",
            "CPU NOW",
            "CPU RECOMMENDED",
            "MEMORY NOW",
            "MEMORY RECOMMENDED",
            "LEFT ALONE",
        )
    ]
    for item in items:
        for c in item["containers"]:
            now = c.get("currentRequests") or {}
            excluded: dict[str, str] = c.get("excluded") or {}
            reasons: dict[str, list[str]] = {}
            for r, why in excluded.items():
                reasons.setdefault(why, []).append(r)
            rows.append(
                (
                    f"{item['namespace']}/{item['kind']}/{item['name']}",
                    c["name"],
                    shown("cpu", now.get("cpu")),
                    "-" if "cpu" in excluded else shown("cpu", c["target"]["cpu"]),
                    shown("memory", now.get("memory")),
                    "-" if "memory" in excluded else shown("memory", c["target"]["memory"]),
                    "; ".join(f"{' and '.join(rs)}: {why}" for why, rs in reasons.items()),
                )
            )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(
    predicate: Any, timeout: float, what: str, proc: subprocess.Popen[bytes], status: StatusLine
) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status.show(f"waiting for {what}")
        if proc.poll() is not None:
            status.done()
            raise click.ClickException(
                f"rightsizer exited ({proc.returncode}) while waiting for {what}; "
                f"its log: {LOG_NAME}"
            )
        try:
            result = predicate()
            if result:
                return result
        except requests.RequestException:
            pass
        time.sleep(0.5)
    status.done()
    raise click.ClickException(f"gave up waiting {timeout:.0f}s for {what}")


# Seconds rightsizer has to stop after Ctrl-C (gunicorn's quick shutdown: its workers exit at
# once) before the demo ends its process group: Ctrl-C is done within seconds, whatever a job
# was waiting for.
STOP_SECONDS = 3.0


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stops rightsizer (its own process group: see demo()): SIGINT, gunicorn's quick shutdown,
    then SIGKILL to the whole group if it is still there after STOP_SECONDS. Not SIGTERM: that
    is gunicorn's graceful shutdown, which waits 30 s for busy workers and then kills them
    ("Worker was sent SIGKILL!")."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(STOP_SECONDS)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@click.command("demo")
@click.option(
    "--port", default=8443, show_default=True, help="rightsizer's HTTPS port (0: any free)."
)
@click.option(
    "--sim-port",
    default=0,
    show_default=True,
    help="The simulated API server's port (0: any free).",
)
@click.option("--speed", default=1.0, show_default=True, help="Simulated seconds per real second.")
@click.option(
    "--timeout",
    type=Duration(),
    default="2m",
    show_default=True,
    help="How long to wait for recommendations: 120 (seconds), 2m, ...",
)
@click.option(
    "--exit-when-ready", is_flag=True, help="Print the table and stop (for scripts and tests)."
)
def demo(port: int, sim_port: int, speed: float, timeout: float, exit_when_ready: bool) -> None:
    """Run rightsizer against the built-in simulated cluster (8 days of history), with its
    database (SQLite, ./rightsizer.db), webhook, jobs, REST API and dashboard."""
    simulator = load_simulator("simulator")  # first: without the `simulator` extra, say so
    workdir = Path.cwd()
    if port:
        check_port(port)  # at once, not after gunicorn's retries
    context_file = config_path(os.environ)
    check_context_file(context_file)
    signal.signal(signal.SIGTERM, _interrupted)  # stop as on Ctrl-C: rightsizer too
    settings = DemoSettings(
        port=port or _free_port(), sim_port=sim_port, speed=speed, workdir=workdir
    )
    log_path = workdir / LOG_NAME
    log_file = log_to_file(log_path)
    status = StatusLine(sys.stderr)
    status.show("starting the simulated cluster (default scenario, 8 days of history)")
    sim = simulator.Simulator(
        None, port=sim_port, speed=speed, kubeconfig_path=workdir / "rightsizer-sim.kubeconfig"
    )
    sim.start()
    proc: subprocess.Popen[bytes] | None = None
    try:
        ensure_namespace(api_client(sim.kubeconfig_path), DEMO_NAMESPACE)
        certs, _ = ensure(
            workdir / "certs", [*service_names("rightsizer", DEMO_NAMESPACE), "localhost"]
        )
        sim.map_service(DEMO_NAMESPACE, "rightsizer", f"127.0.0.1:{settings.port}")
        token_file, token = write_token_file(workdir)
        env = {
            **DEMO_DEFAULTS,
            **os.environ,
            **demo_environment(sim.url, sim.kubeconfig_path, certs, settings, token_file),
        }
        # Its own process group: Ctrl-C reaches the demo only, which stops rightsizer (_stop).
        proc = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        base, ca = f"https://localhost:{settings.port}", str(certs.ca)
        _wait(
            lambda: requests.get(f"{base}/readyz", verify=ca, timeout=2).ok,
            60,
            "rightsizer to be ready",
            proc,
            status,
        )
        expected = workloads_with_pods(api_client(sim.kubeconfig_path))

        def items() -> list[dict[str, Any]] | None:
            got = requests.get(f"{base}/api/v1/recommendations", verify=ca, timeout=5).json()[
                "items"
            ]
            # A workload known only by its conditions (no recommendation yet) has no containers.
            got = [i for i in got if i.get("containers")]
            served = {WorkloadKey(i["namespace"], i["kind"], i["name"]) for i in got}
            return got if got and expected <= served else None

        found = _wait(
            items, timeout, f"recommendations for all {len(expected)} workloads", proc, status
        )
        status.done()
        click.echo(requests_table(found))
        write_context(context_file, base, certs.ca, token)
        cli = cli_command()
        click.echo(
            "\n" + next_steps(base, certs.ca, sim.kubeconfig_path, context_file, cli, log_path)
        )
        if not exit_when_ready:
            proc.wait()
            raise click.ClickException(
                f"rightsizer exited ({proc.returncode}); its log: {log_path}"
            )
    except KeyboardInterrupt:
        status.done()
        click.echo("stopping ...", err=True)
    finally:
        status.done()
        if proc is not None:
            _stop(proc)
        sim.stop()
        close_log(log_file)
    _exit_stopped()


def _exit_stopped() -> NoReturn:
    """Ends the demo, status 0, once all it started has stopped (rightsizer, the simulated
    cluster, the log). Left to the interpreter's finalization, the demo aborted (SIGABRT, exit
    -6, after "stopping ...") in about one Ctrl-C in five (tests/e2e/test_demo.py), most likely
    as it ended a daemon thread of the simulated cluster's HTTP server (one per connection)
    still blocked in a socket call. Nothing is left to finalize, so the process ends here, its
    output flushed."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _interrupted(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


@click.command("replay")
@click.option(
    "--trace",
    "trace_path",
    default="tests/data/sample-trace.csv",
    show_default=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Usage trace to learn from.",
)
@click.option(
    "--workload", default="demo/Deployment/web", show_default=True, help="namespace/kind/name"
)
@with_appcontext
def replay(trace_path: Path, workload: str) -> None:
    """Learn a usage trace into the database as one workload, and print its recommendation."""
    parts = workload.split("/")
    if len(parts) != 3 or not all(parts):
        raise click.BadParameter("expected namespace/kind/name", param_hint="--workload")
    key = WorkloadKey(*parts)
    try:
        load_trace(trace_path, key)
    except TraceError as e:
        raise click.ClickException(f"{trace_path}: {e}") from None
    override(current_app, {"PUBLIC_READS": True})  # an in-process read of what was just written
    body = (
        current_app.test_client()
        .get(f"/api/v1/recommendations/{key.namespace}/{key.kind}/{key.name}")
        .get_json()
    )
    click.echo(json.dumps(body, indent=2))
