"""How and when the updater acts under VPA 1.7's update fields (docs/policies.md, "When the
updater acts" and "CPU startup boost"), one run at a time against the simulated cluster, through
the official client: evictionRequirements, updateMode InPlace, inPlaceSkipDisruptionBudget and
the removal of a CPU startup boost."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask
from kubernetes import client

from app.core.sizing.boost import BOOST_ANNOTATION
from app.kube.cluster import ClusterView
from app.simulator.simulator import Simulator
from tests.support.updater_runs import (
    LEADER,
    NS,
    Clock,
    answers_lost,
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

SCENARIO = {
    "nodes": [{"namePrefix": "node", "count": 3, "cpu": "8", "memory": "32Gi"}],
    "namespaces": [{"name": NS}],
    "workloads": [
        deployment("grow", 3, cpu="100m"),
        deployment("shrink", 3, cpu="1"),
        deployment("solo", 1, cpu="1"),
        deployment("db", 2, cpu="500m", memory="512Mi", guaranteed=True),
        deployment("web", 2, cpu="500m"),
    ],
}
UPSCALE_ONLY = [{"resources": ["cpu", "memory"], "changeRequirement": "TargetHigherThanRequests"}]


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return SCENARIO


def pods_of(api: Any, name: str) -> list[dict[str, Any]]:
    return [p for p in server_pods(api) if p["metadata"]["name"].startswith(name + "-")]


def recommend_again(app: Flask, name: str, cpu: int, memory: int = 1024**3) -> None:
    """Replaces the stored recommendation of Deployment `name`."""
    from app.store.extensions import db
    from app.store.models import Recommendation

    with app.app_context():
        db.session.query(Recommendation).filter_by(name=name).delete()
        db.session.commit()
    recommend(app, name, cpu=cpu, memory=memory)


def cpu_requests(api: Any, name: str) -> list[str]:
    return sorted(
        p["spec"]["containers"][0]["resources"]["requests"]["cpu"] for p in pods_of(api, name)
    )


# --- evictionRequirements ----------------------------------------------------------------------


def test_an_upscale_only_policy_leaves_a_downscale_alone(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    policy(app, "grow", "Recreate", evictionRequirements=UPSCALE_ONLY)
    policy(app, "shrink", "Recreate", evictionRequirements=UPSCALE_ONLY)
    recommend(app, "grow", cpu=500)  # requests 100m: a scale-up
    recommend(app, "shrink", cpu=200)  # requests 1000m: a scale-down
    grow, shrink = uids(api, "grow"), uids(api, "shrink")
    job = make_job(app, cluster, api, Clock(sim.now()))
    for _ in range(3):
        job.run_once(LEADER)
        settled(sim, api, cluster)
    assert uids(api, "shrink") == shrink  # never evicted: its target is below its requests
    assert len(grow - uids(api, "grow")) >= 1
    refs = {r.object_ref.split("/")[1].rsplit("-", 2)[0] for r in audit(app)}
    assert refs == {"grow"}


def test_a_requirement_on_memory_alone_ignores_a_cpu_change(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    memory_down = [{"resources": ["memory"], "changeRequirement": "TargetLowerThanRequests"}]
    policy(app, "shrink", "InPlaceOrRecreate", evictionRequirements=memory_down)
    recommend(app, "shrink", cpu=200)  # cpu down, memory (1Gi) as it is
    job = make_job(app, cluster, api, Clock(sim.now()))
    job.run_once(LEADER)
    assert cpu_requests(api, "shrink") == ["1", "1", "1"] and audit(app) == []
    recommend_again(app, "shrink", cpu=200, memory=512 * 1024**2)  # now memory goes down too
    job.run_once(LEADER)
    assert cpu_requests(api, "shrink") == ["1", "1", "200m"]


# --- updateMode InPlace and inPlaceSkipDisruptionBudget ------------------------------------------


def test_in_place_resizes_a_single_replica_deployment_without_any_eviction(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    policy(app, "solo", "InPlace", inPlaceSkipDisruptionBudget=True)
    recommend(app, "solo", cpu=400)
    before = uids(api, "solo")
    job = make_job(app, cluster, api, Clock(sim.now()))
    assert "1 pods updated" in job.run_once(LEADER)
    settled(sim, api, cluster)
    assert uids(api, "solo") == before  # the same pod: nothing evicted or recreated
    assert cpu_requests(api, "solo") == ["400m"]
    assert [r.action for r in audit(app)] == ["resize"]
    assert [e.reason for e in events(api)] == ["RightsizerResized"]


def test_without_skipping_the_budget_a_single_replica_stays_as_it_is(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    policy(app, "solo", "InPlace")  # minReplicas 2 (RIGHTSIZER_UPDATER_MIN_REPLICAS)
    recommend(app, "solo", cpu=400)
    job = make_job(app, cluster, api, Clock(sim.now()))
    job.run_once(LEADER)
    assert cpu_requests(api, "solo") == ["1"] and audit(app) == []
    [(w, notes)] = job.notes.items()
    assert w.name == "solo" and notes["HeldBackByBudget"][0] == "MinReplicas"


def test_the_global_setting_skips_the_budget_and_a_policy_can_refuse_it(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    from app.core.sizing.priority import UpdaterSettings

    skip = UpdaterSettings(in_place_skip_disruption_budget=True)
    policy(app, "solo", "InPlaceOrRecreate", inPlaceSkipDisruptionBudget=False)
    recommend(app, "solo", cpu=400)
    job = make_job(app, cluster, api, Clock(sim.now()), settings=skip)
    job.run_once(LEADER)
    assert cpu_requests(api, "solo") == ["1"]  # the policy says no
    with app.app_context():
        from app.store.extensions import db
        from app.store.models import Policy

        row = db.session.query(Policy).filter_by(name="solo").one()
        row.update_options = None
        db.session.commit()
    job.run_once(LEADER)
    assert cpu_requests(api, "solo") == ["400m"]


def test_in_place_never_evicts_a_pod_it_cannot_resize_and_waits_for_a_lower_target(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    # Guaranteed pods; RequestsOnly lowers the request under the limit, which would make them
    # Burstable: Kubernetes refuses that resize. InPlaceOrRecreate would evict; InPlace may not.
    only = [{"containerName": "*", "controlledValues": "RequestsOnly"}]
    policy(app, "db", "InPlace", containers=only)
    recommend(app, "db", cpu=100, memory=512 * 1024**2)
    before = uids(api, "db")
    job = make_job(app, cluster, api, Clock(sim.now()))
    job.run_once(LEADER)
    assert uids(api, "db") == before and audit(app) == []
    warned = [e for e in events(api) if e.reason == "RightsizerResizeInfeasible"]
    assert len(warned) == 2 and all(e.type == "Warning" for e in warned)
    assert "QoS class Guaranteed -> Burstable" in warned[0].message
    [notes] = job.notes.values()
    assert notes["ResizeInfeasible"][0] == "Infeasible"
    job.run_once(LEADER)  # the same resize is not asked for again
    assert len([e for e in events(api) if e.reason == "RightsizerResizeInfeasible"]) == 2
    recommend_again(app, "db", cpu=50, memory=512 * 1024**2)  # less than the attempt: tried again
    job.run_once(LEADER)
    assert len([e for e in events(api) if e.reason == "RightsizerResizeInfeasible"]) == 4
    assert uids(api, "db") == before


# --- CPU startup boost ---------------------------------------------------------------------------


def boost(api: Any, pod: dict[str, Any], cpu: str, unboosted: str) -> None:
    """What the webhook leaves on a pod it boosted: the boosted request, and the annotation."""
    name = pod["metadata"]["name"]
    core = client.CoreV1Api(api)
    core.patch_namespaced_pod_resize(
        name,
        NS,
        {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": cpu}}}]}},
    )
    value = json.dumps({"app": {"requests": {"cpu": unboosted}}})
    core.patch_namespaced_pod(name, NS, {"metadata": {"annotations": {BOOST_ANNOTATION: value}}})


def ready_since(pod: dict[str, Any]) -> float:
    from app.core.pods import PodView

    ready = PodView.parse(pod).condition("Ready")
    assert ready is not None and ready.since is not None
    return ready.since


@pytest.mark.parametrize("mode", ["Off", "Recreate"])
def test_a_startup_boost_is_removed_in_place_once_ready_for_its_duration(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView, mode: str
) -> None:
    pod = pods_of(api, "web")[0]
    boost(api, pod, "1500m", "500m")
    settled(sim, api, cluster)
    since = ready_since(pods_of(api, "web")[0])
    startup = {"cpu": {"type": "Factor", "factor": 3, "durationSeconds": 60}}
    policy(app, "web", mode, startupBoost=startup)
    recommend(app, "web", cpu=500)  # Recreate would evict a 1500m pod; not while boosted
    before = uids(api, "web")
    clock = Clock(since + 30)
    job = make_job(app, cluster, api, clock)
    job.run_once(LEADER)
    assert cpu_requests(api, "web") == ["1500m", "500m"] and audit(app) == []
    clock.t = since + 61
    summary = job.run_once(LEADER)
    assert "1 startup boosts removed" in summary
    settled(sim, api, cluster)
    assert uids(api, "web") == before  # resized in place, never evicted
    assert cpu_requests(api, "web") == ["500m", "500m"]
    assert all(
        BOOST_ANNOTATION not in (p["metadata"].get("annotations") or {})
        for p in pods_of(api, "web")
    )
    [row] = audit(app)
    assert (row.action, row.details["boost"]) == ("resize", "removed")
    assert row.details["before"]["app"]["requests"]["cpu"] == 1500
    assert row.details["after"]["app"]["requests"]["cpu"] == 500
    assert [e.reason for e in events(api)] == ["RightsizerStartupBoostRemoved"]
    job.run_once(LEADER)  # nothing left to do
    assert len(audit(app)) == 1


def test_a_boost_removal_whose_answer_is_lost_counts_against_the_budget(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both pods of `web` boosted and due; the API server resizes each but its answer never
    comes back (the connection drops). The first removal may have been done, so it takes the
    budget (one pod of two per run) and the other waits. Before, the lost answer gave nothing
    back to count and both pods were resized in one run."""
    for pod in pods_of(api, "web"):
        boost(api, pod, "1500m", "500m")
    settled(sim, api, cluster)
    since = max(ready_since(p) for p in pods_of(api, "web"))
    startup = {"cpu": {"type": "Factor", "factor": 3, "durationSeconds": 60}}
    policy(app, "web", "Off", startupBoost=startup)
    answers_lost(monkeypatch, "PATCH", "/resize")
    job = make_job(app, cluster, api, Clock(since + 61))
    summary = job.run_once(LEADER)
    settled(sim, api, cluster)
    assert sorted(cpu_requests(api, "web")) == ["1500m", "500m"]
    assert "1 answers lost" in summary and "startup boosts removed" not in summary
    [row] = audit(app)
    assert row.action == "resize-unanswered"
    assert row.message.startswith("startup boost removal: ")
    assert [(e.reason, e.type) for e in events(api)] == [("RightsizerAnswerLost", "Warning")]


