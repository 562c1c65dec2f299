"""The recommender job's own rules, one run at a time against the simulated cluster.

Each test builds the job as `rightsizer serve` does (ClusterView over the official client) and
calls run_once directly, with the simulator's frozen clock moved by the test.
"""

from __future__ import annotations

import gc
from datetime import UTC, datetime
from typing import Any

import pytest
from flask import Flask
from kubernetes import client
from sqlalchemy import func, select

from app.core.conditions import RECOMMENDATION_PROVIDED as PROVIDED
from app.core.conditions import RECOMMENDER_TYPES, Condition
from app.core.recommend.podmetrics import PodMetrics
from app.core.workload_key import WorkloadKey
from app.kube.cluster import ClusterView
from app.simulator.simulator import Simulator
from app.store.conditions import save_conditions, workload_conditions
from app.store.extensions import db
from app.store.models import Checkpoint, Recommendation
from app.store.recommendations import stored_workloads
from tests.support.json_bodies import plain
from tests.support.processes import wait_for
from tests.support.recommender_runs import deployment, make_job, step
from tests.support.window_reads import count_window_reads

SCENARIO = {
    "nodes": [{"namePrefix": "node", "count": 3, "cpu": "8", "memory": "32Gi"}],
    "namespaces": [{"name": "shop"}, {"name": "private"}],
    "workloads": [
        deployment("shop", "web"),
        deployment("shop", "api", cpu=0.4),
        deployment("private", "secret-sauce"),
    ],
}

WEB, API = WorkloadKey("shop", "Deployment", "web"), WorkloadKey("shop", "Deployment", "api")
PRIVATE = WorkloadKey("private", "Deployment", "secret-sauce")


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return SCENARIO


def samples(job: Any, w: WorkloadKey, container: str) -> int:
    """The CPU samples of the workload container's row in the job's model."""
    return int(job.model.count[job.model.rows[w][container]])


def stored(app: Flask) -> set[WorkloadKey]:
    with app.app_context():
        rows = db.session.execute(
            select(Recommendation.namespace, Recommendation.kind, Recommendation.name)
        )
        return {WorkloadKey(*r) for r in rows}


