"""End to end, VPA 1.7's update fields (issue 18): `rightsizer serve` with its webhook against the
simulated cluster, learning the bundled scenario's 8 days of history, its updater running every
second. An upscale-only policy leaves a downscale alone while another policy's pods are updated;
an InPlace policy resizes a single-replica Deployment without any eviction; a CPU startup boost is
given by the webhook to a new pod and removed by the updater, in place."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from kubernetes import client

from app.core.quantity import amount
from app.core.sizing.boost import BOOST_ANNOTATION
from app.simulator.simulator import Simulator
from tests.support.json_bodies import raw_body
from tests.support.processes import AppProcess, recommendations, updating_from_history, wait_for

pytestmark = pytest.mark.e2e

UPSCALE_ONLY = [{"resources": ["cpu", "memory"], "changeRequirement": "TargetHigherThanRequests"}]


@pytest.fixture(scope="module")
def sim_namespaces() -> tuple[str, ...]:
    return ("rightsizer",)


@pytest.fixture(scope="module")
def app(module_sim: Simulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    with updating_from_history(
        module_sim,
        tmp_path_factory.mktemp("app"),
        lambda a: len(recommendations(a)) >= 10,
        "recommendations from history",
    ) as a:
        yield a


def engine(app: AppProcess) -> sa.Engine:
    return sa.create_engine(f"sqlite:///{app.log_path.parent / 'rightsizer.db'}")


def add_policy(app: AppProcess, ns: str, target: str, mode: str, **options: Any) -> None:
    """A policy row for Deployment `target`, its update fields as written (update_options)."""
    e = engine(app)
    with e.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO policies (name, namespace, target_kind, target_name, update_mode, "
                "container_policies, update_options, version, created_at, updated_at) VALUES "
                "(:n, :ns, 'Deployment', :n, :m, '[]', :o, 1, CURRENT_TIMESTAMP, "
                "CURRENT_TIMESTAMP)"
            ),
            {"n": target, "ns": ns, "m": mode, "o": json.dumps(options) if options else None},
        )
    e.dispose()


def set_options(app: AppProcess, ns: str, name: str, **options: Any) -> None:
    e = engine(app)
    with e.begin() as conn:
        conn.execute(
            sa.text(
                "UPDATE policies SET update_options = :o, version = version + 1, "
                "updated_at = CURRENT_TIMESTAMP WHERE namespace = :ns AND name = :n"
            ),
            {"o": json.dumps(options), "ns": ns, "n": name},
        )
    e.dispose()


def audit(app: AppProcess) -> list[tuple[str, str, str, dict[str, Any]]]:
    e = engine(app)
    with e.connect() as conn:
        rows = conn.execute(
            sa.text("SELECT action, object_ref, message, details FROM audit_events ORDER BY id")
        ).all()
    e.dispose()
    return [(r[0], r[1], r[2], json.loads(r[3]) if isinstance(r[3], str) else r[3]) for r in rows]


def pods(sim: Simulator, ns: str, label: str) -> list[dict[str, Any]]:
    api = sim.api_client()
    resp = client.CoreV1Api(api).list_namespaced_pod(
        ns, label_selector=f"app={label}", _preload_content=False
    )
    api.close()
    return [
        p for p in json.loads(raw_body(resp))["items"] if not p["metadata"].get("deletionTimestamp")
    ]


def runs(app: AppProcess) -> int:
    return app.log().count("updater run:")


def cpu(p: dict[str, Any]) -> str:
    return str(p["spec"]["containers"][0]["resources"]["requests"]["cpu"])


def test_an_upscale_only_policy_leaves_a_downscale_alone(
    module_sim: Simulator, app: AppProcess
) -> None:
    catalog = {p["metadata"]["uid"] for p in pods(module_sim, "shop", "catalog")}
    etl = {p["metadata"]["uid"] for p in pods(module_sim, "data", "etl-worker")}
    # catalog asks for five times the CPU it uses: only a downscale would change it
    add_policy(app, "shop", "catalog", "Recreate", evictionRequirements=UPSCALE_ONLY)
    add_policy(app, "data", "etl-worker", "Recreate")  # the same updater, no requirement
    wait_for(
        lambda: not etl & {p["metadata"]["uid"] for p in pods(module_sim, "data", "etl-worker")},
        90,
        "every etl-worker pod replaced",
    )
    start = runs(app)
    wait_for(lambda: runs(app) >= start + 5, 30, "five more updater runs")
    assert {p["metadata"]["uid"] for p in pods(module_sim, "shop", "catalog")} == catalog
    assert not [a for a in audit(app) if a[1].startswith("shop/catalog")]


def test_in_place_resizes_a_single_replica_deployment_without_any_eviction(
    module_sim: Simulator, app: AppProcess
) -> None:
    [before] = pods(module_sim, "data", "kafka-connect")  # 1 replica: below minReplicas 2
    add_policy(app, "data", "kafka-connect", "InPlace", inPlaceSkipDisruptionBudget=True)
    wait_for(
        lambda: [a for a in audit(app) if a[0] == "resize" and "kafka-connect" in a[1]],
        60,
        "the kafka-connect pod resized",
    )
    [after] = pods(module_sim, "data", "kafka-connect")
    assert after["metadata"]["uid"] == before["metadata"]["uid"]  # the same pod
    target = recommendations(app)[("data", "Deployment", "kafka-connect", "connect")]["target"]
    assert cpu(after) == target["cpu"] != cpu(before)
    restarts = [
        s["restartCount"] for p in (before, after) for s in p["status"]["containerStatuses"]
    ]
    assert restarts[0] == restarts[1]
    assert not [a for a in audit(app) if a[0] == "evict" and "kafka-connect" in a[1]]


def test_a_startup_boost_is_applied_then_removed(module_sim: Simulator, app: AppProcess) -> None:
    boost = {"cpu": {"type": "Factor", "factor": 3, "durationSeconds": 3600}}
    add_policy(app, "shop", "recommender", "Initial", startupBoost=boost)
    old = pods(module_sim, "shop", "recommender")[0]
    start = runs(app)  # the webhook reloads policies every second: give it a few
    wait_for(lambda: runs(app) >= start + 3, 30, "three updater runs")
    api = module_sim.api_client()
    client.CoreV1Api(api).delete_namespaced_pod(old["metadata"]["name"], "shop")
    api.close()  # its ReplicaSet creates a new pod, which the webhook sizes and boosts
    new = wait_for(
        lambda: [
            p
            for p in pods(module_sim, "shop", "recommender")
            if BOOST_ANNOTATION in (p["metadata"].get("annotations") or {})
        ],
        60,
        "a new pod with a startup boost",
    )[0]
    unboosted = json.loads(new["metadata"]["annotations"][BOOST_ANNOTATION])["model"]
    base = unboosted["requests"]["cpu"]
    target = recommendations(app)[("shop", "Deployment", "recommender", "model")]["target"]
    assert base == target["cpu"]  # what the webhook sized it to, without the boost
    assert amount("cpu", cpu(new)) == 3 * amount("cpu", base)
    # Ready for an hour is far off: the updater leaves the boost on, and the pod alone.
    start = runs(app)
    wait_for(lambda: runs(app) >= start + 3, 30, "three more updater runs")
    [still] = [
        p
        for p in pods(module_sim, "shop", "recommender")
        if p["metadata"]["uid"] == new["metadata"]["uid"]
    ]
    assert cpu(still) == cpu(new)
    set_options(
        app, "shop", "recommender", startupBoost={"cpu": {**boost["cpu"], "durationSeconds": 0}}
    )

    def unboosted_pod() -> dict[str, Any] | None:
        for p in pods(module_sim, "shop", "recommender"):
            if p["metadata"]["uid"] == new["metadata"]["uid"] and BOOST_ANNOTATION not in (
                p["metadata"].get("annotations") or {}
            ):
                return p
        return None

    done = wait_for(unboosted_pod, 60, "the boost removed")
    assert cpu(done) == base  # resized in place back to what the webhook sized it to
    [row] = [
        a for a in audit(app) if a[0] == "resize" and a[1] == f"shop/{new['metadata']['name']}"
    ]
    assert row[3]["boost"] == "removed" and "startup boost removed" in row[2]
