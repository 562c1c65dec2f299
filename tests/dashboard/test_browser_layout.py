"""The dashboard in headless Chromium at 1400 and 1920 px over a simulated cluster as the demo
has it: 2 days of usage history loaded from the simulator's Prometheus by the recommender job, a
frontend whose three pods ask for 1Gi, 250Mi and 250Mi (two were resized in place), a checkout
that asks for less than it uses, a scaler and a long audit message.

Asserted: no page scrolls sideways and no table overflows its frame; the scalers' status columns
and whole audit messages are on screen; savings are over the real pods (as read with the
official client), and the risk list names the under-provisioned container; the history chart has
a point an hour of the loaded history; the YAML snippets hold the recommendation and a valid
policy, and Copy puts them on the clipboard. Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from flask import Flask
from kubernetes import client as k8s

from app.core.quantity import amount
from app.documents.policy import parse_policy
from app.jobs.history import PrometheusHistory
from app.kube.cluster import ClusterView
from app.simulator.simulator import Simulator
from app.store.extensions import db
from app.store.models import AuditEvent, Scaler
from tests.support.prometheus import history_settings
from tests.support.recommender_runs import make_job, step
from tests.support.screenshots import shot
from tests.support.tokens import TOKENS

pytestmark = pytest.mark.browser

DAYS = 2
WIDTHS = (1400, 1920)
SCENARIO: dict[str, Any] = {
    "historyDays": DAYS,
    "nodes": [{"namePrefix": "worker", "count": 3, "cpu": "8", "memory": "32Gi"}],
    "namespaces": [{"name": "shop"}],
    "workloads": [
        {
            "kind": "Deployment",
            "namespace": "shop",
            "name": "frontend",
            "replicas": 3,
            "containers": [
                {
                    "name": "web",
                    "image": "nginx:1.27",
                    "requests": {"cpu": "1", "memory": "1Gi"},
                    "limits": {"cpu": "2", "memory": "2Gi"},
                    "usage": {
                        "cpu": {"base": 0.08, "daily": 0.6, "noise": 0.15},
                        "memory": {"base": "150Mi", "noise": 0.02},
                    },
                }
            ],
        },
        {
            "kind": "Deployment",
            "namespace": "shop",
            "name": "checkout",
            "replicas": 2,
            "containers": [
                {
                    "name": "app",
                    "image": "example.com/shop/checkout:2.3.1",
                    "requests": {"cpu": "250m", "memory": "256Mi"},
                    "usage": {
                        "cpu": {"base": 0.3, "daily": 0.4, "noise": 0.1},
                        "memory": {"base": "300Mi", "noise": 0.03},
                    },
                }
            ],
        },
    ],
}
LONG_MESSAGE = (
    "resize (the pod's requests are far from the recommendation): "
    + " ".join(f"web-{i}[cpu=1, memory=1Gi] -> web-{i}[cpu=120m, memory=196Mi]" for i in range(6))
    + " END-OF-MESSAGE"
)


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return SCENARIO


@pytest.fixture
def app_config(token_file: Path, sim: Simulator) -> dict[str, object]:
    return {"AUTH_TOKEN_FILE": str(token_file), "KUBECONFIG": sim.kubeconfig_path}


def pod_requests(sim: Simulator, name: str) -> list[tuple[int, int]]:
    """(cpu millicores, memory bytes) of each live pod of shop/`name`, as the API server has
    them, read with the official client."""
    core = k8s.CoreV1Api(sim.api_client())
    out = []
    for p in core.list_namespaced_pod("shop").items:
        if not p.metadata.name.startswith(f"{name}-") or p.metadata.deletion_timestamp:
            continue
        req = p.spec.containers[0].resources.requests
        out.append((amount("cpu", req["cpu"]), amount("memory", req["memory"])))
    return sorted(out)


@pytest.fixture
def demo(app: Flask, sim: Simulator, cluster: ClusterView) -> dict[str, Any]:
    """Two of frontend's pods resized down in place, history loaded, a run of the recommender,
    a scaler that ran and a long audit message."""
    core = k8s.CoreV1Api(sim.api_client())
    frontend = sorted(
        p.metadata.name
        for p in core.list_namespaced_pod("shop").items
        if p.metadata.name.startswith("frontend-")
    )
    smaller = {"requests": {"cpu": "250m", "memory": "250Mi"}}
    for name in frontend[1:]:
        body = {"spec": {"containers": [{"name": "web", "resources": smaller}]}}
        core.patch_namespaced_pod_resize(name, "shop", body)
    job = make_job(app, cluster, sim)
    job.history = PrometheusHistory(history_settings(sim.url, 300.0, DAYS * 86400.0), clock=sim.now)
    step(sim, job)
    assert pod_requests(sim, "frontend") == [
        (250, 250 * 2**20),
        (250, 250 * 2**20),
        (1000, 2**30),
    ]
    db.session.add(
        Scaler(
            name="coredns",
            target_namespace="kube-system",
            target_kind="Deployment",
            target_name="coredns",
            params={"linear": {"coresPerReplica": 256, "nodesPerReplica": 16, "min": 2}},
            enabled=True,
            last_proposed=3,
            last_applied=2,
            last_message="scaled from 2 to 3 replicas; 3 nodes, 24 cores schedulable",
        )
    )
    db.session.add(
        AuditEvent(
            actor="rightsizer/updater",
            action="resize",
            object_kind="Pod",
            object_ref="shop/frontend-1",
            message=LONG_MESSAGE,
            details={"workload": "shop/Deployment/frontend"},
        )
    )
    db.session.commit()
    return {"frontend": frontend}


@pytest.fixture
def page(browser: Any, live_url: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": WIDTHS[0], "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_url)
    context.add_cookies(
        [{"name": "rightsizer_token", "value": TOKENS["reader"], "url": f"{live_url}/dashboard/"}]
    )
    yield context.new_page()
    context.close()


def api(live_url: str, path: str) -> Any:
    headers = {"Authorization": f"Bearer {TOKENS['reader']}"}
    resp = requests.get(f"{live_url}/api/v1{path}", headers=headers, timeout=10)
    assert resp.status_code == 200, resp.text
    return resp.json()


def overflow(page: Any) -> dict[str, Any]:
    """What sticks out sideways: the page itself, and any table wider than its frame."""
    return dict(
        page.evaluate(
            """() => ({
            page: document.documentElement.scrollWidth - window.innerWidth,
            tables: [...document.querySelectorAll('.table-wrap')]
                .filter(w => w.scrollWidth > w.clientWidth + 1)
                .map(w => (w.querySelector('table') || {}).id),
        })"""
        )
    )


PAGES = (
    ("overview", "/dashboard/"),
    ("workloads", "/dashboard/workloads"),
    ("workload", "/dashboard/workloads/shop/Deployment/frontend"),
    ("scalers", "/dashboard/scalers"),
    ("nodes", "/dashboard/nodes"),
    ("events", "/dashboard/events"),
)


@pytest.mark.parametrize("width", WIDTHS)
def test_no_page_scrolls_sideways_and_every_column_is_on_screen(
    demo: dict[str, Any], page: Any, live_url: str, database_url: str, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    for name, path in PAGES:
        page.goto(f"{live_url}{path}")
        shot(page, f"{name}-{width}", database_url)
        assert page.locator("h1").count() == 1, name
        assert overflow(page) == {"page": 0, "tables": []}, name
    # the scalers' status columns are on screen, not behind a scroll bar
    page.goto(f"{live_url}/dashboard/scalers")
    for th in ("Computed", "Applied", "Last run (UTC)", "Message"):
        box = page.locator("#scalers th", has_text=th).bounding_box()
        assert box is not None and box["x"] + box["width"] <= width, th
    row = page.locator("tr.scaler[data-name='coredns']")
    assert row.locator("td.computed").inner_text() == "3"
    assert row.locator("td.applied").inner_text() == "2"
    # the audit message is there whole: wrapped, not cut
    page.goto(f"{live_url}/dashboard/events")
    cell = page.locator("tr.event td.message", has_text="END-OF-MESSAGE")
    assert cell.count() == 1
    assert LONG_MESSAGE in cell.inner_text()
    assert cell.evaluate("c => c.scrollWidth <= c.clientWidth")
    box = cell.bounding_box()
    assert box is not None and box["x"] + box["width"] <= width
    cell.locator("summary").click()
    assert "shop/Deployment/frontend" in cell.locator("pre").inner_text()


def test_savings_are_over_the_real_pods_and_under_provisioning_is_a_risk(
    demo: dict[str, Any], page: Any, sim: Simulator, live_url: str, database_url: str
) -> None:
    pods = pod_requests(sim, "frontend")  # 1 core/1Gi, 250m/250Mi, 250m/250Mi
    item = api(live_url, "/recommendations/shop/Deployment/frontend")
    [c] = item["containers"]
    target = (amount("cpu", c["target"]["cpu"]), amount("memory", c["target"]["memory"]))
    want_cpu = sum(cpu - target[0] for cpu, _ in pods)
    want_memory = sum(memory - target[1] for _, memory in pods)
    # one pod's request (the most common, 250Mi) times 3 would say something else
    assert want_memory != 3 * (250 * 2**20 - target[1])

    page.goto(f"{live_url}/dashboard/workloads/shop/Deployment/frontend")
    row = page.locator("tr.container[data-name='web']")
    assert int(row.locator("td.savings-cpu").get_attribute("data-value")) == want_cpu
    assert int(row.locator("td.savings-memory").get_attribute("data-value")) == want_memory
    assert row.locator("td.current-memory").inner_text().startswith("250Mi ≠")  # pods differ
    # cores and GiB, the exact quantities in the titles
    assert "1.5 cores, 1.49 GiB" in row.locator("td.requested-all").inner_text()
    titles = row.locator("td.requested-all span.quantity").evaluate_all(
        "spans => spans.map(s => s.title)"
    )
    assert titles == ["1500m", "1524Mi"]
    shot(page, "workload-savings", database_url)

    page.goto(f"{live_url}/dashboard/workloads")
    frontend = page.locator("tr.workload[data-name='frontend']")
    assert int(frontend.locator("td.savings-memory").get_attribute("data-value")) == want_memory
    assert frontend.locator("td.savings-memory").inner_text() == f"{want_memory / 2**30:,.2f}"
    assert frontend.locator("td.pods").inner_text() == "3"
    # the same numbers as the API's estimatedSavings
    assert item["estimatedSavings"] == {
        "cpuCores": round(want_cpu / 1000, 3),
        "memoryGiB": round(want_memory / 2**30, 3),
    }

    page.goto(f"{live_url}/dashboard/")
    waste = page.locator("#waste tr.waste[data-name='frontend']")
    assert int(waste.locator("td.savings-memory").get_attribute("data-value")) == want_memory
    checkout = api(live_url, "/recommendations/shop/Deployment/checkout")["containers"][0]
    lacking = 2 * amount("cpu", checkout["target"]["cpu"]) - sum(
        cpu for cpu, _ in pod_requests(sim, "checkout")
    )
    assert lacking > 0  # it uses more CPU than its 250m
    risk = page.locator("#risk tr.risk[data-name='checkout'][data-resource='cpu']")
    assert int(risk.locator("td.lacking").get_attribute("data-value")) == lacking
    assert page.locator("#risk tr.risk[data-name='frontend']").count() == 0
    shot(page, "overview-waste-and-risk", database_url)


def test_the_history_chart_has_a_point_an_hour_of_the_loaded_history(
    demo: dict[str, Any], page: Any, live_url: str, database_url: str
) -> None:
    history = api(live_url, "/workloads/shop/Deployment/frontend/history")
    [web] = history["containers"]
    points = web["points"]
    assert DAYS * 24 - 2 <= len(points) <= DAYS * 24 + 1  # not one point: the replay's hours
    assert all("usage" in p for p in points)

    page.goto(f"{live_url}/dashboard/workloads/shop/Deployment/frontend")
    chart = page.locator(".history-chart[data-container='web']")
    # the history's points, and (marked live) the recommendation of the last run when newer
    assert chart.locator(".history-cpu circle.point.target:not(.live)").count() == len(points)
    assert chart.locator(".history-memory circle.point.target:not(.live)").count() == len(points)
    live = chart.locator(".history-cpu circle.point.target.live")
    if live.count():
        now = api(live_url, "/recommendations/shop/Deployment/frontend")["containers"][0]
        assert int(live.get_attribute("data-value")) == amount("cpu", now["target"]["cpu"])
    for cls in ("usage-p50", "usage-p90", "requested", "target"):
        line = chart.locator(f".history-cpu polyline.{cls}")
        assert line.count() == 1, cls
        assert int(line.get_attribute("data-points")) == len(points), cls
    assert page.locator(".history-points").first.get_attribute("data-value") == str(len(points))
    shown = [
        int(v)
        for v in chart.locator(".history-cpu circle.point.target:not(.live)").evaluate_all(
            "cs => cs.map(c => c.dataset.value)"
        )
    ]
    assert shown == [amount("cpu", p["target"]["cpu"]) for p in points]
    shot(page, "workload-history", database_url)


def test_the_yaml_snippets_hold_the_recommendation_and_a_policy(
    demo: dict[str, Any], page: Any, live_url: str, database_url: str
) -> None:
    item = api(live_url, "/recommendations/shop/Deployment/frontend")
    target = item["containers"][0]["target"]
    page.goto(f"{live_url}/dashboard/workloads/shop/Deployment/frontend")
    resources = page.locator("pre.snippet.resources[data-container='web']").inner_text()
    assert resources == (
        f"resources:\n  requests:\n    cpu: {target['cpu']}\n    memory: {target['memory']}\n"
    )
    assert yaml.safe_load(resources) == {
        "resources": {"requests": {"cpu": target["cpu"], "memory": target["memory"]}}
    }
    assert target["memory"].endswith("Mi")  # a quantity a person reads, not bytes
    text = page.locator("pre.snippet.policy").inner_text()
    policy = parse_policy(yaml.safe_load(text))  # what `rightsizer policy apply` accepts
    assert (policy.namespace, policy.target_kind, policy.target_name) == (
        "shop",
        "Deployment",
        "frontend",
    )
    assert policy.update_mode == "Initial"
    assert [c.container_name for c in policy.container_policies] == ["web"]
    page.locator("button.copy[data-copy='resources-1']").click()
    page.wait_for_function(
        "() => document.querySelector(\"button[data-copy='resources-1']\").textContent === 'Copied'"
    )
    assert page.evaluate("navigator.clipboard.readText()") == resources