# --- evictAfterOOMSeconds ------------------------------------------------------------------------

LEAK = {
    "nodes": [{"namePrefix": "node", "count": 2, "cpu": "8", "memory": "32Gi"}],
    "namespaces": [{"name": NS}],
    "workloads": [
        {
            "kind": "Deployment",
            "namespace": NS,
            "name": "leak",
            "replicas": 2,
            "containers": [
                {
                    "name": "app",
                    "image": "example.com/app:1",
                    "requests": {"cpu": "1", "memory": "1Gi"},
                    "limits": {"memory": "1Gi"},
                    # 900Mi, then 60Gi a day more: over the 1Gi limit after about 3 minutes
                    "usage": {
                        "cpu": {"base": 0.1},
                        "memory": {"base": "900Mi", "growthPerDay": "60Gi"},
                    },
                }
            ],
        }
    ],
}


def oom_killed_after(api: Any) -> list[float]:
    """How long each leak pod's last run lasted before its OOM kill, in seconds."""
    from app.core.pods import PodView

    out = []
    for p in pods_of(api, "leak"):
        for s in PodView.parse(p).statuses:
            t = s.last_termination
            if t is not None and t.reason == "OOMKilled" and t.started and t.finished:
                out.append(t.finished - t.started)
    return out


@pytest.mark.parametrize(("oom_seconds", "evicted"), [(None, 1), (60, 0)])
def test_evict_after_oom_seconds_decides_what_a_quick_oom_is(
    app: Flask, oom_seconds: int | None, evicted: int
) -> None:
    from app.simulator.testing import running_simulator

    with running_simulator(LEAK) as sim:
        a = sim.api_client()
        view = ClusterView(sim.api_client()).start()
        try:
            assert view.wait_synced(30)
            sim.advance(400)
            settled(sim, a, view)
            runs = oom_killed_after(a)
            assert runs and all(60 < r < 600 for r in runs)  # quick for the global 600 s
            options: dict[str, Any] = {}
            if oom_seconds is not None:
                options["evictAfterOOMSeconds"] = oom_seconds
            policy(app, "leak", "Recreate", **options)
            # within its range and young: only a quick OOM makes the pod qualify
            recommend(app, "leak", cpu=1100, memory=1024**3, spread=0.5)
            before = uids(a, "leak")
            make_job(app, view, a, Clock(sim.now())).run_once(LEADER)
            assert len(before - uids(a, "leak")) == evicted
            assert [r.action for r in audit(app)] == ["evict"] * evicted
        finally:
            view.stop()
            a.close()
