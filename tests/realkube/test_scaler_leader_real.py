"""The proportional scaler through the real `/scale` subresource, and two `rightsizer serve`
processes electing a leader through a real Lease, as the chart's ServiceAccount.

Two replicas run the jobs only on the leader. The scaler follows kwok nodes added and cordoned;
then the leader is killed (SIGKILL: no release of the Lease) and the other takes the Lease over
once it has expired, and goes on scaling.
"""

from __future__ import annotations

import json
import math
import os
import signal
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from kubernetes import client

from app.core.quantity import amount
from tests.realkube.cluster import RealCluster
from tests.realkube.serve import chart_env, serving_as_chart
from tests.support.helm import FULLNAME, NAMESPACE
from tests.support.json_bodies import plain
from tests.support.processes import AppProcess, wait_for

SERVICE_ACCOUNT = f"system:serviceaccount:{NAMESPACE}:{FULLNAME}"
NS = "scale"
LEASE = {
    "RIGHTSIZER_LEASE_DURATION": "6",
    "RIGHTSIZER_LEASE_RENEW_DEADLINE": "4",
    "RIGHTSIZER_LEASE_RETRY_PERIOD": "1",
}


def replicas(cluster: RealCluster) -> int:
    with cluster.api() as api:
        scale = client.AppsV1Api(api).read_namespaced_deployment_scale("dns", NS)
    return int(scale.spec.replicas)


def linear(cluster: RealCluster) -> int:
    """cluster-proportional-autoscaler's linear mode with coresPerReplica 4, nodesPerReplica 1,
    over the schedulable nodes (other tests' nodes included): max(ceil(cores / 4), nodes)."""
    with cluster.api() as api:
        nodes = [n for n in client.CoreV1Api(api).list_node().items if not n.spec.unschedulable]
    cores = sum(amount("cpu", n.status.allocatable["cpu"]) for n in nodes) / 1000
    return max(math.ceil(cores / 4), len(nodes))


def becomes(cluster: RealCluster, count: int, what: str) -> None:
    wait_for(lambda: replicas(cluster) == count, 30, f"{count} replicas: {what}", interval=0.3)


def add_scaler(db_url: str, params: dict[str, Any]) -> None:
    engine = sa.create_engine(db_url)
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO scalers (cluster_id, name, target_namespace, target_kind, "
                "target_name, params, enabled, version, created_at, updated_at) VALUES "
                "((SELECT min(id) FROM clusters), 'dns', :ns, 'Deployment', 'dns', :p, 1, 1, "
                "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            ),
            {"ns": NS, "p": json.dumps(params)},
        )
    engine.dispose()


def holder(cluster: RealCluster, lease: str) -> str:
    with cluster.api() as api:
        spec = client.CoordinationV1Api(api).read_namespaced_lease(lease, NAMESPACE).spec
    return spec.holder_identity or ""


def owner(apps: list[AppProcess], identity: str) -> AppProcess | None:
    """The process whose session holds the pid in the Lease's holderIdentity (host_pid_rand)."""
    try:
        session = os.getsid(int(identity.split("_")[-2]))
    except (IndexError, ValueError, ProcessLookupError):
        return None
    return next((a for a in apps if a.proc.pid == session), None)


@pytest.fixture
def two_replicas(
    real_cluster: RealCluster,
    chart_installed: list[dict[str, Any]],
    tmp_path: Path,
) -> Iterator[tuple[list[AppProcess], str]]:
    """Two serve processes sharing one SQLite database, as two replicas share PostgreSQL."""
    with real_cluster.api() as api:
        client.CoreV1Api(api).create_namespace(plain({"metadata": {"name": NS}}))
        client.AppsV1Api(api).create_namespaced_deployment(
            NS,
            plain(
                {
                    "metadata": {"name": "dns"},
                    "spec": {
                        "replicas": 1,
                        "selector": {"matchLabels": {"app": "dns"}},
                        "template": {
                            "metadata": {"labels": {"app": "dns"}},
                            "spec": {
                                "containers": [
                                    {"name": "dns", "image": "registry.k8s.io/pause:3.10"}
                                ]
                            },
                        },
                    },
                }
            ),
        )
    db = f"sqlite:///{tmp_path}/rightsizer.db"
    with ExitStack() as stack:
        apps = []
        for i in range(2):
            (tmp_path / f"r{i}").mkdir()
            apps.append(
                stack.enter_context(
                    serving_as_chart(
                        real_cluster,
                        chart_installed,
                        tmp_path / f"r{i}",
                        RIGHTSIZER_DATABASE_URL=db,
                        RIGHTSIZER_SCALER_INTERVAL="1",
                        RIGHTSIZER_RECOMMENDER_INTERVAL="3600",
                        RIGHTSIZER_UPDATER_INTERVAL="3600",
                        RIGHTSIZER_WORKERS="1",
                        **LEASE,
                    )
                )
            )
        yield apps, db


def test_the_scaler_follows_real_nodes_and_survives_its_leader(
    real_cluster: RealCluster,
    two_replicas: tuple[list[AppProcess], str],
    chart_installed: list[dict[str, Any]],
) -> None:
    env_lease = chart_env(chart_installed)["RIGHTSIZER_LEASE_NAME"]
    apps, db = two_replicas
    leader = wait_for(
        lambda: owner(apps, holder(real_cluster, env_lease)), 30, "a leader among the two"
    )
    add_scaler(db, {"linear": {"coresPerReplica": 4, "nodesPerReplica": 1}})
    before = linear(real_cluster)
    becomes(real_cluster, before, "the nodes there")
    real_cluster.add_node("kwok-scale-0")
    try:
        after = linear(real_cluster)
        assert after == before + 2  # 8 cores more
        becomes(real_cluster, after, "a node added")
        with real_cluster.api() as api:
            client.CoreV1Api(api).patch_node("kwok-scale-0", {"spec": {"unschedulable": True}})
        becomes(real_cluster, before, "that node cordoned: not counted")

        os.killpg(leader.proc.pid, signal.SIGKILL)  # gone without releasing the Lease
        survivor = next(a for a in apps if a is not leader)
        wait_for(
            lambda: owner(apps, holder(real_cluster, env_lease)) is survivor,
            30,
            "the other replica holding the Lease",
        )
        with real_cluster.api() as api:
            client.CoreV1Api(api).patch_node("kwok-scale-0", {"spec": {"unschedulable": False}})
        becomes(real_cluster, after, "uncordoned, scaled by the new leader")
    finally:
        with real_cluster.api() as api:
            client.CoreV1Api(api).delete_node("kwok-scale-0")
    scales = [
        e
        for e in real_cluster.audit_events(SERVICE_ACCOUNT)
        if e.get("objectRef", {}).get("subresource") == "scale"
        and e["objectRef"].get("namespace") == NS
        and e["verb"] in ("patch", "update")
    ]
    assert scales and all(e["responseStatus"]["code"] == 200 for e in scales), scales
