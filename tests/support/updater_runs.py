"""The updater run one step at a time against the simulated cluster, as tests/jobs does: the job
built as `rightsizer serve` builds it with a `Clock` the test moves, the rows it reads (policies,
recommendations) and the audit it writes."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from flask import Flask
from kubernetes import client
from sqlalchemy import select

from app.core.sizing.priority import UpdaterSettings
from app.jobs.updater import UpdaterJob
from app.kube.actions import PodActions
from app.kube.cluster import ClusterView
from app.kube.limitranges import LimitRangeCache
from app.settings import Settings, settings_of
from app.simulator.simulator import Simulator
from app.simulator.testing import running_simulator
from app.store.extensions import db
from app.store.models import AuditEvent, Policy, Recommendation
from app.store.session import app_sessions
from tests.support.json_bodies import plain, raw_body

NS = "shop"
GI = 1024**3


def deployment(
    name: str, replicas: int, cpu: str = "1", memory: str = "1Gi", guaranteed: bool = False
) -> dict[str, Any]:
    requests = {"cpu": cpu, "memory": memory}
    return {
        "kind": "Deployment",
        "namespace": NS,
        "name": name,
        "replicas": replicas,
        "containers": [
            {
                "name": "app",
                "image": "example.com/app:1",
                "requests": requests,
                "limits": dict(requests) if guaranteed else {},
                "usage": {"cpu": {"base": 0.1}, "memory": {"base": "200Mi"}},
            }
        ],
    }


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@contextlib.contextmanager
def web_api(
    replicas: int = 3, connect: Callable[[Simulator], Any] = Simulator.api_client
) -> Iterator[Any]:
    """A simulated cluster of two nodes and Deployment `web` in NS; the official client to it
    (`connect(sim)`: the simulator's own by default)."""
    scenario = {
        "nodes": [{"namePrefix": "node", "count": 2, "cpu": "4", "memory": "16Gi"}],
        "namespaces": [{"name": NS}],
        "workloads": [deployment("web", replicas)],
    }
    with running_simulator(scenario) as sim:
        api = connect(sim)
        try:
            yield api
        finally:
            api.close()


def recommend(
    app: Flask,
    name: str,
    cpu: int,
    memory: int = GI,
    history: float = 2 * 3600.0,
    spread: float = 0.5,
    namespace: str = NS,
) -> None:
    """A stored recommendation for container `app` of Deployment `name` (millicores, bytes)."""
    now = datetime.now(UTC)
    with app.app_context():
        db.session.add(
            Recommendation(
                namespace=namespace,
                kind="Deployment",
                name=name,
                container="app",
                target_cpu=cpu,
                target_memory=memory,
                lower_bound_cpu=int(cpu * (1 - spread)),
                lower_bound_memory=int(memory * (1 - spread)),
                upper_bound_cpu=int(cpu * (1 + spread)),
                upper_bound_memory=int(memory * (1 + spread)),
                uncapped_target_cpu=cpu,
                uncapped_target_memory=memory,
                sample_count=100,
                first_sample_at=now - timedelta(seconds=history),
                last_sample_at=now,
            )
        )
        db.session.commit()


def policy(
    app: Flask,
    target: str,
    mode: str,
    min_replicas: int | None = None,
    containers: list[dict[str, Any]] | None = None,
    namespace: str = NS,
    **options: Any,
) -> None:
    """A policy row for Deployment `target`; `options` are the policy's update fields as written
    (evictionRequirements, inPlaceSkipDisruptionBudget, startupBoost, ...)."""
    with app.app_context():
        db.session.add(
            Policy(
                name=target,
                namespace=namespace,
                target_kind="Deployment",
                target_name=target,
                update_mode=mode,
                min_replicas=min_replicas,
                container_policies=containers or [],
                update_options=options or None,
            )
        )
        db.session.commit()


def updater_settings(
    base: Settings,
    settings: UpdaterSettings | None = None,
    excluded_namespaces: frozenset[str] = frozenset(),
    policy_settle_seconds: float = 0.0,
    **updater: Any,
) -> Settings:
    """Settings (`settings_of(app)`, `from_environment({})`) as the updater job reads them, changed
    for a test: `updater` replaces
    fields of `settings.updater` (dry_run, evictions_in_flight, min_history_seconds, ...),
    `settings` its sizing rules, `excluded_namespaces` adds namespaces left alone. Unlike a
    deployment, a changed policy is acted on at once unless the test says otherwise
    (`policy_settle_seconds`: twice the webhook's cache refresh, as the job derives it)."""
    job = replace(base.updater, **updater)
    if settings is not None:
        job = replace(job, sizing=settings)
    return replace(
        base,
        updater=job,
        cluster=replace(
            base.cluster, excluded_namespaces=base.cluster.excluded_namespaces | excluded_namespaces
        ),
        webhook=replace(base.webhook, cache_refresh_seconds=policy_settle_seconds / 2),
    )


def make_job(
    app: Flask,
    cluster: ClusterView,
    api: Any,
    clock: Callable[[], float],
    registered: Callable[[], bool] = lambda: True,
    limit_ranges: LimitRangeCache | None = None,
    **options: Any,
) -> UpdaterJob:
    return UpdaterJob(
        app_sessions(app),
        cluster,
        PodActions(api),
        updater_settings(settings_of(app), **options),
        registered,
        clock=clock,
        limit_ranges=limit_ranges,
    )


def server_pods(api: Any, namespace: str = NS) -> list[dict[str, Any]]:
    """The pods as the simulator has them now, as plain JSON."""
    import json

    resp = client.CoreV1Api(api).list_namespaced_pod(namespace, _preload_content=False)
    items: list[dict[str, Any]] = json.loads(raw_body(resp))["items"]
    return items


def uids(api: Any, prefix: str, namespace: str = NS) -> set[str]:
    """The uids of the simulator's pods whose names start with `prefix-`."""
    return {
        p["metadata"]["uid"]
        for p in server_pods(api, namespace)
        if p["metadata"]["name"].startswith(prefix + "-")
    }


def caught_up(api: Any, cluster: ClusterView, timeout: float = 10.0) -> None:
    """The pod cache holds exactly the simulator's pods, at their latest versions."""

    def key(p: dict[str, Any]) -> tuple[str, str, str]:
        m = p["metadata"]
        return m["namespace"], m["name"], m["resourceVersion"]

    deadline = time.monotonic() + timeout
    while True:
        want = {key(p) for p in server_pods(api)}
        have = {
            (p.namespace, p.name, p.resource_version)
            for p in cluster.pods.items()
            if p.namespace == NS
        }
        if want == have:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"pod cache did not catch up: {sorted(want ^ have)}")
        time.sleep(0.05)


