"""The webhook's cluster caches against the simulated API server: LimitRange capping and owner
lookups (ReplicaSet without the hash label, Job -> CronJob), through POST /mutate."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from kubernetes import client as k8s

from app.core.owners import workload_of_pod
from app.core.workload_key import WorkloadKey
from app.kube.limitranges import LimitRangeCache
from app.kube.owners import OwnerCache
from app.simulator.simulator import Simulator
from app.simulator.testing import EMPTY
from app.webhook import webhook_of
from app.webhook.sources import ClusterSources, should_watch
from tests.support.json_bodies import plain
from tests.support.pods import amounts, apply_strictly
from tests.support.reviews import (
    MI,
    add_policy,
    add_recommendation,
    app_pod,
    patch_of,
    post,
    refresh,
    review,
)


def eventually(check: Callable[[], Any], what: str) -> Any:
    """Polls (bounded) until `check()` is truthy: watch events arrive asynchronously."""
    pause = threading.Event()
    for _ in range(200):
        value = check()
        if value:
            return value
        pause.wait(0.05)
    pytest.fail(f"never happened: {what}")


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return EMPTY


@pytest.fixture(scope="module")
def sim_namespaces() -> tuple[str, ...]:
    return ("shop",)


@pytest.fixture
def api(module_sim: Simulator) -> Iterator[k8s.ApiClient]:
    a = module_sim.api_client()
    yield a
    a.close()


def limit_range(name: str, limits: list[dict[str, Any]]) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"limits": limits}}


def test_limit_range_caps_the_mutated_request(
    app: Flask, client: FlaskClient, api: k8s.ApiClient
) -> None:
    core = k8s.CoreV1Api(api)
    core.create_namespaced_limit_range(
        "shop", plain(limit_range("cap", [{"type": "Container", "max": {"cpu": "200m"}}]))
    )
    hook = webhook_of(app)
    hook.sources = ClusterSources(api_client=api)
    add_policy()
    add_recommendation(cpu=250, memory=256 * MI)
    refresh(app)
    try:
        hook.start(wait=10)
        assert hook.limit_ranges is not None
        eventually(lambda: hook.limit_ranges("shop"), "the LimitRange reaches the cache")
        p = app_pod()
        body = post(client, review(p)).get_json()
        c = apply_strictly(p, patch_of(body["response"]))["spec"]["containers"][0]
        # The LimitRange max binds the limit, which keeps its 2:1 ratio to the request.
        assert amounts(c, "limits")["cpu"] == 200
        assert amounts(c, "requests") == {"cpu": 100, "memory": 256 * MI}

        # Deleting it lifts the cap again, without a restart.
        core.delete_namespaced_limit_range("cap", "shop")
        eventually(lambda: not hook.limit_ranges("shop"), "the deletion reaches the cache")
        body = post(client, review(app_pod())).get_json()
        c = apply_strictly(app_pod(), patch_of(body["response"]))["spec"]["containers"][0]
        assert amounts(c, "requests") == {"cpu": 250, "memory": 256 * MI}
    finally:
        hook.stop()


def test_several_limit_ranges_of_a_namespace_all_apply(api: k8s.ApiClient) -> None:
    core = k8s.CoreV1Api(api)
    core.create_namespaced_limit_range(
        "shop",
        plain(limit_range("a", [{"type": "Container", "max": {"cpu": "2", "memory": "1Gi"}}])),
    )
    core.create_namespaced_limit_range(
        "shop", plain(limit_range("b", [{"type": "Container", "max": {"cpu": "1"}}]))
    )
    cache = LimitRangeCache(api).start()
    try:
        items = eventually(lambda: len(cache("shop")) == 2 and cache("shop"), "both LimitRanges")
        assert sorted(i.max.get("cpu", 0) for i in items) == [1000, 2000]
        assert cache("elsewhere") == ()
    finally:
        cache.stop()
        core.delete_namespaced_limit_range("a", "shop")
        core.delete_namespaced_limit_range("b", "shop")


def test_limit_ranges_that_cannot_be_listed_leave_the_webhook_working(
    app: Flask, client: FlaskClient, caplog: pytest.LogCaptureFixture
) -> None:
    """An API server that does not answer: no capping, one warning, pods still patched."""
    unreachable = client_for("http://127.0.0.1:1")
    hook = webhook_of(app)
    hook.sources = sources = ClusterSources(api_client=unreachable)
    add_policy()
    add_recommendation(cpu=250, memory=256 * MI)
    refresh(app)
    try:
        with caplog.at_level(logging.WARNING, logger="app.kube.limitranges"):
            hook.start(wait=0.5)
            body = post(client, review(app_pod())).get_json()
            c = apply_strictly(app_pod(), patch_of(body["response"]))["spec"]["containers"][0]
            assert amounts(c, "requests") == {"cpu": 250, "memory": 256 * MI}
            assert hook.limit_ranges is not None and hook.limit_ranges("shop") == ()
            eventually(
                lambda: sources.limit_ranges is not None and sources.limit_ranges.failing,
                "the failed LIST is noted",
            )
        warnings = [r for r in caplog.records if "cannot list LimitRanges" in r.getMessage()]
        assert len(warnings) == 1
    finally:
        hook.stop()
        unreachable.close()


def test_a_refused_watch_list_is_no_outage(
    api: k8s.ApiClient, caplog: pytest.LogCaptureFixture
) -> None:
    """This 1.33 cluster refuses sendInitialEvents (422: WatchList gate off); the LIST after it
    syncs the cache, and capping is not reported off."""
    cache = LimitRangeCache(api)
    try:
        with caplog.at_level(logging.WARNING, logger="app.kube.limitranges"):
            cache.start()
            assert cache.wait_synced(10)
        assert cache.informer.lists == 1 and cache.informer.watch_lists == 0
        assert not cache.failing
        assert not [r for r in caplog.records if "cannot list LimitRanges" in r.getMessage()]
    finally:
        cache.stop()


def test_a_refused_watch_list_is_a_debug_record(
    api: k8s.ApiClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A server without WatchList answers 422: expected, not a problem (it read like an error
    in the demo's terminal at INFO, once per informer); a debug record says it."""
    cache = LimitRangeCache(api)
    try:
        with caplog.at_level(logging.DEBUG, logger="app.kube.informer"):
            cache.start()
            assert cache.wait_synced(10)
        refused = [r for r in caplog.records if "watch-list" in r.getMessage()]
        assert [r.levelno for r in refused] == [logging.DEBUG]
        assert "HTTP 422" in refused[0].getMessage()
    finally:
        cache.stop()


