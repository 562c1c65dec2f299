"""The real Vertical Pod Autoscaler (1.7.1, built by tools/build.py from tools/vpa) on the real
control plane: its CRDs, its recommender as a process beside the others, the VerticalPodAutoscaler
objects the tests make and the recommendations and checkpoints it writes.

The recommender runs as the admin, reads metrics.k8s.io (the real metrics-server,
tests/realkube/metrics.py) every `interval`, watches pods for OOM kills, and writes each VPA's
`status.recommendation` and a VerticalPodAutoscalerCheckpoint per container every loop.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, cast

import yaml
from kubernetes import client

from app.serving.certs import ensure
from tests.realkube.cluster import RealCluster, free_port

GROUP, VERSION = "autoscaling.k8s.io", "v1"
RECOMMENDER, UPDATER, ADMISSION = "recommender", "updater", "admission-controller"
WEBHOOK_CONFIG = "vpa-webhook-config"  # what the admission controller registers


def install_crds(cluster: RealCluster) -> None:
    """VerticalPodAutoscaler and VerticalPodAutoscalerCheckpoint, as the release ships them
    (deploy/vpa-v1-crd-gen.yaml, copied beside the binaries by tools/build.py), Established."""
    with cluster.api() as api:
        ext = client.ApiextensionsV1Api(api)
        names = []
        for file in sorted((cluster.bins["vpa"] / "crds").glob("*.yaml")):
            for crd in yaml.safe_load_all(file.read_text()):
                if crd:
                    ext.create_custom_resource_definition(crd)
                    names.append(crd["metadata"]["name"])
        deadline = time.monotonic() + 60
        for name in names:
            while not any(
                c.type == "Established" and c.status == "True"
                for c in ext.read_custom_resource_definition(name).status.conditions or []
            ):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"CRD {name} not Established after 60s")
                time.sleep(0.3)


def start_recommender(
    cluster: RealCluster,
    interval: str = "2s",
    kubeconfig: str | None = None,
    port: int | None = None,
    namespace: str = "",
) -> None:
    """VPA's recommender, every `interval`, as the admin unless `kubeconfig` says otherwise, its
    Prometheus metrics on `port` (a free one by default), tracking only pods a VPA selects
    (--memory-saver), of the VPA objects of `namespace` only if given, rounding memory up to
    whole MiB as rightsizer does by default (RIGHTSIZER_ROUND_MEMORY_BYTES)."""
    cluster._spawn(
        RECOMMENDER,
        f"--kubeconfig={kubeconfig or cluster.kubeconfig_path}",
        f"--recommender-interval={interval}",
        f"--address=127.0.0.1:{port or free_port()}",
        f"--vpa-object-namespace={namespace}",
        "--memory-saver=true",
        "--round-memory-bytes=1048576",
        "--v=2",
    )


def start_admission_controller(
    cluster: RealCluster, directory: Path, kubeconfig: str | None = None, namespace: str = ""
) -> None:
    """VPA's admission controller on 127.0.0.1, registered by itself by URL (WEBHOOK_CONFIG)
    with a CA of its own made in `directory`; its status Lease (kube-system) lets the updater
    evict."""
    paths, _ = ensure(directory / "vpa-certs", ["localhost"])
    port = free_port()
    cluster._spawn(
        ADMISSION,
        f"--kubeconfig={kubeconfig or cluster.kubeconfig_path}",
        f"--client-ca-file={paths.ca}",
        f"--tls-cert-file={paths.cert}",
        f"--tls-private-key={paths.key}",
        f"--port={port}",
        f"--address=127.0.0.1:{free_port()}",
        f"--vpa-object-namespace={namespace}",
        "--register-by-url=true",
        "--webhook-address=https://localhost",
        f"--webhook-port={port}",
        "--v=2",
    )


def start_updater(
    cluster: RealCluster,
    interval: str = "1m",
    kubeconfig: str | None = None,
    port: int | None = None,
    namespace: str = "",
) -> None:
    """VPA's updater, every `interval`, with its shipped eviction rules (tolerance 0.5, at least
    2 replicas, no rate limit, client 50 QPS / burst 100)."""
    cluster._spawn(
        UPDATER,
        f"--kubeconfig={kubeconfig or cluster.kubeconfig_path}",
        f"--updater-interval={interval}",
        f"--address=127.0.0.1:{port or free_port()}",
        f"--vpa-object-namespace={namespace}",
        "--v=2",
    )


def migrate(
    kubeconfig: str, server: str, token: str, namespace: str = "", mode: str = "", cacert: str = ""
) -> list[dict[str, Any]]:
    """The migration a user makes: `rightsizer policy import --from-cluster` (of `namespace`
    only if given), each policy's mode set to `mode` if given, `rightsizer policy apply`."""
    cli = [sys.executable, "-m", "app.cli", "policy"]
    where = ["-n", namespace] if namespace else []
    done = subprocess.run(
        [*cli, "import", "--from-cluster", "--kubeconfig", kubeconfig, "-o", "json", *where],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode:
        raise RuntimeError(f"policy import failed: {done.stderr}")
    policies = json.loads(done.stdout)["items"]
    if mode:
        for p in policies:
            p["updateMode"] = mode
    apply(policies, server, token, cacert)
    return policies


def apply(policies: list[dict[str, Any]], server: str, token: str, cacert: str = "") -> None:
    """`rightsizer policy apply -f -` of `policies` (as `policy import -o json` gives them), to
    a server over TLS if `cacert` (the CA that signed its certificate) is given."""
    cli = [sys.executable, "-m", "app.cli", "policy", "apply", "-f", "-"]
    done = subprocess.run(
        [*cli, "--server", server, "--token", token, *(["--cacert", cacert] if cacert else [])],
        input=json.dumps({"items": policies}),
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode:
        raise RuntimeError(f"policy apply failed: {done.stderr}")


def stop(cluster: RealCluster, name: str) -> None:
    """Ends one of the cluster's processes (VPA turned off) and forgets it."""
    proc = cluster.procs.pop(name)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def vpa(
    namespace: str, name: str, containers: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A VerticalPodAutoscaler of Deployment `name`, recommendations only (updateMode Off)."""
    spec: dict[str, Any] = {
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
        "updatePolicy": {"updateMode": "Off"},
    }
    if containers:
        spec["resourcePolicy"] = {"containerPolicies": containers}
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "VerticalPodAutoscaler",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def create(cluster: RealCluster, obj: dict[str, Any]) -> None:
    with cluster.api() as api:
        client.CustomObjectsApi(api).create_namespaced_custom_object(
            GROUP, VERSION, obj["metadata"]["namespace"], "verticalpodautoscalers", obj
        )


def recommendations(cluster: RealCluster, namespace: str) -> dict[str, dict[str, Any]]:
    """Each VPA's containerRecommendations, by VPA name then container name."""
    with cluster.api() as api:
        found = client.CustomObjectsApi(api).list_namespaced_custom_object(
            GROUP, VERSION, namespace, "verticalpodautoscalers"
        )
    out: dict[str, dict[str, Any]] = {}
    for item in cast(dict[str, Any], found)["items"]:
        recs = ((item.get("status") or {}).get("recommendation") or {}).get(
            "containerRecommendations"
        ) or []
        out[item["metadata"]["name"]] = {r["containerName"]: r for r in recs}
    return out


def checkpoints(cluster: RealCluster, namespace: str) -> dict[tuple[str, str], dict[str, Any]]:
    """Each checkpoint's status, by (VPA name, container name): the samples it has seen
    (totalSamplesCount, firstSampleStart, lastSampleStart)."""
    with cluster.api() as api:
        found = client.CustomObjectsApi(api).list_namespaced_custom_object(
            GROUP, VERSION, namespace, "verticalpodautoscalercheckpoints"
        )
    return {
        (i["spec"]["vpaObjectName"], i["spec"]["containerName"]): i.get("status") or {}
        for i in cast(dict[str, Any], found)["items"]
    }
