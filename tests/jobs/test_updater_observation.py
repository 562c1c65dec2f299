"""The observation window (docs/policies.md, "Observation window"; kubernetes/autoscaler #9362):
the updater holds back a workload whose new pods are OOM-killed after each of its evictions,
instead of evicting them again and again, against the simulated cluster through the official
client. No webhook runs here, so an evicted pod comes back as it was and leaks into its memory
limit again: without the window, every run would evict it once more."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask import Flask

from app.kube.cluster import ClusterView
from app.simulator.testing import running_simulator
from app.store.conditions import workload_conditions
from app.store.extensions import db
from app.store.models import Policy
from tests.support.updater_runs import (
    LEADER,
    NS,
    Clock,
    audit,
    events,
    make_job,
    policy,
    recommend,
    settled,
    uids,
)

GI = 1024**3
LEAK: dict[str, Any] = {
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
                    # 900Mi, then 60Gi a day more: over the 1Gi limit about 3 minutes after start
                    "usage": {
                        "cpu": {"base": 0.1},
                        "memory": {"base": "900Mi", "growthPerDay": "60Gi"},
                    },
                }
            ],
        }
    ],
}


def conditions(app: Flask) -> dict[str, tuple[str, str]]:
    """The stored conditions of Deployment leak: type -> (reason, message)."""
    with app.app_context():
        found = workload_conditions(db.session, NS, "Deployment", "leak")
        return {r.type: (r.reason, r.message) for rows in found.values() for r in rows}


def workload_events(api: Any) -> list[Any]:
    return [e for e in events(api) if e.involved_object.kind == "Deployment"]


def evictions(app: Flask) -> int:
    return sum(r.action == "evict" for r in audit(app))


def test_new_pods_oom_killed_after_each_eviction_are_held_back_not_evicted_again(
    app: Flask,
) -> None:
    with running_simulator(LEAK) as sim:
        api = sim.api_client()
        view = ClusterView(sim.api_client()).start()
        try:
            assert view.wait_synced(30)
            sim.advance(60)  # the simulated clock ahead of the policy's creation (wall clock)
            policy(app, "leak", "Recreate")
            recommend(app, "leak", cpu=200, memory=GI)  # 1000m requested: outside the range
            clock = Clock(sim.now())
            job = make_job(app, view, api, clock)
            before = uids(api, "leak")
            job.run_once(LEADER)
            assert len(before - uids(api, "leak")) == 1 and evictions(app) == 1
            for _ in range(4):  # the new pod leaks into its limit: OOM-killed, run after run
                sim.advance(400)
                settled(sim, api, view)
                clock.t = sim.now()
                summary = job.run_once(LEADER)
                assert "1 workloads held back by their observation window" in summary, summary
            assert evictions(app) == 1  # not evicted again and again
            reason, message = conditions(app)["HeldBackByObservationWindow"]
            assert reason == "OOMKilledAfterChange"
            assert "OOM-killed after rightsizer's last change" in message
            assert "resumes at" in message and "or when its policy changes" in message
            # one Warning Event on the Deployment, when the hold began
            [event] = workload_events(api)
            assert (event.type, event.reason) == ("Warning", "RightsizerHeldBack")
            assert event.involved_object.name == "leak" and "OOM-killed" in event.message

            # a restarted updater remembers the eviction from the audit trail
            restarted = make_job(app, view, api, clock)
            assert "held back by their observation window" in restarted.run_once(LEADER)
            assert evictions(app) == 1

            # after the window (an hour from the eviction) the workload is updated again
            sim.advance(3600)
            settled(sim, api, view)
            clock.t = sim.now()
            restarted.run_once(LEADER)
            assert evictions(app) == 2
            assert "HeldBackByObservationWindow" not in conditions(app)
        finally:
            view.stop()
            api.close()


def test_a_policy_change_resumes_a_held_back_workload(app: Flask) -> None:
    with running_simulator(LEAK) as sim:
        api = sim.api_client()
        view = ClusterView(sim.api_client()).start()
        try:
            assert view.wait_synced(30)
            sim.advance(60)
            policy(app, "leak", "Recreate")
            recommend(app, "leak", cpu=200, memory=GI)
            clock = Clock(sim.now())
            job = make_job(app, view, api, clock)
            job.run_once(LEADER)
            sim.advance(400)
            settled(sim, api, view)
            clock.t = sim.now()
            assert "held back by their observation window" in job.run_once(LEADER)
            assert evictions(app) == 1
            with app.app_context():  # edited now (on the simulated clock)
                row = db.session.query(Policy).filter_by(name="leak").one()
                row.update_options = {"observationWindow": {"windowSeconds": 600}}
                row.updated_at = datetime.fromtimestamp(sim.now(), UTC)
                db.session.commit()
            sim.advance(30)  # the killed container restarted: its pod is ready again
            settled(sim, api, view)
            clock.t = sim.now()
            summary = job.run_once(LEADER)
            assert "observation window" not in summary, summary
            assert "HeldBackByObservationWindow" not in conditions(app)
            assert evictions(app) == 2
        finally:
            view.stop()
            api.close()


def test_too_many_replacements_in_the_window_hold_the_workload(app: Flask) -> None:
    """Pods that come back unchanged (no webhook) and never crash: each run replaces one, until
    more than maxReplacementsPerReplica x replicas were replaced in the window."""
    scenario = {**LEAK, "workloads": [{**LEAK["workloads"][0]}]}
    scenario["workloads"][0]["containers"] = [
        {**LEAK["workloads"][0]["containers"][0], "limits": {}}
    ]
    with running_simulator(scenario) as sim:
        api = sim.api_client()
        view = ClusterView(sim.api_client()).start()
        try:
            assert view.wait_synced(30)
            sim.advance(60)
            window = {"windowSeconds": 3600, "maxReplacementsPerReplica": 1}
            policy(app, "leak", "Recreate", observationWindow=window)
            recommend(app, "leak", cpu=200, memory=GI)
            clock = Clock(sim.now())
            job = make_job(app, view, api, clock)
            for _ in range(5):
                job.run_once(LEADER)
                sim.advance(120)
                settled(sim, api, view)
                clock.t = sim.now()
            # 2 replicas, 1 each: a third replacement in the hour, then held back
            assert evictions(app) == 3
            reason, message = conditions(app)["HeldBackByObservationWindow"]
            assert reason == "TooManyReplacements"
            assert "pods replaced 3 times in the last 3600s, more than 1 per replica" in message
        finally:
            view.stop()
            api.close()


def test_min_history_seconds_of_the_policy_overrides_the_updaters(app: Flask) -> None:
    """The recommendation has 2 hours of history: enough for the updater's 1 hour, not for a
    policy asking for 3 hours; then enough for one asking for 1 minute only."""
    with running_simulator(LEAK) as sim:
        api = sim.api_client()
        view = ClusterView(sim.api_client()).start()
        try:
            assert view.wait_synced(30)
            policy(app, "leak", "Recreate", observationWindow={"minHistorySeconds": 3 * 3600})
            recommend(app, "leak", cpu=200, memory=GI, history=2 * 3600)
            clock = Clock(sim.now())
            make_job(app, view, api, clock).run_once(LEADER)
            assert evictions(app) == 0
            with app.app_context():
                row = db.session.query(Policy).filter_by(name="leak").one()
                row.update_options = {"observationWindow": {"minHistorySeconds": 60}}
                db.session.commit()
            make_job(app, view, api, clock, min_history_seconds=3 * 3600).run_once(LEADER)
            assert evictions(app) == 1
        finally:
            view.stop()
            api.close()
