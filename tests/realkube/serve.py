"""`rightsizer serve` against the real control plane, with its webhook registered by its own code,
and what the tests seed in its database (policies, recommendations)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from kubernetes import client
from sqlalchemy.orm import Session

from app.core.recommend.array_model import ArrayModel
from app.core.workload_key import WorkloadKey
from app.serving.certs import ensure
from app.store.recommendations import save_all
from app.store.results import ContainerResult, SampleSpan, results_from_model
from tests.realkube.cluster import RealCluster, free_port
from tests.support.helm import FULLNAME, NAMESPACE
from tests.support.json_bodies import plain
from tests.support.pods import rec
from tests.support.processes import AppProcess

Target = tuple[WorkloadKey, str, int, int]  # workload, container, millicores, bytes


def seed_recommendations(db_url: str, targets: Iterable[Target], history: float = 86400) -> None:
    """Each container's recommendation (target = bounds), learned from `history` seconds of
    samples, as the recommender saves one."""
    now = datetime.now(UTC)
    span = SampleSpan(1000, now.timestamp() - history, now.timestamp())
    results = [
        ContainerResult(key, name, rec(cpu, memory), None, samples=span)
        for key, name, cpu, memory in targets
    ]
    engine = sa.create_engine(db_url)
    with Session(engine) as session:
        save_all(session, results, now, batch_size=500)
        session.commit()
    engine.dispose()


def seed_learned(
    db_url: str, key: WorkloadKey, pod: str, container: str, cores: float, memory: float
) -> None:
    """The recommendation the model learns from two hours of one pod's samples, a minute apart,
    of `cores` and `memory` bytes, ending now: saved as the recommender saves it."""
    model = ArrayModel()
    t0 = datetime.now(UTC).timestamp() - 7200
    for i in range(120):
        model.add_cpu(key, pod, container, t0 + 60 * i, cores, 0.1)
        model.add_memory(key, pod, container, t0 + 60 * i, memory)
    engine = sa.create_engine(db_url)
    with Session(engine) as session:
        save_all(session, results_from_model(model), datetime.fromtimestamp(t0 + 7200, UTC), 100)
        session.commit()
    engine.dispose()


def add_policies(db_url: str, policies: Iterable[dict[str, Any]]) -> None:
    """Policy rows: name, namespace, mode and optionally the target's kind (Deployment) and name
    (the policy's; None: the whole namespace), containerPolicies and placement (as users write
    them)."""
    engine = sa.create_engine(db_url)
    with engine.begin() as conn:
        for p in policies:
            target = p.get("target", p["name"])
            conn.execute(
                sa.text(
                    "INSERT INTO policies (name, namespace, target_kind, target_name, "
                    "update_mode, container_policies, placement, version, created_at, "
                    "updated_at) VALUES (:name, :ns, :kind, :target, :mode, :cps, "
                    ":placement, 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                ),
                {
                    "name": p["name"],
                    "ns": p["namespace"],
                    "kind": p.get("kind", "Deployment") if target is not None else None,
                    "target": target,
                    "mode": p["mode"],
                    "cps": json.dumps(p.get("containerPolicies", [])),
                    "placement": p.get("placement"),
                },
            )
    engine.dispose()


@contextmanager
def serving(
    cluster: RealCluster,
    directory: Path,
    own_namespace: str,
    config_name: str,
    kubeconfig: str | None = None,
    **settings: Any,
) -> Iterator[AppProcess]:
    """rightsizer serve over TLS on 127.0.0.1, its webhook registered (url, caBundle) as
    `config_name` and removed again on exit, with SQLite in `directory`, as the admin unless
    `kubeconfig` says otherwise. Jobs are off unless `settings` turn them on."""
    with cluster.api() as api:
        try:
            client.CoreV1Api(api).create_namespace(plain({"metadata": {"name": own_namespace}}))
        except client.ApiException as e:
            if e.status != 409:
                raise
    paths, _ = ensure(directory / "certs", ["localhost"])
    port = free_port()
    app = AppProcess(
        kubeconfig or cluster.kubeconfig_path,
        f"sqlite:///{directory}/rightsizer.db",
        directory / "app.log",
        ca_file=str(paths.ca),
        port=port,
        **{
            "RIGHTSIZER_JOBS": "false",
            "RIGHTSIZER_WEBHOOK_CACHE_REFRESH_SECONDS": "1",
            **settings,
            "RIGHTSIZER_NAMESPACE": own_namespace,
            "RIGHTSIZER_WEBHOOK_REGISTER": "true",
            "RIGHTSIZER_WEBHOOK_CONFIG_NAME": config_name,
            # kube-apiserver calls the webhook here (in a cluster: the Service)
            "RIGHTSIZER_WEBHOOK_URL": f"https://localhost:{port}/mutate",
            "RIGHTSIZER_TLS_CERT_FILE": paths.cert,
            "RIGHTSIZER_TLS_KEY_FILE": paths.key,
            "RIGHTSIZER_CERT_DIR": paths.directory,
        },
    )
    try:
        app.wait_ready()
        yield app
    finally:
        app.stop()
        cluster.delete_webhook_configuration(config_name)


def chart_env(docs: list[dict[str, Any]]) -> dict[str, str]:
    """The literal environment the chart gives rightsizer's container (valueFrom left out), less
    what differs between a pod and a process on this machine (files, address, access log)."""
    [deployment] = [d for d in docs if d["kind"] == "Deployment"]
    [container] = [
        c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "rightsizer"
    ]
    env = {e["name"]: str(e["value"]) for e in container["env"] if "value" in e}
    for local in LOCAL:
        env.pop(local, None)
    return env


LOCAL = (
    "RIGHTSIZER_CERT_DIR",
    "RIGHTSIZER_TLS_CERT_FILE",
    "RIGHTSIZER_TLS_KEY_FILE",
    "RIGHTSIZER_BIND",
    "RIGHTSIZER_ACCESS_LOG",
    "RIGHTSIZER_CERT_ROTATE",
)


@contextmanager
def serving_as_chart(
    cluster: RealCluster, docs: list[dict[str, Any]], directory: Path, **settings: Any
) -> Iterator[AppProcess]:
    """`serving` with the chart's environment, authenticated as the chart's ServiceAccount (a
    TokenRequest token), so every call passes or fails the chart's RBAC."""
    env = {**chart_env(docs), **settings}
    kubeconfig = cluster.service_account_kubeconfig(
        NAMESPACE, FULLNAME, directory / "sa.kubeconfig"
    )
    with serving(
        cluster,
        directory,
        env["RIGHTSIZER_NAMESPACE"],
        env["RIGHTSIZER_WEBHOOK_CONFIG_NAME"],
        kubeconfig=str(kubeconfig),
        **env,
    ) as app:
        yield app


def database_url(app: AppProcess) -> str:
    return f"sqlite:///{app.log_path.parent}/rightsizer.db"
