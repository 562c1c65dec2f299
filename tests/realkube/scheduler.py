"""A second real kube-scheduler, the water-level one, beside the cluster's own: started with the
KubeSchedulerConfiguration the Helm chart renders (placement.scheduler), with only what differs
between a pod and a process on this machine changed: where rightsizer's extender listens (a
`rightsizer serve` on localhost instead of the Service), the CA file that verifies it, the
kubeconfig. So the chart's configuration is the one kube-scheduler loads and validates."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client

from tests.realkube.cluster import RealCluster, free_port
from tests.support.helm import render_chart
from tests.support.json_bodies import plain

SCHEDULER_NAME = "rightsizer-water-level"


def chart_configuration() -> dict[str, Any]:
    """The chart's KubeSchedulerConfiguration (placement.scheduler.enabled), parsed."""
    docs = render_chart({"placement": {"scheduler": {"enabled": True}}})
    [config_map] = [
        d
        for d in docs
        if d["kind"] == "ConfigMap" and d["metadata"]["name"].endswith("-water-level")
    ]
    config: dict[str, Any] = yaml.safe_load(config_map["data"]["config.yaml"])
    return config


@contextmanager
def water_level_scheduler(
    cluster: RealCluster, directory: Path, extender: str, ca_file: str | Path
) -> Iterator[subprocess.Popen[bytes]]:
    """kube-scheduler with the chart's configuration, its extender at `extender` (an https URL
    prefix, e.g. https://localhost:PORT/scheduler) verified with `ca_file`; stopped on exit."""
    config = chart_configuration()
    [entry] = config["extenders"]
    entry["urlPrefix"] = extender
    entry["tlsConfig"] = {"caFile": str(ca_file)}
    config["clientConnection"] = {"kubeconfig": cluster.kubeconfig_path}
    election = config["leaderElection"]
    with cluster.api() as api:
        try:
            client.CoreV1Api(api).create_namespace(
                plain({"metadata": {"name": election["resourceNamespace"]}})
            )
        except client.ApiException as e:
            if e.status != 409:
                raise
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "water-level-scheduler.yaml"
    path.write_text(yaml.safe_dump(config))
    log_path = directory / "water-level-scheduler.log"
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            [
                cluster.binary("kube-scheduler"),
                f"--config={path}",
                f"--authentication-kubeconfig={cluster.kubeconfig_path}",
                f"--authorization-kubeconfig={cluster.kubeconfig_path}",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
                *cluster._feature_gates(),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()


def log_tail(directory: Path, lines: int = 40) -> str:
    path = directory / "water-level-scheduler.log"
    text = path.read_text(errors="replace").splitlines()[-lines:] if path.exists() else []
    return "--- water-level kube-scheduler ---\n" + "\n".join(text)


def wait_scheduled(
    cluster: RealCluster, namespace: str, name: str, directory: Path, timeout: float = 90
) -> Any:
    """The pod once bound to a node (kube-scheduler's Bind), or a failure with the log's tail."""
    deadline = time.monotonic() + timeout
    with cluster.api() as api:
        core = client.CoreV1Api(api)
        while time.monotonic() < deadline:
            pod = core.read_namespaced_pod(name, namespace)
            if pod.spec.node_name:
                return pod
            time.sleep(0.5)
    raise AssertionError(
        f"pod {namespace}/{name} not scheduled in {timeout}s\n{log_tail(directory)}"
    )


def scheduled_by(cluster: RealCluster, namespace: str, name: str) -> set[str]:
    """The schedulers that reported the pod's Scheduled event (events.k8s.io reportingController:
    the profile's schedulerName)."""
    with cluster.api() as api:
        events = client.EventsV1Api(api).list_namespaced_event(
            namespace, field_selector=f"regarding.name={name}"
        )
    return {e.reporting_controller for e in events.items if e.reason == "Scheduled"}
