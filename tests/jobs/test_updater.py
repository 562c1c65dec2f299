"""The updater's safety rules and fallbacks, one run at a time against the simulated cluster.

Each test builds the job as `rightsizer serve` does (ClusterView and PodActions over the official
client, against the simulator) and calls run_once directly. Time is explicit: the updater's clock
is a `Clock` the test moves, so the rate limit and the Deferred/InProgress limits need no sleeps.
No webhook runs here, so evicted pods come back unchanged; the tests count evictions, not results.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest
from flask import Flask
from kubernetes import client
from sqlalchemy import select

from app.core.bodies import ContainerResize, EvictionBody, ResizeBody
from app.jobs import updater
from app.kube.actions import PodActions
from app.kube.cluster import ClusterView
from app.kube.limitranges import LimitRangeCache
from app.kube.webhook_config import is_registered
from app.simulator.simulator import Simulator
from app.store.extensions import db
from app.store.models import Recommendation
from tests.support.json_bodies import plain
from tests.support.updater_runs import (
    GI,
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
    "nodes": [{"namePrefix": "node", "count": 3, "cpu": "4", "memory": "16Gi"}],
    "namespaces": [{"name": NS}],
    "workloads": [
        deployment("web", 3),
        deployment("api", 3),
        deployment("db", 2, cpu="500m", memory="512Mi", guaranteed=True),
    ],
}


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return SCENARIO


# --- Recreate: eviction, its audit row and its Event ------------------------------------------


def test_recreate_evicts_within_tolerance_with_audit_and_event(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    policy(app, "web", "Recreate")
    recommend(app, "web", cpu=200)  # requests 1000m, upper bound 300m: outside the range
    before = uids(api, "web")
    job = make_job(app, cluster, api, Clock(sim.now()))
    summary = job.run_once(LEADER)
    assert "1 pods updated" in summary
    gone = before - uids(api, "web")
    assert len(gone) == 1  # int(3 x 0.5) = 1 per run
    rows = audit(app)
    assert [(r.action, r.actor) for r in rows] == [("evict", "rightsizer/updater")]
    d = rows[0].details
    assert d["before"] == {"app": {"requests": {"cpu": 1000, "memory": GI}, "limits": {}}}
    assert d["after"]["app"]["requests"]["cpu"] == 200
    evs = events(api)
    assert [(e.reason, e.involved_object.uid) for e in evs] == [("RightsizerEvicted", gone.pop())]
    assert evs[0].involved_object.name == rows[0].object_ref.split("/")[1]


def test_dry_run_logs_and_changes_nothing(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView, caplog: pytest.LogCaptureFixture
) -> None:
    policy(app, "web", "Recreate")
    recommend(app, "web", cpu=200)
    before = uids(api, "web")
    job = make_job(app, cluster, api, Clock(sim.now()), dry_run=True)
    with caplog.at_level(logging.INFO, logger="app.jobs.updater"):
        for _ in range(3):
            job.run_once(LEADER)
    settled(sim, api, cluster)
    assert uids(api, "web") == before
    assert audit(app) == []
    assert events(api) == []
    assert len([m for m in caplog.messages if m.startswith("[dry run] evict shop/web-")]) == 3


def test_a_run_reuses_the_ranking_of_what_did_not_change_and_redoes_what_did(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView, caplog: pytest.LogCaptureFixture
) -> None:
    """The second run ranks `web` from the first run's patch (snapshot carried forward, plan's
    SizedMemo); once its recommendation row changes, the third run sizes it from the new one."""
    policy(app, "web", "Recreate")
    recommend(app, "web", cpu=200)
    job = make_job(app, cluster, api, Clock(sim.now()), dry_run=True)
    with caplog.at_level(logging.INFO, logger="app.jobs.updater"):
        job.run_once(LEADER)
        job.run_once(LEADER)
        assert (job.sized_memo.hits, job.sized_memo.misses) == (1, 1)
        with app.app_context():
            row = db.session.execute(select(Recommendation)).scalar_one()
            row.target_cpu, row.lower_bound_cpu, row.upper_bound_cpu = 400, 200, 600
            db.session.commit()
        job.run_once(LEADER)
    assert (job.sized_memo.hits, job.sized_memo.misses) == (1, 2)
    evicted = [m for m in caplog.messages if m.startswith("[dry run] evict shop/web-")]
    assert [m.split(" -> ")[1] for m in evicted] == [
        "app[cpu=200m, memory=1Gi]",
        "app[cpu=200m, memory=1Gi]",
        "app[cpu=400m, memory=1Gi]",
    ]


def test_a_dry_run_with_info_off_builds_no_message(
    app: Flask,
    sim: Simulator,
    api: Any,
    cluster: ClusterView,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Issue 22: nothing reads an update's message or details in a dry run with INFO off (no
    # audit row, no Event, no log line), so none is built; the pods are counted all the same.
    policy(app, "web", "Recreate")
    recommend(app, "web", cpu=200)

    def unused(*_: Any) -> Any:
        raise AssertionError("built for nothing")

    monkeypatch.setattr(updater, "describe_change", unused)
    monkeypatch.setattr(updater, "change_details", unused)
    job = make_job(app, cluster, api, Clock(sim.now()), dry_run=True)
    with caplog.at_level(logging.WARNING, logger="app.jobs.updater"):
        assert "1 pods updated" in job.run_once(LEADER)  # the budget holds the other two
    settled(sim, api, cluster)
    assert audit(app) == []
    assert events(api) == []


def test_nothing_happens_while_the_webhook_is_not_registered(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    policy(app, "web", "Recreate")
    recommend(app, "web", cpu=200)
    before = uids(api, "web")
    # The check `rightsizer serve` uses, against a cluster where no configuration exists.
    job = make_job(
        app, cluster, api, Clock(sim.now()), registered=lambda: is_registered(api, "rightsizer")
    )
    assert "not registered" in job.run_once(LEADER)
    assert uids(api, "web") == before
    assert audit(app) == [] and events(api) == []


def test_recommendations_younger_than_min_history_are_not_acted_on(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    policy(app, "web", "Recreate")
    recommend(app, "web", cpu=200, history=1800)
    before = uids(api, "web")
    job = make_job(app, cluster, api, Clock(sim.now()), min_history_seconds=3600)
    job.run_once(LEADER)
    assert uids(api, "web") == before
    # The same recommendation with enough history behind it is acted on.
    old = make_job(app, cluster, api, Clock(sim.now()), min_history_seconds=1200)
    assert "1 pods updated" in old.run_once(LEADER)
    assert len(before - uids(api, "web")) == 1


def test_requests_that_fit_on_no_node_are_held_back(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView, caplog: pytest.LogCaptureFixture
) -> None:
    policy(app, "web", "Recreate")
    recommend(app, "web", cpu=6000, spread=0.1)  # 6 cores: every node has 4
    before = uids(api, "web")
    job = make_job(app, cluster, api, Clock(sim.now()))
    with caplog.at_level(logging.INFO, logger="app.jobs.updater"):
        summary = job.run_once(LEADER)
    assert "0 pods updated" in summary and "3 held back" in summary  # each pod was tried
    assert uids(api, "web") == before
    assert len([m for m in caplog.messages if m.endswith("fit on no node")]) == 3
    assert audit(app) == []


def test_a_node_the_pod_does_not_tolerate_is_no_room_for_it(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView, caplog: pytest.LogCaptureFixture
) -> None:
    """3.6 cores fit none of the 4-core nodes, only a 16-core one tainted for batch work: the
    pods stay (their replacements could not be scheduled) until the taint goes."""
    core = client.CoreV1Api(api)
    sim.add_node("big", cpu="16", memory="64Gi")
    taint = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
    core.patch_node("big", {"spec": {"taints": [taint]}})

    def node_taints() -> list[Any]:
        node = cluster.nodes.get("", "big") or {}
        return list((node.get("spec") or {}).get("taints") or [])

    wait = time.monotonic() + 10
    while node_taints() != [taint] and time.monotonic() < wait:
        time.sleep(0.05)
    assert node_taints() == [taint]
    policy(app, "web", "Recreate")
    recommend(app, "web", cpu=3600, spread=0.1)
    before = uids(api, "web")
    job = make_job(app, cluster, api, Clock(sim.now()))
    with caplog.at_level(logging.INFO, logger="app.jobs.updater"):
        summary = job.run_once(LEADER)
    assert "0 pods updated" in summary and "3 held back" in summary, summary
    assert uids(api, "web") == before

    core.patch_node("big", {"spec": {"taints": None}})
    wait = time.monotonic() + 10
    while node_taints() and time.monotonic() < wait:
        time.sleep(0.05)
    assert node_taints() == []
    summary = make_job(app, cluster, api, Clock(sim.now())).run_once(LEADER)
    assert [r.action for r in audit(app)] == ["evict"], summary


def test_global_rate_limit_spreads_evictions_over_time(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    for name in ("web", "api"):
        policy(app, name, "Recreate")
        recommend(app, name, cpu=200)
    before = uids(api, "web") | uids(api, "api")
    clock = Clock(sim.now())
    # Without the limit both owners lose one pod per run; at one per 10 s with a burst of 1,
    # the first run evicts one, a run 5 s later none, a run 10 s later one more.
    job = make_job(app, cluster, api, clock, evictions_per_second=0.1, eviction_burst=1)

    def evicted() -> int:
        return len(before - (uids(api, "web") | uids(api, "api")))

    job.run_once(LEADER)
    assert evicted() == 1
    settled(sim, api, cluster)
    clock.t += 5
    job.run_once(LEADER)
    assert evicted() == 1
    clock.t += 5
    job.run_once(LEADER)
    assert evicted() == 2
    assert [r.action for r in audit(app)] == ["evict", "evict"]


# --- InPlaceOrRecreate: resize, and the fallbacks to eviction ---------------------------------


def test_resize_in_place_records_event_and_audit(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    policy(app, "web", "InPlaceOrRecreate")
    recommend(app, "web", cpu=500)
    before = uids(api, "web")
    job = make_job(app, cluster, api, Clock(sim.now()))
    assert "1 pods updated" in job.run_once(LEADER)
    assert uids(api, "web") == before  # nothing recreated
    cpus = sorted(
        p["spec"]["containers"][0]["resources"]["requests"]["cpu"]
        for p in server_pods(api)
        if p["metadata"]["name"].startswith("web-")
    )
    assert cpus == ["1", "1", "500m"]
    rows = audit(app)
    assert [r.action for r in rows] == ["resize"]
    assert rows[0].details["before"]["app"]["requests"]["cpu"] == 1000
    assert rows[0].details["after"]["app"]["requests"]["cpu"] == 500
    assert [e.reason for e in events(api)] == ["RightsizerResized"]


def test_qos_class_change_falls_back_to_eviction(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    # Guaranteed pods (requests = limits); RequestsOnly lowers the request under the limit,
    # which would make them Burstable: Kubernetes refuses such a resize, so evict instead.
    policy(
        app,
        "db",
        "InPlaceOrRecreate",
        containers=[{"containerName": "*", "controlledValues": "RequestsOnly"}],
    )
    recommend(app, "db", cpu=100, memory=512 * 1024**2)
    before = uids(api, "db")
    job = make_job(app, cluster, api, Clock(sim.now()))
    assert "1 pods updated" in job.run_once(LEADER)
    assert len(before - uids(api, "db")) == 1
    rows = audit(app)
    assert [r.action for r in rows] == ["evict"]
    assert "QoS class Guaranteed -> Burstable" in rows[0].message
    assert rows[0].details["before"]["app"]["requests"]["cpu"] == 500
    assert rows[0].details["after"]["app"]["requests"]["cpu"] == 100
    evs = events(api)
    assert [(e.reason, e.type) for e in evs] == [("RightsizerResizeFallback", "Warning")]


def set_resize_condition(api: Any, pod: dict[str, Any], type_: str, reason: str) -> None:
    """What a kubelet reports about a resize it has not finished (through pods/status)."""
    client.CoreV1Api(api).patch_namespaced_pod_status(
        pod["metadata"]["name"],
        NS,
        {
            "status": {
                "conditions": [
                    *[
                        c
                        for c in pod["status"].get("conditions") or []
                        if not c["type"].startswith("PodResize")
                    ],
                    {"type": type_, "status": "True", "reason": reason, "message": "waiting"},
                ]
            }
        },
    )


@pytest.mark.parametrize(
    ("condition", "reason", "limit"),
    [("PodResizePending", "Deferred", 300.0), ("PodResizeInProgress", "", 3600.0)],
)
def test_resize_stuck_too_long_falls_back_to_eviction(
    app: Flask,
    sim: Simulator,
    api: Any,
    cluster: ClusterView,
    condition: str,
    reason: str,
    limit: float,
) -> None:
    policy(app, "web", "InPlaceOrRecreate")
    recommend(app, "web", cpu=500)
    clock = Clock(sim.now())
    job = make_job(app, cluster, api, clock, settings=_one_at_a_time())
    job.run_once(LEADER)
    [resized] = [
        p
        for p in server_pods(api)
        if p["metadata"]["name"].startswith("web-")
        and p["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "500m"
    ]
    set_resize_condition(api, resized, condition, reason)
    settled(sim, api, cluster)
    job.run_once(LEADER)  # first seen stuck now: the clock for the limit starts here
    clock.t += limit
    job.run_once(LEADER)  # exactly the limit: still waiting
    assert resized["metadata"]["uid"] in uids(api, "web")
    clock.t += 1
    summary = job.run_once(LEADER)
    assert "1 resize fallbacks" in summary
    assert resized["metadata"]["uid"] not in uids(api, "web")
    ref = f"{NS}/{resized['metadata']['name']}"
    rows = [r for r in audit(app) if r.object_ref == ref]  # other pods get resized meanwhile
    assert [r.action for r in rows] == ["resize", "evict"]
    state = reason or "InProgress"
    assert rows[1].message.startswith(f"resize {state}")
    assert rows[1].details["fallback"].startswith(f"resize {state}")
    assert rows[1].details["before"] == rows[0].details["before"]
    assert rows[1].details["after"] == rows[0].details["after"]
    mine = [e for e in events(api) if e.involved_object.uid == resized["metadata"]["uid"]]
    assert sorted(e.reason for e in mine) == ["RightsizerResizeFallback", "RightsizerResized"]


def _one_at_a_time() -> Any:
    from app.core.sizing.priority import UpdaterSettings

    return UpdaterSettings(eviction_tolerance=0.0)  # one pod per owner per run, all running


def test_resize_404_on_a_live_pod_falls_back_to_eviction(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A cluster older than 1.33 has no `resize` subresource: the API server answers it with
    # the 404 it gives any unknown path, while the pod itself is still there.
    from app.simulator.apiserver import errors
    from app.simulator.endpoints import subresources

    real = subresources.handle

    def without_resize(api: Any, rt: Any, ns: str, name: str, sub: str, req: Any) -> Any:
        if sub == "resize":
            raise errors.unknown_resource()
        return real(api, rt, ns, name, sub, req)

    monkeypatch.setattr(subresources, "handle", without_resize)
    policy(app, "web", "InPlaceOrRecreate")
    recommend(app, "web", cpu=500)
    before = uids(api, "web")
    job = make_job(app, cluster, api, Clock(sim.now()))
    assert "1 pods updated" in job.run_once(LEADER)
    assert len(before - uids(api, "web")) == 1
    rows = audit(app)
    assert [r.action for r in rows] == ["evict"]
    assert "resize not supported" in rows[0].message
    assert rows[0].details["before"]["app"]["requests"]["cpu"] == 1000
    assert rows[0].details["after"]["app"]["requests"]["cpu"] == 500
    assert [e.reason for e in events(api)] == ["RightsizerResizeFallback"]


@pytest.mark.parametrize("mode", ["Recreate", "InPlaceOrRecreate"])
def test_an_eviction_whose_answer_is_lost_counts_against_the_budget(
    app: Flask,
    sim: Simulator,
    api: Any,
    cluster: ClusterView,
    monkeypatch: pytest.MonkeyPatch,
    mode: str,
) -> None:
    """The API server evicts each pod but its answer never comes back (the connection drops):
    the eviction may have been done, so it takes the budget (one pod of three per run). Before,
    it was `failed` and its budget given back. Under InPlaceOrRecreate, whose resize is refused
    as unknown first (Kubernetes < 1.33) and whose fallback evicts at once, every pod of `web`
    was then evicted in one run (in CI an unreadable answer let it evict two)."""
    from app.simulator.apiserver import errors
    from app.simulator.endpoints import subresources

    real_sub = subresources.handle

    def without_resize(api: Any, rt: Any, ns: str, name: str, sub: str, req: Any) -> Any:
        if sub == "resize":
            raise errors.unknown_resource()
        return real_sub(api, rt, ns, name, sub, req)

    answers_lost(monkeypatch, "POST", "/eviction")
    monkeypatch.setattr(subresources, "handle", without_resize)
    policy(app, "web", mode)
    recommend(app, "web", cpu=200)
    before = uids(api, "web")
    job = make_job(app, cluster, api, Clock(sim.now()))
    summary = job.run_once(LEADER)
    [gone] = before - uids(api, "web")
    assert "0 pods updated" in summary and "1 answers lost" in summary
    # on record as maybe done: an audit row of its own (not counted as an eviction), an Event
    [row] = audit(app)
    assert row.action == "evict-unanswered"
    assert row.message.endswith("the API server's answer was lost: it may have been done")
    assert row.details["before"]["app"]["requests"]["cpu"] == 1000
    assert row.details["after"]["app"]["requests"]["cpu"] == 200
    assert ("fallback" in row.details) == (mode == "InPlaceOrRecreate")
    [ev] = events(api)
    assert (ev.reason, ev.type, ev.involved_object.uid) == ("RightsizerAnswerLost", "Warning", gone)
    assert ev.message == row.message


def test_a_resize_whose_answer_is_lost_is_on_record_as_maybe_done(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The API server resizes the pod and the answer is lost: not counted as updated, but an
    audit row `resize-unanswered` and a Warning Event say it may have been done (before, only a
    log line did)."""
    answers_lost(monkeypatch, "PATCH", "/resize")
    policy(app, "web", "InPlaceOrRecreate")
    recommend(app, "web", cpu=500)
    job = make_job(app, cluster, api, Clock(sim.now()))
    summary = job.run_once(LEADER)
    assert "0 pods updated" in summary and "1 answers lost" in summary
    [row] = audit(app)
    assert row.action == "resize-unanswered"
    assert row.message.startswith("resize (")
    assert row.details["after"]["app"]["requests"]["cpu"] == 500
    [ev] = events(api)
    assert (ev.reason, ev.type, ev.involved_object.name) == (
        "RightsizerAnswerLost",
        "Warning",
        row.object_ref.split("/")[1],
    )


