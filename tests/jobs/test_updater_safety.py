"""The updater against Kubernetes' own rules (issue #15): what it counts, what it asks the API
server for, and what it does when refused. Built as `rightsizer serve` builds it, against the
simulator (which applies the resize rules of the release it serves)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from flask import Flask
from kubernetes import client

from app import create_app
from app.core.sizing.priority import UpdaterSettings
from app.jobs.updater import UpdaterJob
from app.kube.actions import PodActions
from app.kube.cluster import ClusterView
from app.settings import settings_of
from app.simulator.simulator import Simulator
from app.simulator.testing import running_simulator
from app.store.extensions import db
from app.store.models import Recommendation
from app.store.session import app_sessions
from app.webhook import webhook_of
from tests.support.json_bodies import plain
from tests.support.updater_runs import (
    GI,
    LEADER,
    NS,
    Clock,
    audit,
    deployment,
    events,
    make_job,
    policy,
    recommend,
    server_pods,
    settled,
    uids,
)

NODES = [{"namePrefix": "node", "count": 3, "cpu": "4", "memory": "16Gi"}]


def scenario(*workloads: dict[str, Any], version: str = "1.33") -> dict[str, Any]:
    return {
        "nodes": NODES,
        "namespaces": [{"name": NS}],
        "workloads": list(workloads),
        "kubernetesVersion": version,
    }


@pytest.fixture
def started() -> Iterator[Any]:
    """A function starting a simulator for a scenario; each is stopped afterwards."""
    stack: list[Any] = []

    def start(sc: dict[str, Any]) -> tuple[Simulator, Any, ClusterView]:
        cm = running_simulator(sc)
        sim = cm.__enter__()
        api = sim.api_client()
        view = ClusterView(sim.api_client()).start()
        assert view.wait_synced(30)
        stack.append((cm, api, view))
        return sim, api, view

    yield start
    for cm, api, view in reversed(stack):
        view.stop()
        api.close()
        cm.__exit__(None, None, None)


def wait_for(check: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.05)


# --- 5: terminal pods --------------------------------------------------------------------------


def test_terminal_pods_are_neither_counted_nor_evicted(app: Flask, started: Any) -> None:
    sim, api, cluster = started(scenario(deployment("web", 3)))
    core = client.CoreV1Api(api)
    [failed, *_] = sorted(p["metadata"]["name"] for p in server_pods(api))
    core.patch_namespaced_pod_status(failed, NS, {"status": {"phase": "Failed"}})
    failed_uid = core.read_namespaced_pod(failed, NS).metadata.uid
    settled(sim, api, cluster)
    wait_for(lambda: getattr(cluster.pods.get(NS, failed), "phase", None) == "Failed")
    policy(app, "web", "Recreate", min_replicas=1)
    recommend(app, "web", cpu=200)
    job = make_job(app, cluster, api, Clock(sim.now()))
    job.run_once(LEADER)
    assert failed_uid in uids(api, "web")  # still there: not the updater's to evict
    assert all(r.object_ref != f"{NS}/{failed}" for r in audit(app))


# --- 6: disruption budget during a rollout -----------------------------------------------------


def test_a_rollout_surge_never_disrupts_more_than_the_tolerance(app: Flask, started: Any) -> None:
    """Replicas 4, tolerance 0.5, 5 pods in two ReplicaSets: at most int(4 x 0.5) = 2 go.

    A real rollout, held half-way: maxSurge 1 and maxUnavailable 0 with a minReadySeconds the
    frozen clock never reaches, so the new ReplicaSet's one pod is ready but never available and
    the old ReplicaSet keeps its 4 (the updater goes by kind and name, as VPA does)."""
    sim, api, cluster = started(scenario(deployment("web", 4)))
    client.AppsV1Api(api).patch_namespaced_deployment(
        "web",
        NS,
        {
            "spec": {
                "minReadySeconds": 3600,
                "strategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                "template": {"metadata": {"annotations": {"rollout": "2"}}},
            }
        },
    )
    settled(sim, api, cluster)
    wait_for(lambda: len([p for p in cluster.pods.items() if p.namespace == NS]) == 5)
    before = uids(api, "web")
    assert len(before) == 5
    policy(app, "web", "Recreate")
    recommend(app, "web", cpu=200)
    job = make_job(app, cluster, api, Clock(sim.now()))
    summary = job.run_once(LEADER)
    assert len(before - uids(api, "web")) == 2, summary
    assert "2 pods updated" in summary and "3 held back" in summary


# --- 3: a refused resize falls back to eviction ------------------------------------------------


def test_a_resize_the_api_server_refuses_falls_back_to_eviction(app: Flask, started: Any) -> None:
    """Kubernetes 1.36's PodResizeValidator answers 403 when the new requests exceed the
    node's allocatable; the pod fits a bigger node, so it is evicted (the webhook sizes its
    replacement) instead of being asked again every run."""
    sim, api, cluster = started(scenario(deployment("web", 2), version="1.36"))
    sim.add_node("big", cpu="16", memory="64Gi")
    wait_for(lambda: cluster.nodes.get("", "big") is not None)
    policy(app, "web", "InPlaceOrRecreate", min_replicas=1)
    recommend(app, "web", cpu=6000, spread=0.1)  # 6 cores: more than a 4-core node has
    before = uids(api, "web")
    job = make_job(app, cluster, api, Clock(sim.now()))
    summary = job.run_once(LEADER)
    assert "1 pods updated, 1 resize fallbacks" in summary, summary
    assert len(before - uids(api, "web")) == 1
    [row] = audit(app)
    assert row.action == "evict"
    assert row.details["fallback"].startswith("resize refused by the API server (HTTP 403: ")
    assert "Node didn't have enough allocatable resources: cpu, requested: 6000" in row.message
    assert [e.reason for e in events(api)] == ["RightsizerResizeFallback"]


def test_a_memory_limit_decrease_on_1_33_is_evicted_without_asking(
    app: Flask, started: Any
) -> None:
    """1.33 refuses to lower a memory limit in place under resizePolicy NotRequired (422): the
    updater knows it from the server's version and evicts at once, naming the reason."""
    sim, api, cluster = started(scenario(deployment("db", 2, guaranteed=True)))
    policy(app, "db", "InPlaceOrRecreate", min_replicas=1)
    recommend(app, "db", cpu=1000, memory=GI // 2, spread=0.1)  # limits follow: memory down
    before = uids(api, "db")
    sim.reset_stats()
    job = make_job(app, cluster, api, Clock(sim.now()))
    summary = job.run_once(LEADER)
    assert "1 pods updated, 1 resize fallbacks" in summary, summary
    assert len(before - uids(api, "db")) == 1
    assert not [k for k in sim.stats()["byResource"] if "resize" in k]  # never sent
    [row] = audit(app)
    assert "Kubernetes 1.33 refuses to lower the memory limit of container app" in row.message


# --- 4: native sidecars -------------------------------------------------------------------------


def _web(api: Any, pod_spec: dict[str, Any]) -> None:
    """Deployment `web`, 2 replicas, with this pod spec (containers written out in full)."""
    client.AppsV1Api(api).create_namespaced_deployment(
        NS,
        plain(
            {
                "metadata": {"name": "web"},
                "spec": {
                    "replicas": 2,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod_spec},
                },
            }
        ),
    )


