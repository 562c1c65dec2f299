"""The updater against the real kube-apiserver, as the chart's ServiceAccount: evictions through
real PodDisruptionBudgets (the eviction subresource's own 429s), in-place resizes through the real
`pods/resize` subresource with the release's validation, and a rollout in progress left alone.

Every call rightsizer makes is in kube-apiserver's audit log under the chart's ServiceAccount, so
the tests read what it asked and what it was answered, not what it says it did.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest
from kubernetes import client

from app.core.workload_key import WorkloadKey
from tests.realkube.cluster import RealCluster
from tests.realkube.serve import add_policies, database_url, seed_recommendations, serving_as_chart
from tests.support.helm import FULLNAME, NAMESPACE
from tests.support.json_bodies import plain
from tests.support.processes import AppProcess, wait_for

SERVICE_ACCOUNT = f"system:serviceaccount:{NAMESPACE}:{FULLNAME}"
WRITTEN = {"cpu": "100m", "memory": "64Mi"}
TARGET_CPU, TARGET_MEMORY = 300, 200 * 2**20  # millicores, bytes: what rightsizer recommends
TARGET = {"cpu": "300m", "memory": "200Mi"}


def deployment(name: str, replicas: int, **spec: Any) -> dict[str, Any]:
    container = {
        "name": "app",
        "image": "registry.k8s.io/pause:3.10",
        "resources": {"requests": dict(WRITTEN)},
    }
    return {
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [container]},
            },
            **spec,
        },
    }


def ready(p: Any) -> bool:
    return p.metadata.deletion_timestamp is None and any(
        c.type == "Ready" and c.status == "True" for c in p.status.conditions or []
    )


def pods(cluster: RealCluster, namespace: str, app: str) -> list[Any]:
    with cluster.api() as api:
        return list(
            client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector=f"app={app}").items
        )


class ReadyFloor:
    """The fewest ready pods of `app` seen while it runs (a poll every 0.1 s)."""

    def __init__(self, cluster: RealCluster, namespace: str, app: str) -> None:
        self.cluster, self.namespace, self.app = cluster, namespace, app
        self.fewest: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            count = sum(ready(p) for p in pods(self.cluster, self.namespace, self.app))
            self.fewest = count if self.fewest is None else min(self.fewest, count)
            time.sleep(0.1)

    def __enter__(self) -> ReadyFloor:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def start_workload(cluster: RealCluster, namespace: str, body: dict[str, Any], count: int) -> None:
    with cluster.api() as api:
        client.CoreV1Api(api).create_namespace(plain({"metadata": {"name": namespace}}))
        client.AppsV1Api(api).create_namespaced_deployment(namespace, plain(body))
    name = body["metadata"]["name"]
    wait_for(
        lambda: sum(ready(p) for p in pods(cluster, namespace, name)) == count,
        60,
        f"{count} ready pods of {namespace}/{name}",
    )


def act_on(app: AppProcess, namespace: str, name: str, mode: str, **policy: Any) -> None:
    """The recommendation, then the policy that lets the updater apply it."""
    seed_recommendations(
        database_url(app),
        [(WorkloadKey(namespace, "Deployment", name), "app", TARGET_CPU, TARGET_MEMORY)],
    )
    add_policies(
        database_url(app), [{"name": name, "namespace": namespace, "mode": mode, **policy}]
    )


def calls(cluster: RealCluster, namespace: str, subresource: str) -> list[dict[str, Any]]:
    """rightsizer's calls on the pods/<subresource> of `namespace`, in order."""
    return [
        e
        for e in cluster.audit_events(SERVICE_ACCOUNT)
        if e.get("objectRef", {}).get("namespace") == namespace
        and e["objectRef"].get("resource") == "pods"
        and e["objectRef"].get("subresource") == subresource
    ]


def when(event: dict[str, Any]) -> float:
    return datetime.fromisoformat(event["requestReceivedTimestamp"]).timestamp()


def assert_not_retried_at_once(evictions: list[dict[str, Any]]) -> None:
    """A pod whose eviction was refused (429) is asked again only in a later updater run (one a
    second here), never at once."""
    last_refused: dict[str, float] = {}
    for e in evictions:
        pod = e["objectRef"]["name"]
        if pod in last_refused:
            assert when(e) - last_refused[pod] >= 0.5, ("asked again at once", pod, evictions)
        if e["responseStatus"]["code"] == 429:
            last_refused[pod] = when(e)