def test_resize_of_a_deleted_pod_is_gone_not_unsupported(sim: Simulator, api: Any) -> None:
    actions = PodActions(api)
    [pod, *_] = server_pods(api)
    name = pod["metadata"]["name"]
    body = ResizeBody((ContainerResize("app", {"cpu": 900, "memory": GI}, {}),))
    assert actions.resize(NS, name, body) == "done"
    client.CoreV1Api(api).delete_namespaced_pod(name, NS)
    assert actions.resize(NS, name, body) == "gone"
    assert actions.evict(EvictionBody(NS, name)) == "gone"


def test_eviction_names_the_pod_it_checked_by_uid(sim: Simulator, api: Any) -> None:
    """A pod that took the name of the one the updater checked (a StatefulSet's replacement) is
    not evicted: the Eviction carries the checked pod's uid as a precondition."""
    actions = PodActions(api)
    [pod, *_] = server_pods(api)
    name, uid = pod["metadata"]["name"], pod["metadata"]["uid"]
    assert actions.evict(EvictionBody(NS, name, "an-older-pod-of-that-name")) == "gone"
    assert [p["metadata"]["uid"] for p in server_pods(api) if p["metadata"]["name"] == name] == [
        uid
    ]
    assert actions.evict(EvictionBody(NS, name, uid)) == "done"
    assert name not in {p["metadata"]["name"] for p in server_pods(api)}


