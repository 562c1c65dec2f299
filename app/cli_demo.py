"""`rightsizer demo` and `rightsizer replay`: try rightsizer without a cluster."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import click
import requests
from flask import current_app
from flask.cli import with_appcontext

from app.core.model import WorkloadKey
from app.core.trace import TraceError


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(predicate: Any, timeout: float, what: str, proc: subprocess.Popen[bytes]) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise click.ClickException(
                f"rightsizer exited ({proc.returncode}) while waiting for {what}"
            )
        try:
            result = predicate()
            if result:
                return result
        except requests.RequestException:
            pass
        time.sleep(0.5)
    raise click.ClickException(f"gave up waiting {timeout:.0f}s for {what}")


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
    "--timeout", default=120.0, show_default=True, help="Seconds to wait for recommendations."
)
@click.option(
    "--exit-when-ready", is_flag=True, help="Print the table and stop (for scripts and tests)."
)
def demo(port: int, sim_port: int, speed: float, timeout: float, exit_when_ready: bool) -> None:
    """Run rightsizer against the built-in simulated cluster (8 days of history), with its
    database (SQLite, ./rightsizer.db), webhook, jobs, REST API and dashboard."""
    from app.certs import ensure, service_names
    from app.demo import DEMO_NAMESPACE, DemoSettings, demo_environment, requests_table
    from app.kube.client import api_client, ensure_namespace
    from app.kube.cluster import workloads_with_pods
    from app.simulator.simulator import Simulator

    workdir = Path.cwd()
    settings = DemoSettings(
        port=port or _free_port(), sim_port=sim_port, speed=speed, workdir=workdir
    )
    click.echo("starting the simulated cluster (default scenario, 8 days of history) ...", err=True)
    sim = Simulator(
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
        env = {**os.environ, **demo_environment(sim.url, sim.kubeconfig_path, certs, settings)}
        proc = subprocess.Popen([sys.executable, "-m", "app.cli", "serve"], env=env)
        base, ca = f"https://localhost:{settings.port}", str(certs.ca)
        _wait(
            lambda: requests.get(f"{base}/readyz", verify=ca, timeout=2).ok,
            60,
            "rightsizer to be ready",
            proc,
        )
        expected = workloads_with_pods(api_client(sim.kubeconfig_path))

        def items() -> list[dict[str, Any]] | None:
            got = requests.get(f"{base}/api/v1/recommendations", verify=ca, timeout=5).json()[
                "items"
            ]
            served = {WorkloadKey(i["namespace"], i["kind"], i["name"]) for i in got}
            return got if got and expected <= served else None

        found = _wait(items, timeout, f"recommendations for all {len(expected)} workloads", proc)
        click.echo(requests_table(found))
        click.echo(
            f"\nrightsizer:  {base}/dashboard/   (CA: {ca})\n"
            f"REST API:    curl --cacert {ca} {base}/api/v1/recommendations\n"
            f"cluster:     KUBECONFIG={sim.kubeconfig_path} kubectl get pods -A\n"
        )
        if exit_when_ready:
            return
        click.echo("Ctrl-C stops the demo.", err=True)
        proc.wait()
    except KeyboardInterrupt:
        pass
    finally:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        sim.stop()


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
    from app.demo import load_trace

    parts = workload.split("/")
    if len(parts) != 3 or not all(parts):
        raise click.BadParameter("expected namespace/kind/name", param_hint="--workload")
    key = WorkloadKey(*parts)
    try:
        load_trace(trace_path, key)
    except TraceError as e:
        raise click.ClickException(f"{trace_path}: {e}") from None
    current_app.config["PUBLIC_READS"] = True  # an in-process read of what was just written
    body = (
        current_app.test_client()
        .get(f"/api/v1/recommendations/{key.namespace}/{key.kind}/{key.name}")
        .get_json()
    )
    click.echo(json.dumps(body, indent=2))
