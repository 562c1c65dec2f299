"""End to end: proportional scalers follow the simulated cluster's size (issues 7 and 11)."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from app.simulator.simulator import Simulator
from tests.support.processes import AppProcess, wait_for
from tests.support.simulators import replicas

pytestmark = pytest.mark.e2e
INTERVAL = 1.0


@pytest.fixture(scope="module")
def sim_namespaces() -> tuple[str, ...]:
    return ("rightsizer",)  # on the default scenario: 5 schedulable nodes


@pytest.fixture
def app(sim: Simulator, tmp_path: Path) -> Iterator[AppProcess]:
    # The timings below count in 1 s scaler runs, under the default 5 QPS client limit: the
    # scaler's client has its own, so the recommender and updater do not delay its runs.
    a = AppProcess(sim.kubeconfig_path, f"sqlite:///{tmp_path}/rightsizer.db", tmp_path / "app.log")
    a.wait_ready()
    yield a
    a.stop()


def db(app: AppProcess) -> sa.Engine:
    return sa.create_engine(f"sqlite:///{app.log_path.parent / 'rightsizer.db'}")


def add_scaler(
    app: AppProcess,
    name: str,
    kind: str,
    target: str,
    ns: str,
    params: dict[str, Any],
    behavior: dict[str, Any] | None = None,
) -> None:
    engine = db(app)
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO scalers (cluster_id, name, target_namespace, target_kind, "
                "target_name, params, enabled, version, behavior, created_at, updated_at) VALUES "
                "((SELECT min(id) FROM clusters), :n, :ns, :k, :t, :p, 1, 1, :b, "
                "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            ),
            {
                "n": name,
                "ns": ns,
                "k": kind,
                "t": target,
                "p": json.dumps(params),
                "b": json.dumps(behavior) if behavior else None,
            },
        )
    engine.dispose()


def set_params(app: AppProcess, name: str, params: dict[str, Any]) -> None:
    engine = db(app)
    with engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE scalers SET params = :p WHERE name = :n"),
            {"p": json.dumps(params), "n": name},
        )
    engine.dispose()


def becomes(sim: Simulator, ns: str, kind: str, name: str, want: int, within: float) -> None:
    wait_for(
        lambda: replicas(sim, ns, kind, name) == want,
        within,
        f"{kind} {ns}/{name} at {want} replicas",
    )


def test_scalers_follow_nodes_params_and_survive_a_missing_target(
    sim: Simulator, app: AppProcess
) -> None:
    add_scaler(
        app,
        "ghost",
        "Deployment",
        "does-not-exist",
        "kube-system",
        {"linear": {"nodesPerReplica": 1}},
    )
    add_scaler(
        app,
        "coredns",
        "Deployment",
        "coredns",
        "kube-system",
        {"linear": {"nodesPerReplica": 1, "min": 1}},
    )
    add_scaler(
        app,
        "postgres",
        "StatefulSet",
        "postgres",
        "data",
        {"ladder": {"nodesToReplicas": [[1, 1], [6, 3]]}},
    )
    becomes(sim, "kube-system", "Deployment", "coredns", 5, 10)  # 5 nodes, one replica each
    becomes(sim, "data", "StatefulSet", "postgres", 1, 10)  # below the 6-node step
    for i in range(2):
        sim.add_node(f"extra-{i}", cpu="8", memory="32Gi")
    becomes(
        sim, "kube-system", "Deployment", "coredns", 7, 2 * INTERVAL + 3
    )  # within two intervals
    becomes(sim, "data", "StatefulSet", "postgres", 3, 2 * INTERVAL + 3)  # a StatefulSet works
    for node in ("extra-0", "extra-1", "worker-0"):
        sim.cordon(node)
    becomes(
        sim, "kube-system", "Deployment", "coredns", 4, 2 * INTERVAL + 3
    )  # cordoned: not counted
    set_params(app, "coredns", {"linear": {"nodesPerReplica": 2, "min": 1}})
    becomes(
        sim, "kube-system", "Deployment", "coredns", 2, 2 * INTERVAL + 3
    )  # params edited in the DB
    assert "scaler ghost: Deployment kube-system/does-not-exist not found" in app.log()


def test_scale_down_waits_for_the_stabilization_window(sim: Simulator, app: AppProcess) -> None:
    window = 6  # the scenario uses 120 s; the semantics are the same, the test is faster
    behavior = {"scaleDown": {"stabilizationWindowSeconds": window}}
    add_scaler(
        app,
        "coredns",
        "Deployment",
        "coredns",
        "kube-system",
        {"linear": {"nodesPerReplica": 1}},
        behavior,
    )
    becomes(sim, "kube-system", "Deployment", "coredns", 5, 10)
    time.sleep(window + 1)  # let proposals of 5 age out of the window
    for node in ("worker-0", "worker-1"):
        sim.cordon(node)
    cordoned = time.monotonic()
    preview = app.get("/api/v1/scalers/coredns/preview")
    assert (preview["current"], preview["proposed"], preview["allowedNow"]) == (5, 3, 5)
    assert "stabilized" in preview["reason"]
    assert preview["cluster"]["schedulableNodes"] == 3
    wait_for(
        lambda: replicas(sim, "kube-system", "Deployment", "coredns") != 5,
        window + 10,
        "the scale-down",
    )
    assert time.monotonic() - cordoned >= window - 1  # held for the window (one interval of slack)
    assert replicas(sim, "kube-system", "Deployment", "coredns") == 3
    for node in ("worker-0", "worker-1"):
        sim.uncordon(node)
    uncordoned = time.monotonic()
    becomes(sim, "kube-system", "Deployment", "coredns", 5, 2 * INTERVAL + 3)  # up at once
    assert time.monotonic() - uncordoned < window


def test_scale_down_in_the_allowed_steps_then_up_at_once(sim: Simulator, app: AppProcess) -> None:
    # The scenario (a 120 s window) in seconds: hold for the window, then 1 pod per period.
    window, period = 4, 3
    behavior = {
        "scaleDown": {
            "stabilizationWindowSeconds": window,
            "policies": [{"type": "Pods", "value": 1, "periodSeconds": period}],
        }
    }
    sim.add_node("extra-0", cpu="8", memory="32Gi")  # 6 nodes, so half can be cordoned
    add_scaler(
        app, "coredns", "Deployment", "coredns", "kube-system", {"linear": {"nodesPerReplica": 1}},
        behavior,
    )  # fmt: skip
    becomes(sim, "kube-system", "Deployment", "coredns", 6, 10)
    for node in ("worker-0", "worker-1", "extra-0"):
        sim.cordon(node)
    cordoned = time.monotonic()
    seen: list[tuple[float, int]] = []  # (seconds after the cordon, replicas) at each change
    deadline = cordoned + window + 3 * period + 10
    while time.monotonic() < deadline:
        now = replicas(sim, "kube-system", "Deployment", "coredns")
        if now != (seen[-1][1] if seen else 6):
            seen.append((time.monotonic() - cordoned, now))
        if now == 3:
            break
        time.sleep(0.1)
    assert [n for _, n in seen] == [5, 4, 3], seen  # one pod at a time, never straight to 3
    assert seen[0][0] >= window - INTERVAL, seen  # held for the window (one run of slack)
    for (before, _), (after, _) in itertools.pairwise(seen):
        assert after - before >= period - 0.5, seen  # at most one step per period
    for node in ("worker-0", "worker-1", "extra-0"):
        sim.uncordon(node)
    becomes(sim, "kube-system", "Deployment", "coredns", 6, 2 * INTERVAL + 3)  # up at once:
    steps = [
        (e["details"]["from"], e["details"]["to"])
        for e in reversed(
            app.get("/api/v1/events", action="scale", objectRef="kube-system/coredns")["items"]
        )
    ]
    assert steps[-4:] == [(6, 5), (5, 4), (4, 3), (3, 6)]  # ... 3 -> 6 in one step