def client_for(host: str) -> k8s.ApiClient:
    cfg = k8s.Configuration()
    cfg.host = host
    return k8s.ApiClient(cfg)


def test_watching_is_on_in_a_pod_or_with_a_kubeconfig(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert not should_watch("auto", "")
    assert should_watch("auto", "/etc/kubeconfig")
    assert not should_watch(False, "/etc/kubeconfig")
    assert should_watch(True, "")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    assert should_watch("auto", "")


# Owners ----------------------------------------------------------------------------------------

JOB_TEMPLATE = {
    "template": {
        "spec": {"containers": [{"name": "a", "image": "busybox"}], "restartPolicy": "Never"}
    }
}


def owned_by(kind: str, name: str, uid: str = "") -> list[dict[str, Any]]:
    api_version = "apps/v1" if kind == "Deployment" else "batch/v1"
    uid = uid or f"00000000-0000-4000-8000-{abs(hash((kind, name))) % 10**12:012d}"
    return [{"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": True}]


def pod_of(kind: str, name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    owner = owned_by(kind, name)
    owner[0]["apiVersion"] = "apps/v1" if kind == "ReplicaSet" else "batch/v1"
    meta: dict[str, Any] = {
        "generateName": f"{name}-",
        "namespace": "shop",
        "ownerReferences": owner,
    }
    if labels:
        meta["labels"] = labels
    return {"metadata": meta, "spec": {"containers": [{"name": "app", "image": "busybox"}]}}


@pytest.fixture
def owners(api: k8s.ApiClient) -> Iterator[OwnerCache]:
    apps, batch = k8s.AppsV1Api(api), k8s.BatchV1Api(api)
    selector = {"matchLabels": {"app": "custom"}}
    rs_template = {"metadata": {"labels": {"app": "custom"}}, "spec": JOB_TEMPLATE["template"]}
    rs_template["spec"] = {"containers": [{"name": "app", "image": "busybox"}]}
    # The owners exist: the garbage collector deletes what names an owner that does not.
    web = apps.create_namespaced_deployment(
        "shop",
        plain(
            {
                "metadata": {"name": "web"},
                "spec": {
                    "replicas": 0,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": rs_template["spec"],
                    },
                },
            }
        ),
    )
    x = batch.create_namespaced_cron_job(
        "shop",
        plain({"metadata": {"name": "x"}, "spec": {"schedule": "0 0 * * *", "jobTemplate": {}}}),
    )
    apps.create_namespaced_replica_set(
        "shop",
        plain(
            {
                "metadata": {
                    "name": "custom",
                    "ownerReferences": owned_by("Deployment", "web", web.metadata.uid),
                },
                "spec": {"replicas": 0, "selector": selector, "template": rs_template},
            }
        ),
        _preload_content=False,
    )
    batch.create_namespaced_cron_job(
        "shop",
        plain(
            {"metadata": {"name": "nightly"}, "spec": {"schedule": "0 0 * * *", "jobTemplate": {}}}
        ),
        _preload_content=False,
    )
    batch.create_namespaced_job(
        "shop",
        plain(
            {
                "metadata": {
                    "name": "nightly-29000000",
                    "ownerReferences": owned_by("CronJob", "x", x.metadata.uid),
                },
                "spec": JOB_TEMPLATE,
            }
        ),
        _preload_content=False,
    )
    batch.create_namespaced_job(
        "shop",
        plain({"metadata": {"name": "one-off"}, "spec": JOB_TEMPLATE}),
        _preload_content=False,
    )
    cache = OwnerCache(api).start()
    assert cache.wait_synced(10)
    yield cache
    cache.stop()
    apps.delete_namespaced_replica_set("custom", "shop")
    apps.delete_namespaced_deployment("web", "shop")
    batch.delete_namespaced_cron_job("nightly", "shop")
    batch.delete_namespaced_job("nightly-29000000", "shop")
    batch.delete_namespaced_job("one-off", "shop")
    batch.delete_namespaced_cron_job("x", "shop")


def test_owner_lookup_follows_replicasets_and_jobs(owners: OwnerCache) -> None:
    def workload(p: dict[str, Any]) -> WorkloadKey | None:
        return workload_of_pod(p, "shop", owners)

    # A ReplicaSet whose pods carry no pod-template-hash: its own ownerReferences name the owner.
    assert workload(pod_of("ReplicaSet", "custom")) == WorkloadKey("shop", "Deployment", "web")
    # A Job of a CronJob: the Job's ownerReferences (here naming CronJob "x").
    assert workload(pod_of("Job", "nightly-29000000")) == WorkloadKey("shop", "CronJob", "x")
    # A Job nobody owns stays a Job.
    assert workload(pod_of("Job", "one-off")) == WorkloadKey("shop", "Job", "one-off")
    # A Job not seen yet, named <known cronjob>-<minutes>: that CronJob's.
    assert workload(pod_of("Job", "nightly-29000060")) == WorkloadKey("shop", "CronJob", "nightly")
    # ... but not when no such CronJob exists.
    assert workload(pod_of("Job", "hourly-29000060")) == WorkloadKey(
        "shop", "Job", "hourly-29000060"
    )
    # Deployments' ReplicaSets not in the cache still resolve by their hash.
    hashed = pod_of("ReplicaSet", "api-7f9c", {"pod-template-hash": "7f9c"})
    assert workload(hashed) == WorkloadKey("shop", "Deployment", "api")


def test_the_webhook_sizes_a_cronjob_pod_by_the_cronjobs_recommendation(
    app: Flask, client: FlaskClient, api: k8s.ApiClient, owners: OwnerCache
) -> None:
    hook = webhook_of(app)
    hook.owner_lookup = owners
    add_policy(name="nightly", target_kind="CronJob", target_name="nightly")
    add_recommendation(workload=("shop", "CronJob", "nightly"), container_name="app", cpu=300)
    refresh(app)
    p = pod_of("Job", "nightly-29000120")
    body = post(client, review(p)).get_json()
    c = apply_strictly(p, patch_of(body["response"]))["spec"]["containers"][0]
    assert amounts(c, "requests")["cpu"] == 300
