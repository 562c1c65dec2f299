"""End to end (issue 20): a DaemonSet on two node types gets two sizes.

The simulated cluster has small nodes (`m5.large`) and large ones (`m5.4xlarge`), and a log agent
DaemonSet whose pods use four times the CPU and three times the memory on the large nodes
(`usage.nodeFactors`). Its policy, written before `rightsizer serve` starts, sets
`nodeGroupLabel: node.kubernetes.io/instance-type` and updateMode Recreate. rightsizer learns a
day of history from the simulator's Prometheus, per node group; its updater evicts the agents, the
DaemonSet controller recreates each with its node in the pod's affinity, and the webhook sizes
each new pod from its node's group. Read back with the official client, kubectl, the REST API,
the CLI and the dashboard."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import sqlalchemy as sa
from kubernetes import client

from app.core.quantity import amount
from app.simulator.simulator import Simulator
from tests.support.json_bodies import raw_body
from tests.support.kubectl import run_kubectl
from tests.support.processes import AppProcess, updating_from_history, wait_for

pytestmark = pytest.mark.e2e

TYPE = "node.kubernetes.io/instance-type"
SMALL, LARGE = "m5.large", "m5.4xlarge"
AGENT = {
    "kind": "DaemonSet",
    "namespace": "logging",
    "name": "log-agent",
    "containers": [
        {
            "name": "agent",
            "image": "fluent/fluent-bit:3.1",
            "requests": {"cpu": "100m", "memory": "256Mi"},
            "usage": {
                "cpu": {"base": 0.05, "noise": 0.1},
                "memory": {"base": "300Mi", "noise": 0.02},
                "nodeFactors": {"label": TYPE, "values": {LARGE: {"cpu": 4, "memory": 3}}},
            },
        }
    ],
}


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return {
        "seed": 20,
        "historyDays": 1,
        "nodes": [
            {
                "namePrefix": "small",
                "count": 2,
                "cpu": "2",
                "memory": "8Gi",
                "labels": {TYPE: SMALL},
            },
            {
                "namePrefix": "large",
                "count": 2,
                "cpu": "16",
                "memory": "64Gi",
                "labels": {TYPE: LARGE},
            },
        ],
        "namespaces": ["logging"],
        "workloads": [AGENT],
    }


@pytest.fixture(scope="module")
def sim_namespaces() -> tuple[str, ...]:
    return ("rightsizer",)


def write_policy(directory: Path) -> None:
    """The schema, migrated as `rightsizer serve` would, and the agent's policy in it: there before
    the recommender's first run, so the history it loads feeds the node groups."""
    url = f"sqlite:///{directory}/rightsizer.db"
    env = {**os.environ, "RIGHTSIZER_DATABASE_URL": url}
    subprocess.run(
        [sys.executable, "-m", "app.cli", "db", "upgrade"], env=env, check=True, capture_output=True
    )
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO policies (name, namespace, target_kind, target_name, update_mode, "
                "container_policies, node_group_label, version, created_at, updated_at) VALUES "
                "('log-agent', 'logging', 'DaemonSet', 'log-agent', 'Recreate', '[]', :label, 1, "
                "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            ),
            {"label": TYPE},
        )
    engine.dispose()


def agent_recommendation(app: AppProcess) -> dict[str, Any] | None:
    try:
        return app.get("/api/v1/recommendations/logging/DaemonSet/log-agent")
    except requests.HTTPError:
        return None


def groups(app: AppProcess) -> dict[str, dict[str, Any]]:
    """The agent's node groups with a recommendation, by group."""
    doc = agent_recommendation(app) or {"containers": []}
    return {
        g["nodeGroup"]: g
        for c in doc["containers"]
        for g in c.get("nodeGroups") or []
        if "target" in g
    }


