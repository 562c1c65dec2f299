"""`rightsizer sim`: serve a simulated cluster until interrupted."""

from __future__ import annotations

import gc
import signal
import threading

import click

from app.simulator.scenarios.scenario import ScenarioError
from app.simulator.simulator import Simulator


def _service_mapping(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> dict[str, str]:
    out = {}
    for value in values:
        key, sep, target = value.partition("=")
        if not sep or "/" not in key or ":" not in target:
            raise click.BadParameter(f"{value!r}: expected NAMESPACE/NAME[:PORT]=HOST:PORT")
        out[key] = target
    return out


@click.command("sim")
@click.option(
    "--scenario",
    "scenario_path",
    type=click.Path(exists=True, dir_okay=False),
    help="Scenario YAML (default: the bundled scenario).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    default=6443,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on (0 picks a free one).",
)
@click.option("--nodes", type=click.IntRange(1), help="Scale mode: number of nodes.")
@click.option("--pods", type=click.IntRange(1), help="Scale mode: number of pods.")
@click.option(
    "--speed",
    default=1.0,
    show_default=True,
    type=click.FloatRange(0),
    help="Simulated seconds per real second (0 freezes the clock).",
)
@click.option("--seed", type=int, help="Seed of the usage model (default: the scenario's).")
@click.option(
    "--kubeconfig",
    "kubeconfig_path",
    default="rightsizer-sim.kubeconfig",
    show_default=True,
    type=click.Path(dir_okay=False),
    help="Where to write the kubeconfig for the simulated cluster.",
)
@click.option(
    "--webhook-service",
    "services",
    multiple=True,
    callback=_service_mapping,
    metavar="NS/NAME[:PORT]=HOST:PORT",
    help="Route webhook calls for a service to a local address (repeatable).",
)
@click.option(
    "--kubernetes-version",
    "version",
    help="Kubernetes release to serve and whose rules apply, 1.33 to 1.36 "
    "(default: the scenario's kubernetesVersion, else 1.33).",
)
def sim_command(
    scenario_path: str | None,
    host: str,
    port: int,
    nodes: int | None,
    pods: int | None,
    speed: float,
    seed: int | None,
    kubeconfig_path: str,
    services: dict[str, str],
    version: str | None,
) -> None:
    """Serve a simulated Kubernetes cluster and write a kubeconfig for it."""
    if (nodes is None) != (pods is None):
        raise click.UsageError("--nodes and --pods go together (scale mode)")
    if nodes is not None and scenario_path:
        raise click.UsageError("--scenario and scale mode (--nodes/--pods) are exclusive")
    try:
        sim = Simulator(
            scenario_path,
            nodes=nodes,
            pods=pods,
            host=host,
            port=port,
            speed=speed,
            seed=seed,
            kubeconfig_path=kubeconfig_path,
            service_urls=services,
            version=version,
        )
        sim.start()
    except (ScenarioError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    except OSError as e:
        raise click.ClickException(f"cannot listen on {host}:{port}: {e.strerror}") from None
    # The cluster built at start-up (150,000 pods' objects in scale mode) lives as long as
    # this process: the cyclic collector need not walk it again. Without this, each full
    # collection takes ~0.2 s at 15,000 pods and lands in whichever request triggers it
    # (kube-apiserver, in Go, collects concurrently). Only this process: tests that start
    # simulators in their own process keep collecting them.
    gc.freeze()
    click.echo(sim.kubeconfig_path)
    click.echo(
        f"simulated cluster at {sim.url} (started in {sim.startup_seconds:.1f}s); "
        f"KUBECONFIG={sim.kubeconfig_path}; Ctrl-C stops it",
        err=True,
    )
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    finally:
        sim.stop()