def test_every_workload_outside_the_excluded_namespaces_gets_a_recommendation(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    job = make_job(app, cluster, sim, excluded_namespaces=frozenset({"private"}))
    for _ in range(3):
        step(sim, job)
    assert stored(app) == {WEB, API}
    assert PRIVATE not in job.model.rows


def test_a_workload_an_hpa_scales_on_cpu_is_marked_in_conflict_for_cpu_only(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    client.AutoscalingV2Api(sim.api_client()).create_namespaced_horizontal_pod_autoscaler(
        "shop",
        plain(
            {
                "apiVersion": "autoscaling/v2",
                "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "web"},
                "spec": {
                    "scaleTargetRef": {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": "web",
                    },
                    "minReplicas": 1,
                    "maxReplicas": 5,
                    "metrics": [
                        {
                            "type": "Resource",
                            "resource": {
                                "name": "cpu",
                                "target": {"type": "Utilization", "averageUtilization": 70},
                            },
                        }
                    ],
                },
            }
        ),
    )
    job = make_job(app, cluster, sim)
    wait_for(lambda: bool(cluster.hpas.items()), 10, "the HPA in the cache", 0.05)
    step(sim, job)
    with app.app_context():
        conflicts = {r.name: r.conflicts for r in db.session.scalars(select(Recommendation))}
    assert (
        set(conflicts["web"]) == {"cpu"}
        and "HorizontalPodAutoscaler web" in conflicts["web"]["cpu"]
    )
    assert not conflicts["api"]


def test_rows_of_a_deleted_workload_go_after_the_grace_period_and_not_before(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    job = make_job(app, cluster, sim, gc_grace_seconds=300)
    step(sim, job)
    assert stored(app) == {WEB, API, PRIVATE}
    client.AppsV1Api(sim.api_client()).delete_namespaced_deployment("api", "shop")
    wait_for(lambda: not cluster.workload_exists(API), 10, "the deletion in the cache", 0.05)
    assert "deleted 0 gone" in step(sim, job, 120)  # gone for 0s: first noticed
    assert API in stored(app)
    assert "deleted 0 gone" in step(sim, job, 120)  # gone for 120s < 300s
    assert "deleted 1 gone" in step(sim, job, 240)  # gone for 360s
    assert stored(app) == {WEB, PRIVATE}
    with app.app_context():
        left = db.session.scalar(
            select(func.count()).select_from(Checkpoint).where(Checkpoint.name == "api")
        )
    assert left == 0 and API not in job.model.rows
    # the newest history points the job keeps (RecommenderJob.history_points) forget it too, so
    # a workload of that name again is looked up and gets its first point in its first run
    assert {k[:3] for k in job.history_points} == {
        (w.namespace, w.kind, w.name) for w in (WEB, PRIVATE)
    }


def test_the_stored_workloads_are_read_once_a_term_and_kept_by_the_saves(
    app: Flask, cluster: ClusterView, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The garbage collection reads which workloads have rows at the term's first run only;
    later runs know them from their own saves and deletions (only the leader writes rows)."""
    reads: list[int] = []

    def counted(session: Any) -> set[WorkloadKey]:
        reads.append(1)
        return stored_workloads(session)

    job = make_job(app, cluster, sim)
    monkeypatch.setattr("app.jobs.recommender.stored_workloads", counted)
    for _ in range(3):
        step(sim, job)
    assert reads == [1]
    assert job.stored == stored(app) == {WEB, API, PRIVATE}
    job.forget()  # a new term reads them again
    step(sim, job)
    assert reads == [1, 1]


def test_a_workload_whose_save_failed_is_not_collected_as_if_it_had_rows(
    app: Flask, cluster: ClusterView, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A workload whose every batch failed has no rows: when it is gone, the collection has
    nothing of it to delete and does not count or log a deletion."""
    import app.store.recommendations as recommendations

    original = recommendations.save_batch

    def failing_for_api(session: Any, results: Any, *args: Any) -> None:
        if any(r.workload == API for r in results):
            raise RuntimeError("the database refused the batch")
        original(session, results, *args)

    monkeypatch.setattr(recommendations, "save_batch", failing_for_api)
    job = make_job(app, cluster, sim, gc_grace_seconds=60, checkpoint_batch_size=1)
    assert "failed 1" in step(sim, job)
    assert stored(app) == {WEB, PRIVATE}
    client.AppsV1Api(sim.api_client()).delete_namespaced_deployment("api", "shop")
    wait_for(lambda: not cluster.workload_exists(API), 10, "the deletion in the cache", 0.05)
    step(sim, job, 120)  # first noticed gone
    assert "deleted 0 gone" in step(sim, job, 120)  # gone for 120 s > 60 s: nothing of it saved
    assert API not in (job.stored or set())


def test_aggregates_without_a_sample_for_the_idle_period_are_dropped(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    job = make_job(app, cluster, sim, idle_after_seconds=3600, gc_grace_seconds=10**9)
    step(sim, job)
    client.AppsV1Api(sim.api_client()).patch_namespaced_deployment_scale(
        "api", "shop", {"spec": {"replicas": 0}}
    )
    assert "dropped 0 idle" in step(sim, job, 1800)
    assert API in job.model.rows  # no sample for 30 min: still kept
    assert "dropped 1 idle" in step(sim, job, 1900)  # no sample for over an hour
    assert API not in job.model.rows and WEB in job.model.rows


def test_a_new_leadership_term_resumes_from_the_checkpoints_not_the_stale_model(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    mine = make_job(app, cluster, sim)
    step(sim, mine)
    # Another leader runs meanwhile and writes newer checkpoints.
    other = make_job(app, cluster, sim)
    for _ in range(3):
        step(sim, other)
    newer = samples(other, WEB, "app")
    assert newer > samples(mine, WEB, "app")
    mine.forget()  # what startup does when this process wins the lease again
    step(sim, mine)
    assert samples(mine, WEB, "app") == newer + 2  # two pods, one step


def test_a_new_term_rewrites_the_conditions_another_leader_changed(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    """The condition rows a term's saves know (KnownConditions) are read again in a new term:
    another leader's rows may differ from them in content alone (the same count)."""
    mine = make_job(app, cluster, sim)
    step(sim, mine)
    with app.app_context():
        # the other leader's rows: the same ones, WEB's RecommendationProvided message changed
        theirs = {
            w: [
                Condition(c.type, c.status, c.reason, c.message)
                if (w, c.type) != (WEB, PROVIDED)
                else Condition(PROVIDED, c.status, "Other", "written by another leader")
                for c in cs
            ]
            for w, cs in workload_conditions(db.session).items()
        }
        [ours] = [
            (c.reason, c.message)
            for c in workload_conditions(db.session)[WEB]
            if c.type == PROVIDED
        ]
        assert save_conditions(db.session, RECOMMENDER_TYPES, theirs, datetime.now(UTC)) == 1
    mine.forget()  # what startup does when this process wins the lease again
    step(sim, mine)
    with app.app_context():
        [now] = [
            (c.reason, c.message)
            for c in workload_conditions(db.session)[WEB]
            if c.type == PROVIDED
        ]
        assert now == ours != ("Other", "written by another leader")


def test_losing_the_lease_while_saving_stops_the_save(
    app: Flask, cluster: ClusterView, sim: Simulator
) -> None:
    job = make_job(app, cluster, sim, checkpoint_batch_size=1)
    calls = {"n": 0}

    def leader_for_two_workloads() -> bool:
        calls["n"] += 1
        return calls["n"] <= 3  # the check before saving, then the first two workloads

    summary = step(sim, job)
    assert "saved 3" in summary
    with app.app_context():
        db.session.execute(Recommendation.__table__.delete())
        db.session.commit()
    job.rows_written.clear()  # as if never written: the rows saved next are inserted, counted
    sim.advance(60)
    sim.settle()
    summary = job.run_once(leader_for_two_workloads)
    assert "saved 2" in summary, summary
    assert len(stored(app)) == 2


def test_the_cyclic_collector_is_paused_during_a_run_and_restored_after(
    app: Flask, cluster: ClusterView, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = make_job(app, cluster, sim)
    during: list[bool] = []
    fetch = cluster.pod_metrics

    def metrics() -> list[PodMetrics]:
        during.append(gc.isenabled())
        return fetch()

    monkeypatch.setattr(cluster, "pod_metrics", metrics)
    assert gc.isenabled()
    step(sim, job)
    assert during == [False] and gc.isenabled()

    def failing() -> list[PodMetrics]:
        raise RuntimeError("metrics.k8s.io is down")

    monkeypatch.setattr(cluster, "pod_metrics", failing)
    with pytest.raises(RuntimeError):
        job.run_once(lambda: True)
    assert gc.isenabled()  # back on after a failed run too
    gc.disable()
    try:
        monkeypatch.setattr(cluster, "pod_metrics", metrics)
        step(sim, job)
        assert not gc.isenabled()  # a collector paused by someone else stays paused
    finally:
        gc.enable()


def test_usage_percentiles_are_computed_only_for_the_history_points_written(
    app: Flask, cluster: ClusterView, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A history point is due once an hour per container; the runs between read no container's
    usage window (its percentiles are the point's alone), and the next point reads each."""
    read = count_window_reads(monkeypatch)
    job = make_job(app, cluster, sim)
    step(sim, job)
    step(sim, job)  # the first run's points read no window (no sample before them)
    first = len(read)
    for _ in range(10):
        step(sim, job)
    assert len(read) == first  # no point due: no window read
    step(sim, job, 3600)
    containers = sum(len(cs) for cs in job.model.rows.values())
    assert containers and len(read) == first + containers
