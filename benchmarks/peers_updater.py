"""The updater stage of benchmarks/peers.py: VPA 1.7.1's updater (with its recommender and
admission controller) and rightsizer's (`rightsizer serve`, jobs on) acting on the same workloads.

`deployments` Deployments of `replicas` pods each in their own namespace, requests 100m / 64Mi
written, emulated usage far above (so every pod is outside its recommended range: neither
updater waits for the 12 h pod lifetime), each under a VerticalPodAutoscaler. The two sides run
one after the other on the same cluster state, not at once (two updaters evicting the same pods
would race, and each needs its own webhook):

1. VPA: recommender, admission controller and updater running (every `interval`, VPA objects of
   this namespace only), the VPAs in updateMode Off until each has a recommendation; then all are
   switched to Recreate (t0).
2. The pods put back as written: VPA stopped, its webhook removed, each Deployment rolled out
   again (a template annotation), until every pod is Running with 100m / 64Mi.
3. rightsizer: `rightsizer serve` with the recommender and updater every `interval`
   (RIGHTSIZER_UPDATER_MIN_HISTORY_SECONDS=0: VPA acts on a recommendation of any age) and its
   /mutate registered, the policies `policy import --from-cluster` makes of the same VPA objects
   applied in mode Off until each has a recommendation, then applied again in Recreate (t0).

Measured from t0 until every pod of every Deployment is Running with requests other than those
written (updated by its side's webhook after an eviction): the time, the evictions the side
sent, and all API requests of the side over that time (the audit log: VPA's recommender,
admission controller and updater; rightsizer's one process, its recommender and webhook caches
included). Each keeps its shipped eviction rules (tolerance 0.5, at least 2 replicas) and client
rate limit (VPA's updater: 50 QPS, burst 100; rightsizer: 5 / 10, 4 evictions in flight).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from kubernetes import client
from scale_common import table

from tests.realkube import metrics, vpa
from tests.realkube.cluster import RealCluster
from tests.realkube.serve import serving
from tests.support.json_bodies import plain
from tests.support.processes import recommendations

NS = "bench-updater"
WRITTEN = {"cpu": "100m", "memory": "64Mi"}
PAUSE = "registry.k8s.io/pause:3.10"


def deployment(i: int, replicas: int) -> dict[str, Any]:
    name = f"upd-{i}"
    cpu, memory = f"{400 + (i * 37) % 400}m", f"{300 + (i * 53) % 600}Mi"
    return {
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {
                    "labels": {"app": name},
                    "annotations": metrics.usage_annotations(cpu, memory),
                },
                "spec": {
                    "terminationGracePeriodSeconds": 0,
                    "containers": [
                        {"name": "app", "image": PAUSE, "resources": {"requests": dict(WRITTEN)}}
                    ],
                },
            },
        },
    }


def live_pods(cluster: RealCluster) -> list[Any]:
    with cluster.api() as api:
        pods = client.CoreV1Api(api).list_namespaced_pod(NS).items
    return [p for p in pods if p.metadata and p.metadata.deletion_timestamp is None]


def state(cluster: RealCluster, total: int) -> tuple[int, int]:
    """(Running pods with the written requests, Running pods with other requests), once there
    are exactly `total` live pods, all Running; (-1, -1) before."""
    pods = live_pods(cluster)
    if len(pods) != total or any(p.status.phase != "Running" for p in pods):
        return -1, -1
    written = sum(p.spec.containers[0].resources.requests == WRITTEN for p in pods)
    return written, total - written


def wait_state(cluster: RealCluster, total: int, updated: bool, timeout: float) -> float:
    began = time.monotonic()
    while time.monotonic() - began < timeout:
        written, other = state(cluster, total)
        if (other if updated else written) == total:
            return time.monotonic() - began
        time.sleep(1)
    what = "updated" if updated else "as written"
    raise SystemExit(f"not all {total} pods Running {what} after {timeout:.0f} s")


def evictions(cluster: RealCluster, users: set[str], offset: int) -> tuple[int, int, int]:
    """(requests, evictions) of `users` in the audit log from `offset`, and the new offset (the
    audit policy logs one event per request)."""
    requests = evicted = 0
    with cluster.audit_log.open("rb") as f:
        f.seek(offset)
        data = f.read()
    for line in data.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("user", {}).get("username") not in users:
            continue
        requests += 1
        ref = event.get("objectRef") or {}
        evicted += ref.get("subresource") == "eviction" and event.get("verb") == "create"
    return requests, evicted, offset + len(data)


def audit_end(cluster: RealCluster) -> int:
    return cluster.audit_log.stat().st_size if cluster.audit_log.exists() else 0


def set_vpa_modes(cluster: RealCluster, names: list[str], mode: str) -> None:
    with cluster.api() as api:
        custom = client.CustomObjectsApi(api)
        for name in names:
            custom.patch_namespaced_custom_object(
                vpa.GROUP,
                vpa.VERSION,
                NS,
                "verticalpodautoscalers",
                name,
                {"spec": {"updatePolicy": {"updateMode": mode}}},
            )


def vpa_side(
    cluster: RealCluster, workdir: Path, kubeconfigs: dict[str, str], names: list[str], **kw: Any
) -> tuple[float, int, int]:
    interval, total, timeout = kw["interval"], kw["total"], kw["timeout"]
    if vpa.RECOMMENDER in cluster.procs:
        vpa.stop(cluster, vpa.RECOMMENDER)
    vpa.start_recommender(cluster, f"{interval}s", kubeconfigs["vpa-recommender"], namespace=NS)
    vpa.start_admission_controller(cluster, workdir, kubeconfigs["vpa-recommender"], NS)
    vpa.start_updater(cluster, f"{interval}s", kubeconfigs["vpa-updater"], namespace=NS)
    deadline = time.monotonic() + timeout
    while len([c for c in vpa.recommendations(cluster, NS).values() if c]) < len(names):
        if time.monotonic() > deadline:
            raise SystemExit(
                "VPA has not recommended for every workload:\n" + cluster.logs("recommender")
            )
        time.sleep(2)
    users = {kw["users"]["vpa-updater"], kw["users"]["vpa-recommender"]}
    offset = audit_end(cluster)
    set_vpa_modes(cluster, names, "Recreate")
    try:
        took = wait_state(cluster, total, True, timeout)
    except SystemExit:
        print(cluster.logs(vpa.UPDATER)[-4000:])
        raise
    requests, evicted, _ = evictions(cluster, users, offset)
    for name in (vpa.UPDATER, vpa.ADMISSION, vpa.RECOMMENDER):
        vpa.stop(cluster, name)
    cluster.delete_webhook_configuration(vpa.WEBHOOK_CONFIG)
    set_vpa_modes(cluster, names, "Off")
    return took, evicted, requests


def put_back(cluster: RealCluster, names: list[str], total: int, timeout: float) -> None:
    """Every Deployment rolled out again (no webhook now): its pods as written."""
    with cluster.api() as api:
        apps = client.AppsV1Api(api)
        for name in names:
            apps.patch_namespaced_deployment(
                name,
                NS,
                {"spec": {"template": {"metadata": {"annotations": {"bench/round": "2"}}}}},
            )
    wait_state(cluster, total, False, timeout)


def rightsizer_side(
    cluster: RealCluster, workdir: Path, kubeconfigs: dict[str, str], names: list[str], **kw: Any
) -> tuple[float, int, int]:
    interval, total, timeout, token = kw["interval"], kw["total"], kw["timeout"], kw["token"]
    directory = workdir / "updater"
    directory.mkdir(exist_ok=True)
    (directory / "tokens.csv").write_text(f"{token},bench,*\n")
    with serving(
        cluster,
        directory,
        kw["own_namespace"],
        "rightsizer-bench-updater",
        kubeconfig=kubeconfigs["rightsizer"],
        RIGHTSIZER_JOBS="true",
        RIGHTSIZER_TRACK="policies",
        RIGHTSIZER_AUTH_TOKEN_FILE=str(directory / "tokens.csv"),
        RIGHTSIZER_RECOMMENDER_INTERVAL=str(interval),
        RIGHTSIZER_UPDATER_INTERVAL=str(interval),
        RIGHTSIZER_SCALER_INTERVAL="3600",
        RIGHTSIZER_UPDATER_MIN_HISTORY_SECONDS="0",
    ) as app:
        policies = vpa.migrate(
            cluster.kubeconfig_path, app.url, token, NS, mode="Off", cacert=str(app.verify)
        )
        deadline = time.monotonic() + timeout
        while len({k[2] for k in recommendations(app) if k[0] == NS}) < len(names):
            if time.monotonic() > deadline:
                raise SystemExit("rightsizer has not recommended for every workload:\n" + app.log())
            time.sleep(2)
        time.sleep(2)  # the webhook's cache (refreshed every second) has them too
        users = {kw["users"]["rightsizer"]}
        offset = audit_end(cluster)
        for p in policies:
            p["updateMode"] = "Recreate"
        vpa.apply(policies, app.url, token, str(app.verify))
        try:
            took = wait_state(cluster, total, True, timeout)
        except SystemExit:
            print(app.log()[-4000:])
            raise
        requests, evicted, _ = evictions(cluster, users, offset)
    return took, evicted, requests


def compare(
    cluster: RealCluster,
    workdir: Path,
    kubeconfigs: dict[str, str],
    deployments: int,
    replicas: int,
    **kw: Any,
) -> list[str]:
    """Both updaters on the same workloads, one after the other: the table's lines."""
    total = deployments * replicas
    names = [f"upd-{i}" for i in range(deployments)]
    with cluster.api() as api:
        client.CoreV1Api(api).create_namespace(plain({"metadata": {"name": NS}}))
        apps = client.AppsV1Api(api)
        for i, name in enumerate(names):
            vpa.create(cluster, vpa.vpa(NS, name))
            apps.create_namespaced_deployment(NS, plain(deployment(i, replicas)))
    wait_state(cluster, total, False, kw["timeout"])
    kw = {**kw, "total": total}
    results = {
        "VPA 1.7.1": vpa_side(cluster, workdir, kubeconfigs, names, **kw),
    }
    put_back(cluster, names, total, kw["timeout"])
    results["rightsizer"] = rightsizer_side(cluster, workdir, kubeconfigs, names, **kw)
    rows = [[k, f"{t:.0f}", str(e), str(r)] for k, (t, e, r) in results.items()]
    ours, theirs = results["rightsizer"], results["VPA 1.7.1"]
    rows.append(
        [
            "ratio rightsizer / VPA",
            *(f"{a / b:.2f}x" if b else "-" for a, b in zip(ours, theirs, strict=True)),
        ]
    )
    return [
        "",
        f"updater: {deployments} Deployments x {replicas} pods, requests far below usage, "
        f"mode Recreate, loops every {kw['interval']} s; the sides one after the other",
        table(
            ["updater", "s until all updated", "evictions", "API requests (whole side)"],
            rows,
        ),
    ]
