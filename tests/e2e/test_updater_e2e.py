"""End to end: the updater brings running pods to their recommendation, and knows when not to."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from kubernetes import client

from app.simulator.simulator import Simulator
from tests.support.json_bodies import plain, raw_body
from tests.support.processes import AppProcess, recommendations, updating_from_history, wait_for

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def sim_namespaces() -> tuple[str, ...]:
    return ("rightsizer",)


@pytest.fixture
def app(sim: Simulator, tmp_path: Path) -> Iterator[AppProcess]:
    with updating_from_history(
        sim, tmp_path, lambda a: len(recommendations(a)) >= 10, "recommendations from history"
    ) as a:
        yield a


def pods(sim: Simulator, ns: str, label: str) -> list[dict[str, Any]]:
    api = sim.api_client()
    resp = client.CoreV1Api(api).list_namespaced_pod(
        ns, label_selector=f"app={label}", _preload_content=False
    )
    api.close()
    return json.loads(raw_body(resp))["items"]


def add_policy(
    app: AppProcess, name: str, ns: str, target: str, mode: str, containers: str = "[]"
) -> None:
    url = app.log_path.parent / "rightsizer.db"
    engine = sa.create_engine(f"sqlite:///{url}")
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO policies (name, namespace, target_kind, target_name, update_mode, "
                "container_policies, version, created_at, updated_at) VALUES "
                "(:n, :ns, 'Deployment', :t, :m, :c, 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            ),
            {"n": name, "ns": ns, "t": target, "m": mode, "c": containers},
        )
    engine.dispose()


def audit(app: AppProcess, action: str | None = None) -> list[tuple[str, str, str]]:
    engine = sa.create_engine(f"sqlite:///{app.log_path.parent / 'rightsizer.db'}")
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text("SELECT action, object_ref, message FROM audit_events ORDER BY id")
        ).all()
    engine.dispose()
    return [tuple(r) for r in rows if action is None or r[0] == action]


def running(items: list[dict[str, Any]]) -> int:
    return sum(1 for p in items if p["status"].get("phase") == "Running")


def test_recreate_converges_within_the_disruption_budget(sim: Simulator, app: AppProcess) -> None:
    add_policy(app, "etl", "data", "etl-worker", "Recreate")
    lowest = 3

    def converged() -> bool:
        nonlocal lowest
        items = pods(sim, "data", "etl-worker")
        lowest = min(lowest, running(items))
        return len(items) == 3 and all(
            "rightsizer.io/updates" in p["metadata"].get("annotations", {}) for p in items
        )

    wait_for(converged, 90, "every etl-worker pod replaced with recommended requests", interval=0.1)
    assert lowest >= 3 - int(3 * 0.5)  # never below replicas - tolerance
    rec = recommendations(app)[("data", "Deployment", "etl-worker", "worker")]
    for p in pods(sim, "data", "etl-worker"):
        req = p["spec"]["containers"][0]["resources"]["requests"]
        lo, hi = rec["lowerBound"], rec["upperBound"]
        assert int(lo["cpu"][:-1]) <= int(req["cpu"][:-1]) <= int(hi["cpu"][:-1])
    # The audit row is written just after the eviction: wait for the last one.
    wait_for(lambda: len(audit(app, "evict")) >= 3, 10, "three audited evictions")
    assert len([e for e in audit(app, "evict") if e[1].startswith("data/etl-worker")]) == 3


def test_pdb_and_min_replicas_hold_the_updater_back(sim: Simulator, app: AppProcess) -> None:
    api = sim.api_client()
    client.PolicyV1Api(api).create_namespaced_pod_disruption_budget(
        "shop",
        plain(
            {
                "metadata": {"name": "catalog"},
                "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "catalog"}}},
            }
        ),
    )
    api.close()
    before_catalog = {p["metadata"]["uid"] for p in pods(sim, "shop", "catalog")}
    before_grafana = {p["metadata"]["uid"] for p in pods(sim, "tools", "grafana")}
    runs_before = app.log().count("updater run:")
    add_policy(app, "catalog", "shop", "catalog", "Recreate")
    add_policy(app, "grafana", "tools", "grafana", "Recreate")  # 1 replica < minReplicas 2
    wait_for(lambda: "refused for now (429)" in app.log(), 30, "the PDB to refuse an eviction")
    wait_for(
        lambda: app.log().count("updater run:") >= runs_before + 4, 30, "four more updater runs"
    )
    assert {p["metadata"]["uid"] for p in pods(sim, "shop", "catalog")} == before_catalog
    assert {p["metadata"]["uid"] for p in pods(sim, "tools", "grafana")} == before_grafana
    assert "refused for now (429)" in app.log()
    assert not [e for e in audit(app) if "catalog" in e[1] or "grafana" in e[1]]


def test_in_place_resize_keeps_the_pod_running(sim: Simulator, app: AppProcess) -> None:
    before = {p["metadata"]["uid"]: p for p in pods(sim, "shop", "recommender")}
    add_policy(app, "recommender", "shop", "recommender", "InPlaceOrRecreate")
    wait_for(lambda: len(audit(app, "resize")) >= 2, 60, "both recommender pods resized")
    after = {p["metadata"]["uid"]: p for p in pods(sim, "shop", "recommender")}
    assert after.keys() == before.keys()  # the same pods: nothing was recreated
    rec = recommendations(app)[("shop", "Deployment", "recommender", "model")]
    for uid, p in after.items():
        assert p["spec"]["containers"][0]["resources"]["requests"]["cpu"] == rec["target"]["cpu"]
        assert (
            p["status"]["containerStatuses"][0]["restartCount"]
            == before[uid]["status"]["containerStatuses"][0]["restartCount"]
        )


def test_infeasible_resize_falls_back_to_eviction(sim: Simulator, app: AppProcess) -> None:
    before = {p["metadata"]["uid"] for p in pods(sim, "data", "kafka-connect")}
    # minAllowed 20 cores: more than any node of the scenario has, so the resize is Infeasible
    # where the pod runs, but a replacement fits on a new, larger node. minReplicas 1 lets the
    # single-replica Deployment be touched.
    sim.add_node("huge-0", cpu="64", memory="256Gi")
    containers = json.dumps([{"containerName": "*", "minAllowed": {"cpu": "20"}}])
    engine = sa.create_engine(f"sqlite:///{app.log_path.parent / 'rightsizer.db'}")
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO policies (name, namespace, target_kind, target_name, update_mode, "
                "min_replicas, container_policies, version, created_at, updated_at) VALUES "
                "('kc', 'data', 'Deployment', 'kafka-connect', 'InPlaceOrRecreate', 1, :c, 1, "
                "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            ),
            {"c": containers},
        )
    engine.dispose()
    wait_for(
        lambda: [e for e in audit(app, "evict") if "resize Infeasible" in e[2]],
        60,
        "the fallback eviction",
    )
    now = pods(sim, "data", "kafka-connect")
    assert {p["metadata"]["uid"] for p in now}.isdisjoint(before)
    assert "RightsizerResizeFallback" in {e.reason for e in _events(sim, "data")}


def _events(sim: Simulator, ns: str) -> list[Any]:
    api = sim.api_client()
    items = client.CoreV1Api(api).list_namespaced_event(ns).items
    api.close()
    return items
