"""The updater and pods whose pod-level resources (`spec.resources`) rightsizer sizes, against
the simulated cluster of two releases: 1.36 resizes them in place (KEP-5419), 1.34 cannot, so
InPlaceOrRecreate evicts instead and InPlace reports it and leaves the pods as they are."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from app.core.sizing.plan import POD_VIEW
from app.kube.cluster import ClusterView
from app.simulator.simulator import Simulator
from app.store.conditions import workload_conditions
from app.store.extensions import db
from tests.support.updater_runs import (
    LEADER,
    NS,
    POD_LEVEL,
    Clock,
    audit,
    events,
    make_job,
    policy,
    recommend,
    server_pods,
    shared,
    uids,
)

MI = 2**20


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return {
        "nodes": [{"namePrefix": "node", "count": 2, "cpu": "4", "memory": "16Gi"}],
        "namespaces": [{"name": NS}],
    }


@pytest.fixture(scope="module", params=["1.34", "1.36"])
def sim_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    return {"version": request.param}


def pod_levels(api: Any) -> list[dict[str, Any]]:
    return sorted(
        (p["spec"]["resources"]["requests"] for p in server_pods(api)),
        key=lambda r: str(r),
    )


def test_in_place_or_recreate_resizes_where_the_release_can_else_evicts(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    shared(sim, api, cluster)
    policy(app, "shared", "InPlaceOrRecreate")
    recommend(app, "shared", cpu=500, memory=512 * MI)
    before = uids(api, "shared")
    job = make_job(app, cluster, api, Clock(sim.now()))
    summary = job.run_once(LEADER)
    [row] = audit(app)
    assert row.details["after"][POD_VIEW]["requests"] == {"cpu": 500, "memory": 512 * MI}
    if sim.version.minor >= 36:
        assert "1 pods updated, 0 resize fallbacks" in summary
        assert uids(api, "shared") == before  # resized, not replaced
        assert {"cpu": "500m", "memory": "512Mi"} in pod_levels(api)
        assert row.action == "resize"
        [resized] = [p for p in server_pods(api) if p["spec"]["resources"] != POD_LEVEL]
        assert resized["status"]["resources"]["requests"] == {"cpu": "500m", "memory": "512Mi"}
        assert [e.reason for e in events(api)] == ["RightsizerResized"]
    else:
        assert "1 pods updated, 1 resize fallbacks" in summary
        assert len(before - uids(api, "shared")) == 1
        assert row.action == "evict"
        assert row.details["fallback"].startswith("Kubernetes 1.34 cannot resize a pod with")
        assert [(e.reason, e.type) for e in events(api)] == [
            ("RightsizerResizeFallback", "Warning")
        ]


def test_in_place_on_a_release_that_cannot_touches_nothing_and_says_why(
    app: Flask, sim: Simulator, api: Any, cluster: ClusterView
) -> None:
    if sim.version.minor >= 36:
        pytest.skip("1.36 resizes pod-level resources in place")
    shared(sim, api, cluster)
    policy(app, "shared", "InPlace")
    recommend(app, "shared", cpu=500, memory=512 * MI)
    before = uids(api, "shared")
    job = make_job(app, cluster, api, Clock(sim.now()))
    job.run_once(LEADER)
    job.run_once(LEADER)  # not asked again, still said
    assert uids(api, "shared") == before and audit(app) == []
    assert pod_levels(api) == [POD_LEVEL["requests"]] * 2
    warned = [e for e in events(api) if e.reason == "RightsizerResizeInfeasible"]
    # one for each pod, the second run adds none (nothing is tried: nothing disrupted)
    assert len(warned) == 2 and all(e.type == "Warning" for e in warned)
    assert "KEP-5419" in warned[0].message
    with app.app_context():
        [(key, rows)] = workload_conditions(db.session()).items()
        found = [(r.reason, r.message) for r in rows if r.type == "ResizeInfeasible"]
        db.session.rollback()
    assert key.name == "shared"
    [(reason, message)] = found
    assert reason == "PodLevelResizeUnsupported"
    assert "Kubernetes 1.34 cannot resize a pod with pod-level resources" in message