# --- LimitRanges: the updater sizes pods exactly as the webhook would --------------------------


@pytest.mark.parametrize(
    ("values", "cpu", "updated"),
    [("RequestsOnly", "1500m", [1, 1, 1, 0]), ("RequestsAndLimits", "1", [0, 0, 0, 0])],
)
def test_a_limit_range_caps_what_the_updater_sets_and_a_capped_pod_is_left_alone(
    app: Flask,
    sim: Simulator,
    api: Any,
    cluster: ClusterView,
    values: str,
    cpu: str,
    updated: list[int],
) -> None:
    """Recommended 2000m, LimitRange max 1500m: each pod is resized to 1500m, the most the
    webhook would give a new pod. Once there, it is left alone: sized without the LimitRange it
    would look below its lower bound (1800m) and be disrupted run after run for nothing.

    RequestsOnly: the pods have no limit, so a new pod gets the LimitRange's default limit, which
    the API server stores as its max (1500m). Under RequestsAndLimits the webhook keeps that 1.5
    ratio to the 1000m request, so 1000m is already the most a new pod gets: no pod is touched."""
    client.CoreV1Api(api).create_namespaced_limit_range(
        NS,
        plain(
            {
                "metadata": {"name": "caps"},
                "spec": {"limits": [{"type": "Container", "max": {"cpu": "1500m"}}]},
            }
        ),
    )
    ranges = LimitRangeCache(sim.api_client()).start()
    try:
        wait = time.monotonic() + 10
        while not ranges(NS) and time.monotonic() < wait:
            time.sleep(0.05)
        policy(
            app,
            "web",
            "InPlaceOrRecreate",
            containers=[{"containerName": "*", "controlledValues": values}],
        )
        recommend(app, "web", cpu=2000, spread=0.1)  # bounds 1800m..2200m
        clock = Clock(sim.now())
        job = make_job(app, cluster, api, clock, limit_ranges=ranges)
        summaries = []
        for _ in range(4):
            summaries.append(job.run_once(LEADER))
            settled(sim, api, cluster)
            clock.t += 60
    finally:
        ranges.stop()
    cpus = sorted(
        p["spec"]["containers"][0]["resources"]["requests"]["cpu"]
        for p in server_pods(api)
        if p["metadata"]["name"].startswith("web-")
    )
    assert cpus == [cpu] * 3, summaries
    assert [s.split(":")[1].split(",")[0].strip() for s in summaries] == [
        f"{n} pods updated" for n in updated
    ]
    assert "0 held back" in summaries[-1]
    rows = audit(app)
    assert [r.details["after"]["app"]["requests"]["cpu"] for r in rows] == [1500] * sum(updated)


