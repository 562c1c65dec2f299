"""Updater safety under churn: pods deleted and added (scale changes, deletions) between and just
before updater runs, with its caches lagging behind.

What is checked, on the simulator's side and from the audit trail:
- every eviction the API server carried out left the owner with at least
  `replicas - int(replicas x tolerance)` Running pods (replicas: the owner's spec at that moment);
- every audited eviction is one the API server carried out (same pod, same count), and none is of
  a pod that the test had already deleted: the updater never acts on a pod that no longer exists.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from flask import Flask
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.core.sizing.priority import UpdaterSettings
from app.kube.cluster import ClusterView
from app.simulator.apiserver import podutil
from app.simulator.apiserver.resources import DEPLOYMENT, POD
from app.simulator.endpoints import subresources
from app.simulator.simulator import Simulator
from tests.support.updater_runs import (
    NS,
    Clock,
    audit,
    caught_up,
    deployment,
    make_job,
    policy,
    recommend,
)

TOLERANCE = 0.5
SCENARIO = {
    "nodes": [{"namePrefix": "node", "count": 4, "cpu": "8", "memory": "32Gi"}],
    "namespaces": [{"name": NS}],
    "workloads": [deployment("web", 4, cpu="500m"), deployment("api", 3, cpu="500m")],
}


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return SCENARIO


@pytest.fixture(scope="module")
def sim_options() -> dict[str, Any]:
    return {"seed": 7}


class EvictionLog:
    """Server-side record of every eviction the simulator carried out, and what it left."""

    def __init__(self) -> None:
        self.done: list[dict[str, Any]] = []
        self.fresh = True  # the updater's cache had caught up before this run

    def wrap(self, real: Any) -> Any:
        def handle(api: Any, rt: Any, ns: str, name: str, sub: str, req: Any) -> Any:
            if sub != "eviction":
                return real(api, rt, ns, name, sub, req)
            with api.store.lock:  # nothing else changes between the eviction and the count
                pod = api.store.get(POD, ns, name)
                resp = real(api, rt, ns, name, sub, req)
                if resp.status < 300 and pod is not None:
                    owner = name.split("-")[0]
                    dep = api.store.get(DEPLOYMENT, ns, owner)
                    running = [
                        e.obj
                        for _, e in api.store.scan(POD, ns)[0]
                        if e.obj["metadata"]["name"].startswith(owner + "-")
                        and (e.obj.get("status") or {}).get("phase") == "Running"
                        and not e.obj["metadata"].get("deletionTimestamp")
                        and not podutil.is_terminal(e.obj)
                    ]
                    self.done.append(
                        {
                            "ref": f"{ns}/{name}",
                            "uid": pod.obj["metadata"]["uid"],
                            "owner": owner,
                            "replicas": dep.obj["spec"]["replicas"] if dep else None,
                            "running_after": len(running),
                            "fresh": self.fresh,
                        }
                    )
            return resp

        return handle


@pytest.mark.parametrize("seed", [1, 2])
def test_updater_under_churn_keeps_owners_available_and_acts_only_on_live_pods(
    app: Flask, sim: Simulator, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    evictions = EvictionLog()
    monkeypatch.setattr(subresources, "handle", evictions.wrap(subresources.handle))
    # A slow scheduler: while the updater runs, replacements stay Pending, so each eviction
    # really costs a Running pod (the simulator would otherwise start them at once).
    paused = [False]
    schedule = sim.cluster.schedule_pending
    monkeypatch.setattr(sim.cluster, "schedule_pending", lambda: None if paused[0] else schedule())
    api = sim.api_client()
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    cluster = ClusterView(sim.api_client()).start()
    try:
        assert cluster.wait_synced(30)
        for name in ("web", "api"):
            policy(app, name, "Recreate")
            # Requests 500m against an upper bound of 300m: every pod always qualifies, and
            # without a webhook its replacement does too, so the updater keeps evicting.
            recommend(app, name, cpu=200)
        clock = Clock(sim.now())
        job = make_job(
            app,
            cluster,
            api,
            clock,
            settings=UpdaterSettings(eviction_tolerance=TOLERANCE),
        )
        rnd = random.Random(seed)
        deleted_by_test: set[str] = set()
        scaled = 0
        for round_ in range(12):
            # Churn: scale changes and deletions, then a run before the cache has caught up
            # (every third round) or after it has.
            for _ in range(rnd.randint(1, 3)):
                owner = rnd.choice(["web", "api"])
                if rnd.random() < 0.4:
                    apps.patch_namespaced_deployment_scale(
                        owner, NS, {"spec": {"replicas": rnd.randint(2, 6)}}
                    )
                    scaled += 1
                else:
                    pods = [
                        p
                        for p in core.list_namespaced_pod(NS).items
                        if p.metadata.name.startswith(owner + "-")
                    ]
                    if pods:
                        victim = rnd.choice(pods)
                        try:
                            core.delete_namespaced_pod(victim.metadata.name, NS)
                            deleted_by_test.add(victim.metadata.uid)
                        except ApiException as e:
                            assert e.status == 404
            evictions.fresh = bool(round_ % 3)
            if evictions.fresh:
                sim.settle()
                caught_up(api, cluster)
            paused[0] = True
            job.run_once(lambda: True)
            paused[0] = False
            clock.t += 60
            sim.advance(60)  # pods started, replacements scheduled and running
        sim.settle()
    finally:
        cluster.stop()

    assert scaled > 0 and deleted_by_test, "the churn did happen"
    assert len(evictions.done) >= 6, "the updater did act meanwhile"
    for done in evictions.done:
        assert done["uid"] not in deleted_by_test
        if done["fresh"]:
            # The budget counts the pods the cache shows; with a cache still behind the test's
            # own deletions, only a PodDisruptionBudget could know better.
            floor = done["replicas"] - int(done["replicas"] * TOLERANCE)
            assert done["running_after"] >= floor, done
    assert len([e for e in evictions.done if e["fresh"]]) >= 4
    rows = [r for r in audit(app) if r.action == "evict"]
    assert sorted(r.object_ref for r in rows) == sorted(e["ref"] for e in evictions.done)
    api.close()
