"""One running simulated cluster: cluster state, API server, kubeconfig, and the clock's ticker."""

from __future__ import annotations

import logging
import os
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from kubernetes import config as kube_config

from app.simulator.apiserver.version import KubeVersion
from app.simulator.control.cluster import SimCluster
from app.simulator.control.extenders import parse_extenders
from app.simulator.endpoints.api import Api
from app.simulator.endpoints.server import SimServer
from app.simulator.scenarios import scenario as scenarios
from app.simulator.scenarios.scale import build_scale
from app.simulator.workload.clock import SimClock
from app.simulator.workload.usage import DAY, SAMPLE

log = logging.getLogger(__name__)


def write_kubeconfig(path: Path, url: str) -> None:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "rightsizer-sim",
        "clusters": [{"name": "rightsizer-sim", "cluster": {"server": url}}],
        "users": [{"name": "rightsizer-sim", "user": {"token": "rightsizer-sim"}}],
        "contexts": [
            {
                "name": "rightsizer-sim",
                "context": {
                    "cluster": "rightsizer-sim",
                    "user": "rightsizer-sim",
                    "namespace": "default",
                },
            }
        ],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    os.replace(tmp, path)


class Simulator:
    """Builds a cluster from a scenario (or scale-mode sizes) and serves it over HTTP.

    `speed` 0 freezes the simulated clock (tests move it with `advance`); 1 follows real time;
    60 runs an hour per minute. Usage is reported through metrics.k8s.io and Prometheus.
    """

    def __init__(
        self,
        scenario: scenarios.Scenario | str | os.PathLike[str] | Mapping[str, Any] | None = None,
        *,
        nodes: int | None = None,
        pods: int | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        speed: float = 0.0,
        seed: int | None = None,
        kubeconfig_path: str | os.PathLike[str] | None = None,
        service_urls: Mapping[str, str] | None = None,
        watch_window: int = 20_000,
        bookmark_interval: float = 60.0,
        version: str | None = None,
        scheduler_extenders: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        if (nodes is None) != (pods is None):
            raise ValueError("scale mode needs both nodes and pods")
        self.scale = (nodes, pods) if nodes is not None else None
        self.scenario = (
            None
            if self.scale
            else (
                scenario if isinstance(scenario, scenarios.Scenario) else scenarios.load(scenario)
            )
        )
        self.speed = speed
        self._seed = seed if seed is not None else (self.scenario.seed if self.scenario else 0)
        self._host, self._port = host, port
        self._service_urls = dict(service_urls or {})
        # KubeSchedulerConfiguration `extenders` entries (control/extenders.py); ValueError here
        self._extenders = (
            parse_extenders(list(scheduler_extenders)) if scheduler_extenders is not None else None
        )
        self._watch_window = watch_window
        self._bookmark_interval = bookmark_interval
        # The Kubernetes release served (GET /version) and whose rules apply: the option, else
        # the scenario's `kubernetesVersion`, else 1.33. ValueError for one not modelled.
        self.version = KubeVersion.parse(
            version or (self.scenario.kubernetes_version if self.scenario else None)
        )
        self._kubeconfig = Path(kubeconfig_path) if kubeconfig_path else None
        self._tmpdir: tempfile.TemporaryDirectory[str] | None = None
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self.cluster: SimCluster
        self.server: SimServer
        self.startup_seconds = 0.0

    def start(self) -> Simulator:
        began = time.monotonic()
        history = self.scenario.history_days * DAY if self.scenario else 0.0
        clock = SimClock(start=time.time() - history, speed=0.0)
        self.cluster = SimCluster(
            seed=self._seed,
            clock=clock,
            watch_window=self._watch_window,
            service_urls=self._service_urls,
            # Scale mode: no kubelet chatter (Pulled/Created/Started/Killing per container).
            kubelet_events=not self.scale,
            version=self.version,
        )
        if self.scale:
            build_scale(self.cluster, *self.scale)  # type: ignore[arg-type]
        else:
            assert self.scenario is not None
            scenarios.build(self.cluster, self.scenario)
            self.cluster.service_urls.update(self._service_urls)  # explicit wins
        if self._extenders is not None:  # explicit wins over the scenario's
            self.cluster.extenders = list(self._extenders)
        clock.set_speed(self.speed)
        api = Api(self.cluster, bookmark_interval=self._bookmark_interval, version=self.version)
        if self.scale:
            api.metrics.scrape()  # ready before the first client asks (endpoints.metrics)
        self.server = SimServer(api, self._host, self._port)
        self.server.start()
        if self._kubeconfig is None:
            self._tmpdir = tempfile.TemporaryDirectory(prefix="rightsizer-sim-")
            self._kubeconfig = Path(self._tmpdir.name) / "kubeconfig"
        write_kubeconfig(self._kubeconfig, self.url)
        if self.speed > 0:
            self._ticker = threading.Thread(target=self._tick_loop, name="sim-ticker", daemon=True)
            self._ticker.start()
        self.startup_seconds = time.monotonic() - began
        return self

    def _tick_loop(self) -> None:
        # Usage changes once per 15 s sample, so the kubelets need not look more often.
        interval = min(max(SAMPLE / self.speed, 0.2), SAMPLE)
        while not self._stop.wait(interval):
            try:
                self.cluster.tick()
            except Exception:
                log.exception("simulator tick failed")

    def stop(self) -> None:
        self._stop.set()
        if hasattr(self, "server"):
            self.server.stop()
        if hasattr(self, "cluster"):
            self.cluster.close()
        if self._tmpdir is not None:
            self._tmpdir.cleanup()
            self._tmpdir = None

    def __enter__(self) -> Simulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- what tests and tools use -------------------------------------------------------------

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def kubeconfig_path(self) -> str:
        assert self._kubeconfig is not None
        return str(self._kubeconfig)

    def api_client(self) -> Any:
        """A `kubernetes.client.ApiClient` configured from the kubeconfig (caller closes it)."""
        return kube_config.new_client_from_config(config_file=self.kubeconfig_path)

    def now(self) -> float:
        return self.cluster.now()

    def advance(self, seconds: float) -> None:
        """Move simulated time on; OOM kills and restarts happen; controllers settle."""
        self.cluster.advance(seconds)

    def settle(self, timeout: float = 30.0) -> None:
        """Wait until controllers have reacted to every write so far (pods created, bound)."""
        self.cluster.settle(timeout)

    def add_node(
        self,
        name: str,
        *,
        cpu: str = "8",
        memory: str = "32Gi",
        pods: int = 110,
        labels: Mapping[str, str] | None = None,
    ) -> None:
        self.cluster.add_node(name, cpu=cpu, memory=memory, pods=pods, labels=labels)
        self.settle()

    def remove_node(self, name: str) -> None:
        self.cluster.remove_node(name)

    def cordon(self, name: str) -> None:
        self.cluster.set_unschedulable(name, True)
        self.settle()

    def uncordon(self, name: str) -> None:
        self.cluster.set_unschedulable(name, False)
        self.settle()

    def map_service(self, namespace: str, name: str, address: str, port: int | None = None) -> None:
        """Route webhook calls for service namespace/name[:port] to a local host:port."""
        key = f"{namespace}/{name}" + (f":{port}" if port is not None else "")
        self.cluster.service_urls[key] = address

    def stats(self) -> dict[str, Any]:
        return self.server.api.stats.snapshot()

    def reset_stats(self) -> None:
        self.server.api.stats.reset()