def test_nothing_happens_while_limit_ranges_cannot_be_listed(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    """Without the LimitRanges a capped pod would look too small: no pod is touched."""
    unreachable = client.ApiClient(client.Configuration(host="http://127.0.0.1:9"))
    ranges = LimitRangeCache(unreachable).start()
    try:
        policy(app, "web", "Recreate")
        recommend(app, "web", cpu=200)
        before = uids(api, "web")
        job = make_job(app, cluster, api, Clock(sim.now()), limit_ranges=ranges, interval=1.0)
        summary = job.run_once(LEADER)
    finally:
        ranges.stop()
        unreachable.close()
    assert summary == "LimitRanges not known (cannot list them): no pod touched"
    assert uids(api, "web") == before
    assert audit(app) == []


def test_the_pod_cache_keeps_what_the_fit_check_reads() -> None:
    """Pods are trimmed in the cache; tolerations (but the defaults every pod gets), the
    nodeSelector and the required node affinity survive, and give the same Placement."""
    from app.core.sizing.fit import Placement
    from app.kube.cluster import trim_pod

    required = {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "Exists"}]}]
    }
    spec: dict[str, Any] = {
        "nodeName": "n1",
        "containers": [{"name": "app", "image": "x", "env": [{"name": "A", "value": "1"}]}],
        "tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
            {"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"},
        ],
        "nodeSelector": {"pool": "general"},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": required,
                "preferredDuringSchedulingIgnoredDuringExecution": [],
            },
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []},
        },
    }
    trimmed = trim_pod({"metadata": {"name": "p", "namespace": NS}, "spec": spec})["spec"]
    assert trimmed["affinity"] == {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}
    }
    assert [t["key"] for t in trimmed["tolerations"]] == ["dedicated"]
    assert Placement.of(trimmed) == Placement.of(
        {k: v for k, v in spec.items() if k != "tolerations"}
        | {"tolerations": spec["tolerations"][1:]}
    )
    assert "affinity" not in trim_pod({"spec": {"affinity": {"podAffinity": {}}}})["spec"]


def test_a_policy_is_acted_on_only_once_the_webhook_can_have_loaded_it(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    """Evicted under a policy the webhook processes have not loaded yet, a pod would come back
    without it, only to be evicted again once they have: the updater waits for the settle time
    (two webhook cache refresh periods by default) after the policy's last change."""
    policy(app, "web", "Recreate")
    recommend(app, "web", cpu=200)  # requests 1000m, upper bound 300m: outside the range
    before = uids(api, "web")
    clock = Clock(time.time())  # the policy's change time is wall-clock time
    job = make_job(app, cluster, api, clock, policy_settle_seconds=10.0)
    summary = job.run_once(LEADER)
    assert "1 waiting for the webhook to load their policy" in summary
    assert "0 pods updated" in summary
    assert uids(api, "web") == before and audit(app) == []
    clock.t += 11
    assert "1 pods updated" in job.run_once(LEADER)
    assert len(before - uids(api, "web")) == 1
