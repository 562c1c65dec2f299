"""Pod-level resources (`spec.resources`) brought to their recommendation by the updater against
the real kube-apiserver of each release: 1.37 (InPlacePodLevelResourcesVerticalScaling, KEP-5419,
on by default from 1.36) resizes them in place through `pods/resize`; 1.33 cannot, so the updater
evicts instead without asking for a resize it knows is refused, and the webhook gives the new pods
the values. The kubelet's part (its declared feature, the pod-level status) is played by
tests.realkube.kubelet; kube-apiserver's audit log says what rightsizer asked and was answered.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from tests.realkube.cluster import RealCluster
from tests.realkube.serve import database_url, serving_as_chart
from tests.realkube.test_updater_real import act_on, calls, deployment, pods, ready, start_workload
from tests.support.processes import AppProcess, wait_for

LEVEL = {
    "requests": {"cpu": "100m", "memory": "64Mi"},
    "limits": {"cpu": "200m", "memory": "128Mi"},
}
# what the updater gives the pods: the recommendation of their one container (300m, 200Mi: it
# shares the pod's budget), the limits kept at twice the requests
SIZED = {
    "requests": {"cpu": "300m", "memory": "200Mi"},
    "limits": {"cpu": "600m", "memory": "400Mi"},
}


@pytest.fixture(scope="module")
def updater(
    real_cluster: RealCluster,
    chart_installed: list[dict[str, Any]],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[AppProcess]:
    with serving_as_chart(
        real_cluster,
        chart_installed,
        tmp_path_factory.mktemp("podlevel"),
        RIGHTSIZER_UPDATER_INTERVAL="1",
        RIGHTSIZER_UPDATER_MIN_LIFETIME_SECONDS="0",
        RIGHTSIZER_UPDATER_MIN_REPLICAS="1",
        RIGHTSIZER_RECOMMENDER_INTERVAL="3600",  # no metrics here: the seeded rows are the truth
        RIGHTSIZER_WORKERS="1",
    ) as app:
        yield app


def start_shared(cluster: RealCluster, ns: str) -> set[str]:
    """Deployment `shared`: two pods whose container shares a pod-level budget; their names."""
    body = deployment("shared", 2)
    template = body["spec"]["template"]["spec"]
    template["resources"] = LEVEL
    template["containers"][0].pop("resources")  # the container shares the pod's budget
    start_workload(cluster, ns, body, 2)
    return {p.metadata.name for p in pods(cluster, ns, "shared")}


def condition(app: AppProcess, ns: str) -> tuple[str, str] | None:
    """The workload's ResizeInfeasible condition (reason, message) as the updater stored it."""
    engine = sa.create_engine(database_url(app))
    with engine.connect() as conn:
        row = conn.execute(
            sa.text(
                "SELECT reason, message FROM workload_conditions WHERE namespace = :ns "
                "AND name = 'shared' AND type = 'ResizeInfeasible'"
            ),
            {"ns": ns},
        ).first()
    engine.dispose()
    return (row[0], row[1]) if row is not None else None


def status_followed(cluster: RealCluster, ns: str) -> bool:
    """Every pod's status.resources (the kubelet's pod-level values in force) is SIZED."""
    return all(
        p.status is not None
        and p.status.resources is not None
        and p.status.resources.requests == SIZED["requests"]
        for p in pods(cluster, ns, "shared")
    )


def sized(cluster: RealCluster, ns: str) -> list[Any] | None:
    live = [p for p in pods(cluster, ns, "shared") if p.metadata.deletion_timestamp is None]
    done = [
        p
        for p in live
        if p.spec.resources is not None
        and {"requests": p.spec.resources.requests, "limits": p.spec.resources.limits} == SIZED
        and ready(p)
    ]
    return done if len(done) == len(live) == 2 else None


def test_pod_level_resources_resize_in_place_where_the_release_can_else_pods_are_evicted(
    real_cluster: RealCluster, updater: AppProcess
) -> None:
    ns = "upd-podlevel"
    before = start_shared(real_cluster, ns)
    act_on(updater, ns, "shared", "InPlaceOrRecreate")
    done = wait_for(lambda: sized(real_cluster, ns), 90, "both pods sized", interval=0.5)
    resizes = calls(real_cluster, ns, "resize")
    evictions = calls(real_cluster, ns, "eviction")
    log = updater.log()[-4000:]
    if real_cluster.kube == "kube":  # 1.37
        assert {p.metadata.name for p in done} == before, (resizes, evictions, log)
        assert [e["responseStatus"]["code"] for e in resizes] == [200, 200], resizes
        assert evictions == []
        # the kubelet's pod-level status follows (the stand-in polls every 0.3 s)
        wait_for(lambda: status_followed(real_cluster, ns), 30, "the pod-level status followed")
    else:  # 1.33: known to be refused, never asked
        assert resizes == [], resizes
        assert [e["responseStatus"]["code"] for e in evictions] == [201, 201], evictions
        assert not before & {p.metadata.name for p in done}
        assert "cannot resize a pod with pod-level resources" in updater.log(), log


def test_in_place_on_a_release_that_cannot_resize_pod_level_resources_touches_nothing(
    real_cluster: RealCluster, updater: AppProcess
) -> None:
    """updateMode InPlace never evicts: on 1.33 the pods stay as they are, no resize is asked,
    and the workload's ResizeInfeasible condition says why (PodLevelResizeUnsupported)."""
    ns = "upd-podlevel-inplace"
    before = start_shared(real_cluster, ns)
    act_on(updater, ns, "shared", "InPlace")
    if real_cluster.kube == "kube":  # 1.37: resized in place as under InPlaceOrRecreate
        done = wait_for(lambda: sized(real_cluster, ns), 90, "both pods resized", interval=0.5)
        assert {p.metadata.name for p in done} == before
        assert calls(real_cluster, ns, "eviction") == []
        return
    reason, message = wait_for(lambda: condition(updater, ns), 60, "the condition", interval=0.5)
    assert reason == "PodLevelResizeUnsupported", message
    assert "Kubernetes 1.33 cannot resize a pod with pod-level resources" in message
    time.sleep(3)  # three more updater runs
    now = pods(real_cluster, ns, "shared")
    assert {p.metadata.name for p in now} == before
    assert all(p.spec.resources.requests == LEVEL["requests"] for p in now)
    assert calls(real_cluster, ns, "resize") == [] and calls(real_cluster, ns, "eviction") == []
