"""End to end, pod-level resources (issue 19): `rightsizer serve` with its webhook against the
simulated cluster (which validates pod-level resources as kube-apiserver does), the bundled
scenario's history loaded, its updater running every second. catalog's template is changed with
the real kubectl to share a pod-level budget (`spec.resources`, its container without requests of
its own); the rollout's new pods get the pod-level values of the recommendation, the container
keeps sharing, kube-apiserver accepts them, and the updater leaves them alone afterwards."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from kubernetes import client

from app.core.quantity import amount
from app.simulator.simulator import Simulator
from tests.support.json_bodies import raw_body
from tests.support.kubectl import run_kubectl
from tests.support.processes import AppProcess, recommendations, updating_from_history, wait_for

pytestmark = pytest.mark.e2e
BUDGET = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}}


@pytest.fixture(scope="module")
def sim_namespaces() -> tuple[str, ...]:
    return ("rightsizer",)


@pytest.fixture(scope="module")
def app(module_sim: Simulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    with updating_from_history(
        module_sim,
        tmp_path_factory.mktemp("app"),
        lambda a: ("shop", "Deployment", "catalog", "api") in recommendations(a),
        "a recommendation for catalog",
    ) as a:
        yield a


def add_policy(app: AppProcess, ns: str, target: str, mode: str) -> None:
    e = sa.create_engine(f"sqlite:///{app.log_path.parent / 'rightsizer.db'}")
    with e.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO policies (name, namespace, target_kind, target_name, update_mode, "
                "container_policies, version, created_at, updated_at) VALUES "
                "(:n, :ns, 'Deployment', :n, :m, '[]', 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            ),
            {"n": target, "ns": ns, "m": mode},
        )
    e.dispose()


def pods(sim: Simulator, ns: str, label: str) -> list[dict[str, Any]]:
    api = sim.api_client()
    resp = client.CoreV1Api(api).list_namespaced_pod(
        ns, label_selector=f"app={label}", _preload_content=False
    )
    api.close()
    return [
        p for p in json.loads(raw_body(resp))["items"] if not p["metadata"].get("deletionTimestamp")
    ]


def test_pods_sharing_a_pod_level_budget_get_it_sized(
    module_sim: Simulator, app: AppProcess
) -> None:
    add_policy(app, "shop", "catalog", "Recreate")
    patch = [
        {"op": "add", "path": "/spec/template/spec/resources", "value": BUDGET},
        {"op": "remove", "path": "/spec/template/spec/containers/0/resources"},
    ]
    run_kubectl(
        module_sim, "patch", "deployment", "catalog", "-n", "shop", "--type=json",
        "-p", json.dumps(patch),
    )  # fmt: skip

    def rolled_out() -> list[dict[str, Any]] | None:
        module_sim.settle()
        now = pods(module_sim, "shop", "catalog")
        shared = [p for p in now if "resources" in p["spec"]]
        return shared if len(shared) == len(now) == 2 else None

    new = wait_for(rolled_out, 90, "catalog rolled out with a pod-level budget", interval=1.0)
    target = recommendations(app)[("shop", "Deployment", "catalog", "api")]["target"]
    want_cpu, want_memory = amount("cpu", target["cpu"]), amount("memory", target["memory"])
    for p in new:
        assert "resources" not in p["spec"]["containers"][0] or not any(
            p["spec"]["containers"][0]["resources"].values()
        )  # the container keeps sharing the pod's budget
        level = p["spec"]["resources"]
        assert amount("cpu", level["requests"]["cpu"]) == want_cpu
        assert amount("memory", level["requests"]["memory"]) == want_memory
        assert amount("cpu", level["limits"]["cpu"]) == 2 * want_cpu  # the 1:2 of the template
        record = json.loads(p["metadata"]["annotations"]["rightsizer.io/updates"])
        assert set(record["pod"]) >= {"requests", "limits"}
    # kubectl reads them back as the API server stored them
    name = new[0]["metadata"]["name"]
    got = json.loads(run_kubectl(module_sim, "get", "pod", name, "-n", "shop", "-o", "json").stdout)
    assert got["spec"]["resources"] == new[0]["spec"]["resources"]
    # and the updater, which judges them by their pod-level values, leaves them alone
    uids = {p["metadata"]["uid"] for p in new}
    start = app.log().count("updater run:")
    wait_for(lambda: app.log().count("updater run:") >= start + 5, 30, "five more updater runs")
    assert {p["metadata"]["uid"] for p in pods(module_sim, "shop", "catalog")} == uids