def audit(app: Flask) -> list[AuditEvent]:
    with app.app_context():
        rows = list(db.session.scalars(select(AuditEvent).order_by(AuditEvent.id)))
        db.session.expunge_all()
        return rows


def events(api: Any, namespace: str = NS) -> list[Any]:
    """The Events rightsizer wrote in `namespace`."""
    return [
        e
        for e in client.CoreV1Api(api).list_namespaced_event(namespace).items
        if e.source is not None and e.source.component == "rightsizer"
    ]


def settled(sim: Simulator, api: Any, cluster: ClusterView) -> None:
    """The simulator settled and the pod cache caught up with it."""
    sim.settle()
    caught_up(api, cluster)


# A pod-level budget (`spec.resources`, KEP-2837) shared by a pod's containers
POD_LEVEL = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}}


def shared(sim: Simulator, api: Any, cluster: ClusterView) -> None:
    """Deployment `shared`: two pods whose one container (no requests of its own) shares the
    pod-level budget POD_LEVEL: only the pod-level requests are sized."""
    template = {
        "metadata": {"labels": {"app": "shared"}},
        "spec": {"resources": POD_LEVEL, "containers": [{"name": "app", "image": "x:1"}]},
    }
    body = {
        "metadata": {"name": "shared"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "shared"}},
            "template": template,
        },
    }
    client.AppsV1Api(api).create_namespaced_deployment(NS, plain(body))
    settled(sim, api, cluster)


def LEADER() -> bool:
    """Passed to run_once where the job asks "still the leader?": always."""
    return True


def answers_lost(monkeypatch: Any, method: str, suffix: str) -> None:
    """The simulated API server does what each `method` request to a path ending in `suffix`
    asks, then drops the connection without answering: a network failure after the fact."""
    from app.simulator.endpoints import server

    real_send = server._Handler._send_body

    def lost(handler: Any, resp: Any) -> None:
        if handler.command == method and handler.path.split("?")[0].endswith(suffix):
            handler.close_connection = True  # done, and no answer leaves
            return
        real_send(handler, resp)

    monkeypatch.setattr(server._Handler, "_send_body", lost)
