"""A fleet: two simulated clusters, each with its own `rightsizer serve`, one PostgreSQL.

Each rightsizer learns its cluster's identity from the kube-system namespace's uid, writes only
its own rows and serves only its own; when one is killed -9 mid-run, the other keeps
recommending (a workload created afterwards gets its recommendation) and the dead one's rows
stay as they were."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from kubernetes import client

from app.simulator.simulator import Simulator
from app.simulator.testing import running_simulator
from tests.support.databases import postgres_schema_url
from tests.support.json_bodies import plain
from tests.support.kubectl import deployment
from tests.support.processes import AppProcess, recommendations, wait_for

pytestmark = pytest.mark.e2e


@pytest.fixture
def shared_postgres() -> Iterator[str]:
    yield from postgres_schema_url()


def _prepared(sim: Simulator, extra: str | None) -> str:
    """Creates rightsizer's namespace (and an `extra` Deployment in `shop`, run a minute);
    returns the kube-system namespace's uid."""
    api = sim.api_client()
    core = client.CoreV1Api(api)
    core.create_namespace(plain({"metadata": {"name": "rightsizer"}}))
    if extra:
        client.AppsV1Api(api).create_namespaced_deployment(
            "shop", plain(deployment(extra, replicas=1, namespace="shop"))
        )
        # its pod started before the clock moves: the clock is frozen, so a pod started only
        # after the advance would never have a metrics window of its own (nor a recommendation)
        sim.settle()
        sim.advance(60)
        sim.settle()
    uid = str(core.read_namespace("kube-system").metadata.uid)
    api.close()
    return uid


def _rows(engine: sa.Engine) -> dict[str, set[tuple[Any, ...]]]:
    """The recommendation rows per cluster name: (namespace, kind, name, container, updated)."""
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT c.name, r.namespace, r.kind, r.name, r.container, r.updated_at "
                "FROM recommendations r JOIN clusters c ON c.id = r.cluster_id"
            )
        ).all()
    out: dict[str, set[tuple[Any, ...]]] = {}
    for cluster, *rest in rows:
        out.setdefault(cluster, set()).add(tuple(rest))
    return out


def _workloads(app: AppProcess) -> set[str]:
    return {name for _, _, name, _ in recommendations(app)}


def test_two_clusters_write_apart_and_one_killed_leaves_the_other_working(
    tmp_path: Path, shared_postgres: str
) -> None:
    engine = sa.create_engine(shared_postgres)
    apps: list[AppProcess] = []
    with running_simulator() as east_sim, running_simulator() as west_sim:
        east_uid = _prepared(east_sim, None)
        west_uid = _prepared(west_sim, "west-only")
        assert east_uid != west_uid
        try:
            east = AppProcess(
                east_sim.kubeconfig_path,
                shared_postgres,
                tmp_path / "east.log",
                RIGHTSIZER_CLUSTER_NAME="east",
            )
            apps.append(east)
            east.wait_ready()  # migrates the database before the other starts
            west = AppProcess(
                west_sim.kubeconfig_path,
                shared_postgres,
                tmp_path / "west.log",
                RIGHTSIZER_CLUSTER_NAME="west",
            )
            apps.append(west)
            west.wait_ready()
            wait_for(lambda: "west-only" in _workloads(west), 90, "west's own workload")
            wait_for(lambda: _workloads(east), 90, "east's recommendations")
            # the same scenario in both: the same workloads, each cluster's own rows
            assert _workloads(east) == _workloads(west) - {"west-only"}
            with engine.connect() as conn:
                clusters = set(conn.execute(sa.text("SELECT uid, name FROM clusters")).all())
            assert clusters == {(east_uid, "east"), (west_uid, "west")}
            rows = _rows(engine)
            assert {r[2] for r in rows["west"]} == _workloads(west)
            assert {r[2] for r in rows["east"]} == _workloads(east)

            east.stop(signal.SIGKILL)
            east_rows = _rows(engine)["east"]
            client.AppsV1Api(west_sim.api_client()).create_namespaced_deployment(
                "shop", plain(deployment("after-kill", replicas=1, namespace="shop"))
            )
            for _ in range(2):
                west_sim.advance(60)
                west_sim.settle()
            wait_for(lambda: "after-kill" in _workloads(west), 90, "west after east was killed")
            assert _rows(engine)["east"] == east_rows  # the dead cluster's rows, untouched
            assert "after-kill" not in {r[2] for r in east_rows}
            assert "Traceback" not in west.log()
        finally:
            for app in apps:
                app.stop()
            engine.dispose()