@pytest.fixture(scope="module")
def updater(
    real_cluster: RealCluster,
    chart_installed: list[dict[str, Any]],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[AppProcess]:
    with serving_as_chart(
        real_cluster,
        chart_installed,
        tmp_path_factory.mktemp("updater"),
        RIGHTSIZER_UPDATER_INTERVAL="1",
        RIGHTSIZER_UPDATER_MIN_LIFETIME_SECONDS="0",
        RIGHTSIZER_UPDATER_MIN_REPLICAS="1",
        RIGHTSIZER_RECOMMENDER_INTERVAL="3600",  # no metrics here: the seeded rows are the truth
        RIGHTSIZER_WORKERS="1",
    ) as app:
        yield app


def test_evictions_go_through_the_disruption_budget_and_refusals_are_not_retried(
    real_cluster: RealCluster, updater: AppProcess
) -> None:
    ns = "upd-recreate"
    start_workload(real_cluster, ns, deployment("web", 4), 4)
    with real_cluster.api() as api:
        client.PolicyV1Api(api).create_namespaced_pod_disruption_budget(
            ns,
            plain(
                {
                    "metadata": {"name": "web"},
                    "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}},
                }
            ),
        )
    with ReadyFloor(real_cluster, ns, "web") as floor:
        act_on(updater, ns, "web", "Recreate")
        wait_for(
            lambda: (lambda ps: len(ps) == 4 and all(ready(p) for p in ps) and ps)(
                [
                    p
                    for p in pods(real_cluster, ns, "web")
                    if p.spec.containers[0].resources.requests == TARGET
                ]
            ),
            120,
            "every web pod replaced with the recommended requests",
            interval=0.5,
        )
    assert floor.fewest is not None and floor.fewest >= 3, (floor.fewest, updater.log()[-3000:])
    evictions = calls(real_cluster, ns, "eviction")
    answers = [e["responseStatus"]["code"] for e in evictions]
    assert answers.count(201) == 4, answers  # one eviction for each pod, the budget's 429s aside
    assert set(answers) <= {201, 429}, answers
    assert_not_retried_at_once(evictions)


def test_in_place_resizes_go_through_pods_resize_and_are_never_refused(
    real_cluster: RealCluster, updater: AppProcess
) -> None:
    ns = "upd-inplace"
    start_workload(real_cluster, ns, deployment("api", 2), 2)
    before = {p.metadata.name for p in pods(real_cluster, ns, "api")}
    act_on(updater, ns, "api", "InPlaceOrRecreate")
    resized = wait_for(
        lambda: (lambda ps: len(ps) == 2 and ps)(
            [
                p
                for p in pods(real_cluster, ns, "api")
                if p.spec.containers[0].resources.requests == TARGET
            ]
        ),
        60,
        "both api pods resized",
        interval=0.5,
    )
    resizes = calls(real_cluster, ns, "resize")
    assert {p.metadata.name for p in resized} == before, (  # the same pods: resized, not replaced
        resizes,
        calls(real_cluster, ns, "eviction"),
        updater.log()[-4000:],
    )
    assert [e["responseStatus"]["code"] for e in resizes] == [200, 200], resizes
    assert calls(real_cluster, ns, "eviction") == []


def test_a_rollout_in_progress_never_takes_the_workload_below_its_budget(
    real_cluster: RealCluster, updater: AppProcess
) -> None:
    """A rollout stuck half-way (its new pods can never be scheduled) has already taken one of
    four pods down, which is all the PodDisruptionBudget (minAvailable 3) allows: whatever the
    updater asks, no ready pod is lost, and each refusal is asked again only in a later run."""
    ns = "upd-rollout"
    start_workload(real_cluster, ns, deployment("shop", 4), 4)
    with real_cluster.api() as api:
        client.PolicyV1Api(api).create_namespaced_pod_disruption_budget(
            ns,
            plain(
                {
                    "metadata": {"name": "shop"},
                    "spec": {"minAvailable": 3, "selector": {"matchLabels": {"app": "shop"}}},
                }
            ),
        )
        client.AppsV1Api(api).patch_namespaced_deployment(
            "shop",
            ns,
            {
                "spec": {
                    "strategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}},
                    "template": {"spec": {"nodeSelector": {"no-such-node": "true"}}},
                }
            },
        )
    wait_for(
        lambda: sum(ready(p) for p in pods(real_cluster, ns, "shop")) == 3,
        30,
        "the rollout stuck with three old pods ready",
    )
    with ReadyFloor(real_cluster, ns, "shop") as floor:
        act_on(updater, ns, "shop", "Recreate")
        wait_for(lambda: calls(real_cluster, ns, "eviction"), 30, "the updater trying an eviction")
        time.sleep(5)  # five more updater runs
    assert floor.fewest == 3, (floor.fewest, updater.log()[-3000:])
    evictions = calls(real_cluster, ns, "eviction")
    assert {e["responseStatus"]["code"] for e in evictions} == {429}, evictions
    assert_not_retried_at_once(evictions)