@pytest.fixture(scope="module")
def app(module_sim: Simulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    directory = tmp_path_factory.mktemp("app")
    write_policy(directory)
    with updating_from_history(
        module_sim,
        directory,
        lambda a: set(groups(a)) == {SMALL, LARGE},
        "the agent's recommendation per node group",
    ) as a:
        yield a


def agents(sim: Simulator) -> list[dict[str, Any]]:
    api = sim.api_client()
    resp = client.CoreV1Api(api).list_namespaced_pod(
        "logging", label_selector="app=log-agent", _preload_content=False
    )
    api.close()
    return [
        p for p in json.loads(raw_body(resp))["items"] if not p["metadata"].get("deletionTimestamp")
    ]


def node_types(sim: Simulator) -> dict[str, str]:
    api = sim.api_client()
    nodes = client.CoreV1Api(api).list_node().items
    api.close()
    return {n.metadata.name: n.metadata.labels[TYPE] for n in nodes}


def requests_of(pod: dict[str, Any]) -> tuple[int, int]:
    r = pod["spec"]["containers"][0]["resources"]["requests"]
    return amount("cpu", r["cpu"]), amount("memory", r["memory"])


def within(value: tuple[int, int], group: dict[str, Any]) -> bool:
    """Requests inside the group's recommended range: what the updater leaves as it is."""
    lo, hi = group["lowerBound"], group["upperBound"]
    return all(
        amount(r, lo[r]) <= v <= amount(r, hi[r])
        for r, v in zip(("cpu", "memory"), value, strict=True)
    )


def sized_by_group(sim: Simulator, app: AppProcess) -> bool:
    """One agent on each node, every one sized within its node group's range."""
    types, pods, by_group = node_types(sim), agents(sim), groups(app)
    if sorted(p["spec"].get("nodeName") or "" for p in pods) != sorted(types):
        return False
    return all(within(requests_of(p), by_group[types[p["spec"]["nodeName"]]]) for p in pods)


def evictions(app: AppProcess) -> list[str]:
    e = sa.create_engine(f"sqlite:///{app.log_path.parent / 'rightsizer.db'}")
    with e.connect() as conn:
        rows = conn.execute(
            sa.text("SELECT object_ref FROM audit_events WHERE action = 'evict' ORDER BY id")
        ).all()
    e.dispose()
    return [r[0] for r in rows]


def test_a_daemonset_on_two_node_types_gets_two_sizes(
    module_sim: Simulator, app: AppProcess
) -> None:
    by_group = groups(app)
    small, large = (
        (amount("cpu", g["target"]["cpu"]), amount("memory", g["target"]["memory"]))
        for g in (by_group[SMALL], by_group[LARGE])
    )
    # the large nodes' agents use 4x the CPU and 3x the memory: so do their recommendations
    assert large[0] > 3 * small[0] and large[1] > 2.5 * small[1]
    wait_for(
        lambda: sized_by_group(module_sim, app),
        180,
        "every agent sized within its node group's range",
    )
    after = agents(module_sim)
    assert all(requests_of(p) != (100, 256 * 2**20) for p in after)  # none kept its old size
    # the updater replaced each once: the webhook sized every new pod from its node's group (none
    # got the DaemonSet-wide size, which the updater would have replaced again). An eviction's
    # audit row is written when the updater reads its answer, which may come after the
    # DaemonSet controller has already replaced the pod (the full CI run saw 3 rows here)
    wait_for(lambda: len(evictions(app)) >= 4, 30, "the four evictions' audit rows")
    assert len(evictions(app)) == 4
    assert all(ref.startswith("logging/log-agent-") for ref in evictions(app))
    for p in after:  # the DaemonSet controller named the node in the pod's affinity
        term = p["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]
        [field] = term["nodeSelectorTerms"][0]["matchFields"]
        assert field["values"] == [p["spec"]["nodeName"]]
    # kubectl sees the same: two node types, two sizes, the large one over three times the small
    out = run_kubectl(
        module_sim,
        "get",
        "pods",
        "-n",
        "logging",
        "-o",
        "custom-columns=NODE:.spec.nodeName,CPU:.spec.containers[0].resources.requests.cpu",
        "--no-headers",
    ).stdout
    by_type: dict[str, set[int]] = {}
    types = node_types(module_sim)
    for line in out.splitlines():
        node, cpu = line.split()
        by_type.setdefault(types[node], set()).add(amount("cpu", cpu))
    assert set(by_type) == {SMALL, LARGE}
    assert min(by_type[LARGE]) > 3 * max(by_type[SMALL])


def test_the_api_cli_and_dashboard_show_the_groups(module_sim: Simulator, app: AppProcess) -> None:
    doc = agent_recommendation(app)
    assert doc is not None and doc["nodeGroupLabel"] == TYPE
    [c] = doc["containers"]
    by_group = {g["nodeGroup"]: g for g in c["nodeGroups"]}
    assert set(by_group) == {SMALL, LARGE}
    # a day of history from 2 pods each, a sample every 5 minutes; the pods the recommender
    # last saw with metrics (a new pod reports none until the clock moves: the simulator's stands)
    assert all(g["sampleCount"] >= 2 * 280 and 1 <= g["pods"] <= 2 for g in by_group.values())
    assert all(g["reason"].startswith("vpa: ") for g in by_group.values())
    env = {**os.environ, "RIGHTSIZER_SERVER": app.url, "RIGHTSIZER_CACERT": str(app.verify)}
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", "recommendations", "list", "-n", "logging"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = out.splitlines()
    assert lines[0].split()[-2:] == ["NODE", "GROUP"]  # a last column, as a DaemonSet is grouped
    rows = [line.split() for line in lines[1:]]
    assert [r[-1] for r in rows] == ["*", f"{TYPE}={LARGE}", f"{TYPE}={SMALL}"]
    assert [r[:3] for r in rows] == [["logging", "DaemonSet/log-agent", "agent"]] * 3
    assert rows[1][3] == by_group[LARGE]["target"]["cpu"]
    page = requests.get(
        f"{app.url}/dashboard/workloads/logging/DaemonSet/log-agent", verify=app.verify, timeout=10
    )
    assert page.status_code == 200
    assert 'id="node-groups"' in page.text and f'data-group="{LARGE}"' in page.text
