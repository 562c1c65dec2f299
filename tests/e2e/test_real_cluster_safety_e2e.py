"""End to end for issue #15 ("Real-cluster safety"): with a strict LimitRange and a rollout in
progress, the updater never leaves a Deployment below its disruption budget, and every pod the
webhook sizes is one kube-apiserver admits.

The namespace `strict` holds a LimitRange with a Container `min`/`max` and `maxLimitRequestRatio`
(cpu 2, memory 1.5) and a Pod `min` (600m, 512Mi) and `max`. Two Deployments of 4 replicas, two
containers each, all values within the range, and 8 days of usage history served by the
simulator's Prometheus API, so recommendations exist as soon as rightsizer starts:

- `api`, Recreate. Its `app` container (requests 1 / 1Gi, limits 1500m / 1536Mi) is
  `controlledValues: RequestsOnly` and uses ~50m / 300Mi: the recommendation (~60-90m cpu,
  ~363Mi memory) lowers both requests, but limit / ratio bounds them from below (750m, 1Gi).
  `proxy` (100m / 128Mi, limits 200m / 192Mi) runs near its limits: its requests go *up*
  (~247m / ~215Mi) and its limits keep the ratio 2 and 1.5. Sized as rightsizer did before
  issue #15 (`app/core/patch.py` at e70be37), each replacement asked for ~80m under a 1500m
  limit (cpu ratio ~19 > 2), ~363Mi under 1536Mi (ratio 4.2 > 1.5) and ~330m for the pod
  (< Pod min 600m): LimitRanger refused every one (403, a `FailedCreate` Event on the
  ReplicaSet), and the Deployment lost the evicted pods for good.
- `worker`, InPlaceOrRecreate. `main` (400m / 384Mi, limits 800m / 512Mi, RequestsAndLimits)
  uses ~30m / 450Mi: cpu goes down to the Container `min` and the Pod `min` of 600m scales it
  back up, memory goes up (and its limit with it, so Kubernetes 1.33 lets the pod be resized in
  place). `helper` (RequestsOnly, limits 400m / 192Mi) idles: its cpu request cannot go below
  limit / 2. The old sizing gave the pod 100m of cpu and 256Mi of memory in all, under the Pod
  `min`, with container ratios of 8 and 1.54 (a resize the API server accepts — LimitRanger
  checks pod creation — but a pod that could not be created again as it stands).

Checked in scratch worktrees: patched with the old `app/core/patch.py`, every one of the 8 pods
is refused by the simulator's `limitranger.validate` (patched with the current one, every one is
admitted), and this test then fails on the ReplicaSet's `FailedCreate` Event; with the current
sizing but the updater of e70be37 (a budget per ReplicaSet) it fails on runs that disrupted 3
pods of a Deployment (2 of the ReplicaSet, 1 of the surge).

The rollout: each Deployment starts a rolling update with maxSurge 1 and maxUnavailable 0 that
is held half-way (as `tests/jobs/test_updater_safety.py` does): the new ReplicaSet's
minReadySeconds is never reached on the frozen clock, so its one pod is ready but never
available and the old ReplicaSet keeps its 4: 5 pods for 4 replicas in two ReplicaSets. The
updater (every second) may disrupt int(4 x 0.5) = 2 pods of each Deployment across both
ReplicaSets, and only while 4 - 2 ready pods remain.

While it runs, the pods are listed every 0.1 s; the Running-and-Ready count of each
Deployment must never drop below replicas - int(replicas x 0.5), and no `FailedCreate` Event may
appear. The simulator starts a replacement within milliseconds, so a dip is rarely caught that
way: the updater's log shows what each run did, and no run may have disrupted more than
int(replicas x 0.5) pods of a Deployment, surge included. At the end: every `api` pod
was created through the webhook (`rightsizer.io/updates`), every `worker` pod was resized in
place (same pods, one audited resize each), no `FailedCreate` Event exists in the namespace,
and every pod as stored passes the simulator's LimitRanger with requests <= limits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from kubernetes import client

from app.core.quantity import amount as quantity_amount
from app.simulator.apiserver import limitranger
from app.simulator.simulator import Simulator
from tests.support.processes import (
    AppProcess,
    recommendations,
    updating_from_history,
    wait_for,
)

pytestmark = pytest.mark.e2e

NS = "strict"
REPLICAS = 4


def _container(
    name: str, requests: dict[str, str], limits: dict[str, str], cpu: float, memory: str
) -> dict[str, Any]:
    return {
        "name": name,
        "image": f"example.com/{name}:1",
        "requests": requests,
        "limits": limits,
        "usage": {
            "cpu": {"base": cpu, "daily": 0.1, "noise": 0.05},
            "memory": {"base": memory, "daily": 0.0, "noise": 0.02},
        },
    }


LIMIT_RANGE = {
    "apiVersion": "v1",
    "kind": "LimitRange",
    "metadata": {"name": "strict", "namespace": NS},
    "spec": {
        "limits": [
            {
                "type": "Container",
                "min": {"cpu": "50m", "memory": "64Mi"},
                "max": {"cpu": "2", "memory": "2Gi"},
                "maxLimitRequestRatio": {"cpu": "2", "memory": "1.5"},
            },
            {
                "type": "Pod",
                "min": {"cpu": "600m", "memory": "512Mi"},
                "max": {"cpu": "3", "memory": "3Gi"},
            },
        ]
    },
}

SCENARIO: dict[str, Any] = {
    "seed": 15,
    "historyDays": 8,
    "nodes": [{"namePrefix": "node", "count": 3, "cpu": "8", "memory": "32Gi"}],
    "namespaces": [NS],
    "objects": [LIMIT_RANGE],
    "workloads": [
        {
            "namespace": NS,
            "name": "api",
            "replicas": REPLICAS,
            "containers": [
                _container(
                    "app",
                    {"cpu": "1", "memory": "1Gi"},
                    {"cpu": "1500m", "memory": "1536Mi"},
                    0.05,
                    "300Mi",
                ),
                _container(
                    "proxy",
                    {"cpu": "100m", "memory": "128Mi"},
                    {"cpu": "200m", "memory": "192Mi"},
                    0.18,
                    "170Mi",
                ),
            ],
        },
        {
            "namespace": NS,
            "name": "worker",
            "replicas": REPLICAS,
            "containers": [
                _container(
                    "main",
                    {"cpu": "400m", "memory": "384Mi"},
                    {"cpu": "800m", "memory": "512Mi"},
                    0.03,
                    "450Mi",
                ),
                _container(
                    "helper",
                    {"cpu": "200m", "memory": "128Mi"},
                    {"cpu": "400m", "memory": "192Mi"},
                    0.02,
                    "40Mi",
                ),
            ],
        },
    ],
}

TOLERANCE = 0.5  # RIGHTSIZER_UPDATER_EVICTION_TOLERANCE's default
FLOOR = REPLICAS - int(REPLICAS * TOLERANCE)
POLICIES = {
    "api": ("Recreate", [{"containerName": "app", "controlledValues": "RequestsOnly"}]),
    "worker": (
        "InPlaceOrRecreate",
        [{"containerName": "helper", "controlledValues": "RequestsOnly"}],
    ),
}


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return SCENARIO


@pytest.fixture(scope="module")
def sim_namespaces() -> tuple[str, ...]:
    return ("rightsizer",)


@pytest.fixture
def app(sim: Simulator, tmp_path: Path) -> Iterator[AppProcess]:
    with updating_from_history(
        sim,
        tmp_path,
        lambda a: len([k for k in recommendations(a) if k[0] == NS]) == 4,
        "recommendations for the four containers",
    ) as a:
        yield a


def _list(sim: Simulator, what: str) -> list[dict[str, Any]]:
    api = sim.api_client()
    core = client.CoreV1Api(api)
    resp = getattr(core, f"list_namespaced_{what}")(NS, _preload_content=False)
    api.close()
    return list(json.loads(resp.data)["items"])


def _ready(pod: dict[str, Any]) -> bool:
    status = pod.get("status") or {}
    return (
        status.get("phase") == "Running"
        and not pod["metadata"].get("deletionTimestamp")
        and any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in status.get("conditions") or []
        )
    )


def _ready_by_deployment(pods: list[dict[str, Any]]) -> dict[str, int]:
    counts = dict.fromkeys(POLICIES, 0)
    for p in pods:
        name = p["metadata"].get("labels", {}).get("app")
        if name in counts and _ready(p):
            counts[name] += 1
    return counts


def _surge(sim: Simulator, deployment: str) -> str:
    """Start a rolling update of the Deployment held after its first surge pod; the name of the
    new ReplicaSet."""
    api = sim.api_client()
    apps = client.AppsV1Api(api)
    apps.patch_namespaced_deployment(
        deployment,
        NS,
        {
            "spec": {
                "minReadySeconds": 3600,
                "strategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                "template": {"metadata": {"annotations": {"rollout": "2"}}},
            }
        },
    )
    sim.settle()
    new = [
        rs.metadata.name
        for rs in apps.list_namespaced_replica_set(NS, label_selector=f"app={deployment}").items
        if rs.metadata.annotations.get("deployment.kubernetes.io/revision") == "2"
    ]
    api.close()
    assert len(new) == 1, new
    return new[0]


def _db(app: AppProcess) -> sa.Engine:
    return sa.create_engine(f"sqlite:///{app.log_path.parent / 'rightsizer.db'}")


def _add_policy(app: AppProcess, target: str) -> None:
    mode, containers = POLICIES[target]
    engine = _db(app)
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO policies (name, namespace, target_kind, target_name, update_mode, "
                "min_replicas, container_policies, version, created_at, updated_at) VALUES "
                "(:n, :ns, 'Deployment', :n, :m, 2, :c, 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            ),
            {"n": target, "ns": NS, "m": mode, "c": json.dumps(containers)},
        )
    engine.dispose()


def _audit(app: AppProcess) -> list[tuple[str, str, str]]:
    engine = _db(app)
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text("SELECT action, object_ref, message FROM audit_events ORDER BY id")
        ).all()
    engine.dispose()
    return [(r[0], r[1], r[2]) for r in rows]


def _disruptions_per_run(app: AppProcess) -> list[dict[str, int]]:
    """From the log: per updater run, how many pods of each Deployment it evicted or resized."""
    runs: list[dict[str, int]] = [{}]
    for line in app.log().splitlines():
        if "app.jobs.runner: updater run:" in line:
            runs.append({})
        m = re.search(rf"app\.jobs\.updater: (evict|resize) {NS}/(\w+)-", line)
        if m:
            runs[-1][m.group(2)] = runs[-1].get(m.group(2), 0) + 1
    return [r for r in runs if r]


def _requests_over_limits(pod: dict[str, Any]) -> list[str]:
    bad = []
    for c in pod["spec"]["containers"]:
        res = c.get("resources") or {}
        for r, v in (res.get("requests") or {}).items():
            lim = (res.get("limits") or {}).get(r)
            if lim is not None and quantity_amount(r, v) > quantity_amount(r, lim):
                bad.append(f"{pod['metadata']['name']}/{c['name']} {r}: {v} > {lim}")
    return bad


def test_a_rollout_under_a_strict_limit_range_stays_within_budget_and_admitted(
    sim: Simulator, app: AppProcess
) -> None:
    surge = {deployment: _surge(sim, deployment) for deployment in POLICIES}
    wait_for(
        lambda: _ready_by_deployment(_list(sim, "pod")) == dict.fromkeys(POLICIES, REPLICAS + 1),
        30,
        "4 pods and a surge pod of each Deployment, ready",
    )
    before = {p["metadata"]["uid"]: p for p in _list(sim, "pod")}
    workers_before = {
        u for u, p in before.items() if p["metadata"]["labels"].get("app") == "worker"
    }
    for deployment in POLICIES:
        _add_policy(app, deployment)

    lowest = dict.fromkeys(POLICIES, REPLICAS + 1)
    resized: set[str] = set()

    def converged() -> bool:
        pods = _list(sim, "pod")
        for name, n in _ready_by_deployment(pods).items():
            lowest[name] = min(lowest[name], n)
        # Fail at once, with kube-apiserver's words, on a refused replacement or a dip.
        refused = [e for e in _list(sim, "event") if e.get("reason") == "FailedCreate"]
        assert not refused, [e["message"] for e in refused]
        assert all(n >= FLOOR for n in lowest.values()), lowest
        api_done = [
            p
            for p in pods
            if p["metadata"]["labels"].get("app") == "api"
            and "rightsizer.io/updates" in p["metadata"].get("annotations", {})
            and _ready(p)
        ]
        resized.update(r[1] for r in _audit(app) if r[0] == "resize")
        workers = {
            f"{NS}/{p['metadata']['name']}"
            for p in pods
            if p["metadata"]["labels"].get("app") == "worker"
        }
        return len(api_done) == REPLICAS + 1 and len(workers) == REPLICAS + 1 and workers <= resized

    wait_for(converged, 60, "every api pod recreated and every worker pod resized", interval=0.1)
    # An eviction's audit row is written when its answer is handed back to the updater's thread
    # (app/jobs/evictions.py: in order, at the latest when the run ends), so the last replacement
    # pod can be seen before the row of its eviction.
    wait_for(
        lambda: sum(1 for r in _audit(app) if r[0] == "evict") >= REPLICAS + 1,
        30,
        "an audit row for every eviction",
    )

    # No run disrupted more than int(replicas x tolerance) pods of one Deployment, its surge
    # ReplicaSet included: in the simulator a replacement is Running and Ready within
    # milliseconds, so the polling above rarely sees a dip; the updater's log says what it did.
    per_run = _disruptions_per_run(app)
    assert per_run and all(n <= REPLICAS - FLOOR for r in per_run for n in r.values()), per_run
    # Every replacement was admitted: LimitRanger refused no pod creation.
    assert not [e for e in _list(sim, "event") if e.get("reason") == "FailedCreate"]
    # Every pod as stored holds what LimitRanger (and validation) accept.
    stored_ranges = _list(sim, "limit_range")
    pods = _list(sim, "pod")
    assert len(pods) == 2 * (REPLICAS + 1)
    for p in pods:
        limitranger.validate(p, stored_ranges)  # raises the 403 kube-apiserver would answer
        assert not _requests_over_limits(p)
    # The workers were resized in place: the same pods, and no eviction of theirs.
    actions = _audit(app)
    assert {p["metadata"]["uid"] for p in pods if p["metadata"]["labels"]["app"] == "worker"} == (
        workers_before
    )
    evicted = [r[1] for r in actions if r[0] == "evict"]
    assert len(evicted) >= REPLICAS + 1
    assert all(ref.startswith(f"{NS}/api-") for ref in evicted), evicted
    assert f"{NS}/{surge['api']}-" in " ".join(evicted)  # the rollout's other ReplicaSet too
    assert any(ref.startswith(f"{NS}/{surge['worker']}-") for ref in resized)
    # The api pods really moved: app's cpu request down to limit / ratio, proxy's up.
    for p in pods:
        if p["metadata"]["labels"]["app"] != "api":
            continue
        assert p["metadata"]["uid"] not in before
        app_c, proxy = p["spec"]["containers"]
        assert quantity_amount("cpu", app_c["resources"]["requests"]["cpu"]) == 750
        assert quantity_amount("cpu", proxy["resources"]["requests"]["cpu"]) > 100