def _sidecar_deployment(api: Any) -> None:
    def c(name: str) -> dict[str, Any]:
        return {
            "name": name,
            "image": "example.com/app:1",
            "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
        }

    _web(
        api,
        {"initContainers": [{**c("proxy"), "restartPolicy": "Always"}], "containers": [c("app")]},
    )


def test_a_native_sidecar_is_resized_under_init_containers(app: Flask, started: Any) -> None:
    sim, api, cluster = started(scenario())
    _sidecar_deployment(api)
    settled(sim, api, cluster)
    wait_for(lambda: len(uids(api, "web")) == 2)
    policy(app, "web", "InPlaceOrRecreate", min_replicas=1)
    now = datetime.now(UTC)
    with app.app_context():
        for container, cpu in (("app", 1000), ("proxy", 200)):
            db.session.add(
                Recommendation(
                    namespace=NS,
                    kind="Deployment",
                    name="web",
                    container=container,
                    target_cpu=cpu,
                    target_memory=GI,
                    lower_bound_cpu=cpu // 2,
                    lower_bound_memory=GI // 2,
                    upper_bound_cpu=cpu * 3 // 2,
                    upper_bound_memory=GI * 3 // 2,
                    uncapped_target_cpu=cpu,
                    uncapped_target_memory=GI,
                    sample_count=100,
                    first_sample_at=now - timedelta(hours=2),
                    last_sample_at=now,
                )
            )
        db.session.commit()
    before = uids(api, "web")
    job = make_job(app, cluster, api, Clock(sim.now()))
    summary = job.run_once(LEADER)
    assert "1 pods updated" in summary, summary
    assert uids(api, "web") == before  # resized, not recreated
    proxies = sorted(
        p["spec"]["initContainers"][0]["resources"]["requests"]["cpu"] for p in server_pods(api)
    )
    assert proxies == ["1", "200m"]
    assert [r.action for r in audit(app)] == ["resize"]


# --- 7: QoS counts init containers -------------------------------------------------------------


def test_an_init_container_without_resources_makes_the_pod_burstable(
    app: Flask, started: Any
) -> None:
    """requests = limits on the app container but a plain init container without resources:
    Burstable, so lowering the request keeps the class and the pod is resized, not evicted."""
    sim, api, cluster = started(scenario())
    res = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
    _web(
        api,
        {
            "initContainers": [{"name": "setup", "image": "example.com/setup:1"}],
            "containers": [{"name": "app", "image": "example.com/app:1", "resources": res}],
        },
    )
    settled(sim, api, cluster)
    wait_for(lambda: len(uids(api, "web")) == 2)
    policy(
        app,
        "web",
        "InPlaceOrRecreate",
        min_replicas=1,
        containers=[{"containerName": "*", "controlledValues": "RequestsOnly"}],
    )
    recommend(app, "web", cpu=300, memory=GI, spread=0.1)
    before = uids(api, "web")
    summary = make_job(app, cluster, api, Clock(sim.now())).run_once(LEADER)
    assert "1 pods updated, 0 resize fallbacks" in summary, summary
    assert uids(api, "web") == before
    assert [r.action for r in audit(app)] == ["resize"]
    assert UpdaterSettings().eviction_tolerance == 0.5


def test_the_updater_leaves_alone_every_namespace_the_webhook_never_sizes() -> None:
    """kube-system is outside the webhook configuration's namespaceSelector: a pod evicted there
    comes back exactly as written, so evicting it would only disrupt it."""
    app = create_app(
        {"TESTING": True, "SQLALCHEMY_DATABASE_URI": "sqlite://", "EXCLUDED_NAMESPACES": "batch"}
    )
    with client.ApiClient() as api:  # never called: the job is only built
        job = UpdaterJob(
            app_sessions(app), ClusterView(api), PodActions(api), settings_of(app), lambda: True
        )
    excluded = job.never_sized
    assert {"kube-system", "batch", "rightsizer"} <= excluded
    assert excluded == webhook_of(app).excluded_namespaces
