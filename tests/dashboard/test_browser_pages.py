"""The scalers, nodes and events pages in headless Chromium, seeded with data, against the API.

The app reads a simulated cluster (the nodes page) through its kubeconfig; the numbers each page
shows are compared with what the REST API (scalers, events) and the Kubernetes API (nodes: the
official client against the simulator) answer for the same data.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest
import requests
from flask import Flask
from kubernetes import client as k8s
from sqlalchemy import update

from app.core.placement.spread import SpreadPoint
from app.core.placement.table import LevelTable, PlacementOptions
from app.core.placement.windows import NodeLevel as SavedLevel
from app.core.quantity import amount as quantity_amount
from app.dashboard import nodes
from app.simulator.simulator import Simulator
from app.store.extensions import db
from app.store.models import AuditEvent, Scaler
from app.store.node_levels import save_node_levels
from app.store.node_spread import record_spread
from tests.support.screenshots import shot
from tests.support.tokens import TOKENS

pytestmark = pytest.mark.browser
GI = 1 << 30

CLUSTER: dict[str, Any] = {
    "nodes": [
        {"namePrefix": "small", "count": 2, "cpu": "4", "memory": "16Gi"},
        {"namePrefix": "big", "count": 1, "cpu": "16", "memory": "64Gi"},
    ],
    "namespaces": [{"name": "shop"}],
    "workloads": [
        {
            "kind": "Deployment",
            "namespace": "shop",
            "name": f"web{i}",
            "replicas": 3,
            "containers": [
                {
                    "name": "app",
                    "image": "example.com/app:1",
                    "requests": {"cpu": f"{250 * (i + 1)}m", "memory": f"{256 * (i + 1)}Mi"},
                    "usage": {"cpu": {"base": 0.1 * (i + 1)}, "memory": {"base": "200Mi"}},
                }
            ],
        }
        for i in range(3)
    ],
}


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return CLUSTER


@pytest.fixture(scope="module")
def sim_warmup() -> float:
    """Metrics for every pod and node."""
    return 120


@pytest.fixture
def app_config(token_file: Path, sim: Simulator) -> dict[str, object]:
    return {"AUTH_TOKEN_FILE": str(token_file), "KUBECONFIG": sim.kubeconfig_path}


@pytest.fixture
def api(live_url: str) -> requests.Session:
    s = requests.Session()
    s.headers["Authorization"] = f"Bearer {TOKENS['admin']}"
    return s


@pytest.fixture
def page(browser: Any, live_url: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.add_cookies(
        [{"name": "rightsizer_token", "value": TOKENS["reader"], "url": f"{live_url}/dashboard/"}]
    )
    yield context.new_page()
    context.close()


def test_scalers_page_shows_the_apis_computed_and_applied_replicas(
    app: Flask, api: requests.Session, page: Any, live_url: str, database_url: str
) -> None:
    runs = (("coredns", 5, 4), ("metrics", 2, 2), ("fresh", None, None))
    for name, _, _ in runs:
        doc: dict[str, Any] = {
            "name": name,
            "target": {"namespace": "kube-system", "kind": "Deployment", "name": name},
            "params": {"linear": {"coresPerReplica": 8, "nodesPerReplica": 2, "min": 1}},
        }
        assert api.post(f"{live_url}/api/v1/scalers", json=doc, timeout=10).status_code == 201
    for name, proposed, applied in runs:
        if proposed is not None:  # what the scaler job's last run recorded
            db.session.execute(
                update(Scaler)
                .where(Scaler.name == name)
                .values(
                    last_proposed=proposed,
                    last_applied=applied,
                    last_run_at=datetime.now(UTC),
                    last_message=f"proposed {proposed}",
                )
            )
    db.session.commit()
    items = api.get(f"{live_url}/api/v1/scalers", timeout=10).json()["items"]
    assert len(items) == 3

    page.goto(f"{live_url}/dashboard/scalers")
    rows = page.locator("tr.scaler")
    assert rows.count() == len(items)
    for s in items:
        row = page.locator(f"tr.scaler[data-name='{s['name']}']")
        computed = row.locator("td.computed").get_attribute("data-value")
        applied = row.locator("td.applied").get_attribute("data-value")
        as_int = lambda v: int(v) if v else None  # noqa: E731
        assert as_int(computed) == s["status"]["lastProposed"]
        assert as_int(applied) == s["status"]["lastApplied"]
    assert page.locator("tr.scaler[data-name='fresh'] td.computed").inner_text() == "\u2013"
    shot(page, "scalers-seeded", database_url)


def test_nodes_page_shows_the_clusters_requests_usage_and_allocatable(
    app: Flask, sim: Simulator, page: Any, live_url: str, database_url: str
) -> None:
    nodes._cache = None  # another test's cluster must not be served from this process's cache
    core = k8s.CoreV1Api(sim.api_client())
    custom = k8s.CustomObjectsApi(sim.api_client())
    expected: dict[str, dict[str, int]] = {}
    for n in core.list_node().items:
        alloc = n.status.allocatable
        expected[n.metadata.name] = {
            "allocatable-cpu": quantity_amount("cpu", alloc["cpu"]),
            "allocatable-memory": quantity_amount("memory", alloc["memory"]),
            "requested-cpu": 0,
            "requested-memory": 0,
        }
    for p in core.list_pod_for_all_namespaces().items:
        if p.status.phase in ("Succeeded", "Failed") or not p.spec.node_name:
            continue
        for c in p.spec.containers:
            req = (c.resources and c.resources.requests) or {}
            e = expected[p.spec.node_name]
            e["requested-cpu"] += quantity_amount("cpu", req.get("cpu", "0"))
            e["requested-memory"] += quantity_amount("memory", req.get("memory", "0"))
    listed = custom.list_cluster_custom_object("metrics.k8s.io", "v1beta1", "nodes")
    usage = cast(dict[str, Any], listed)["items"]
    for m in usage:
        e = expected[m["metadata"]["name"]]
        e["used-cpu"] = quantity_amount("cpu", m["usage"]["cpu"])
        e["used-memory"] = quantity_amount("memory", m["usage"]["memory"])
    assert len(expected) == 3 and sum(e["requested-cpu"] for e in expected.values()) > 0
    assert all("used-cpu" in e for e in expected.values())

    # the levels the leader would have saved from these NodeMetrics (one sample: every window
    # alike), so the page shows the extender's scores for this cluster
    saved = [
        SavedLevel(
            name,
            e["allocatable-cpu"],
            e["allocatable-memory"],
            (e["used-cpu"] / e["allocatable-cpu"],) * 3,
            (e["used-memory"] / e["allocatable-memory"],) * 3,
            1000.0,
        )
        for name, e in expected.items()
    ]
    save_node_levels(db.session, saved, 0.0)
    db.session.commit()
    scores = LevelTable(saved, PlacementOptions()).scores([n.name for n in saved], (0, 0))

    page.goto(f"{live_url}/dashboard/nodes")
    assert page.locator("#no-nodes").count() == 0
    for level, score in zip(saved, scores, strict=True):
        cell = page.locator(f"tr.node[data-name='{level.name}'] td.extender-score")
        assert int(cell.get_attribute("data-value") or "-1") == score
    assert page.locator("#window-spread tr.window").count() == 3
    rows = page.locator("tr.node")
    assert sorted(rows.nth(i).get_attribute("data-name") for i in range(rows.count())) == sorted(
        expected
    )
    for name, want in expected.items():
        row = page.locator(f"tr.node[data-name='{name}']")
        shown = {cls: int(row.locator(f"td.{cls}").get_attribute("data-value")) for cls in want}
        assert shown == want, name
        # in percent of allocatable, with a bar as wide
        for resource in ("cpu", "memory"):
            cell = row.locator(f"td.requested-{resource}")
            percent = 100 * want[f"requested-{resource}"] / want[f"allocatable-{resource}"]
            assert float(cell.get_attribute("data-percent")) == pytest.approx(percent, abs=0.05)
            assert cell.locator(".percent").inner_text() == f"{percent:.0f}%"
            bar = cell.locator(".meter .fill").evaluate(
                "f => f.getBoundingClientRect().width"
                " / f.parentElement.getBoundingClientRect().width"
            )
            assert bar == pytest.approx(min(percent, 100) / 100, abs=0.01)
    levels = [e["requested-cpu"] / e["allocatable-cpu"] for e in expected.values()]
    shown_spread = float(page.get_attribute("#request-spread", "data-value") or "nan")
    assert shown_spread == pytest.approx(max(levels) - min(levels))
    # unevenness of use: the gap between the most and least used node, per resource
    for resource in ("cpu", "memory"):
        used = [e[f"used-{resource}"] / e[f"allocatable-{resource}"] for e in expected.values()]
        card = page.locator(f".card.unevenness[data-resource='{resource}']")
        assert card.is_visible()
        value = float(card.locator(".spread").get_attribute("data-value") or "nan")
        assert value == pytest.approx(max(used) - min(used))
        assert card.locator(".spread").inner_text() == f"{100 * (max(used) - min(used)):.0f} points"
        # the used bar's line sits at the requested share
        for name, e in expected.items():
            mark = page.locator(f"tr.node[data-name='{name}'] td.used-{resource} .mark")
            share = 100 * e[f"requested-{resource}"] / e[f"allocatable-{resource}"]
            assert float(mark.get_attribute("data-percent") or "nan") == pytest.approx(
                share, abs=0.05
            )
    assert page.locator("#unevenness-explained").is_visible()
    shot(page, "nodes-seeded", database_url)


def test_nodes_page_charts_the_clusters_spread_over_time(
    app: Flask, sim: Simulator, api: requests.Session, page: Any, live_url: str, database_url: str
) -> None:
    """The points the leader recorded (two days, every 30 minutes: the CPU spread falling from
    40 to 10 points as water-level placement evens the nodes out), as the API lists them, one
    dot per point on each line, higher on the chart for a larger spread."""
    nodes._cache = None
    saved = [
        SavedLevel("small-0", 4000, 16 * GI, (0.6,) * 3, (0.3,) * 3, 1000.0),
        SavedLevel("big-0", 16000, 64 * GI, (0.2,) * 3, (0.2,) * 3, 1000.0),
    ]
    save_node_levels(db.session, saved, 0.0)
    t0 = 1_780_000_000.0
    for i in range(96):
        cpu = 0.4 - 0.3 * i / 95
        record_spread(
            db.session, SpreadPoint(3, cpu, cpu / 3, 0.15, 0.05, 0.5 + cpu), t0 + 1800 * i
        )
    db.session.commit()
    items = api.get(f"{live_url}/api/v1/nodes/spread", timeout=10).json()["items"]
    assert len(items) == 96

    page.goto(f"{live_url}/dashboard/nodes")
    chart = page.locator("#spread-chart")
    assert chart.is_visible()
    for resource, key in (("cpu", "cpuSpread"), ("memory", "memorySpread")):
        line = chart.locator(f"polyline.spread[data-resource='{resource}']")
        assert line.get_attribute("data-points") == "96"
        dots = chart.locator(f"circle.spread-point[data-resource='{resource}']")
        shown = [float(v) for v in dots.evaluate_all("ds => ds.map(d => d.dataset.value)")]
        assert shown == pytest.approx([p[key] for p in items])
    cpu = chart.locator("circle.spread-point[data-resource='cpu']")
    heights = cpu.evaluate_all("ds => ds.map(d => d.getBoundingClientRect().top)")
    assert heights[0] < heights[-1]  # 40 points drawn above 10 (screen y grows downwards)
    assert page.locator("#spread-chart-explained").is_visible()
    assert page.locator("#unevenness-explained").is_visible()
    shot(page, "nodes-spread-chart", database_url)


def test_events_page_shows_the_apis_audit_trail_and_filters(
    app: Flask, api: requests.Session, page: Any, live_url: str, database_url: str
) -> None:
    policy: dict[str, Any] = {
        "name": "web",
        "namespace": "shop",
        "target": {"kind": "Deployment", "name": "web0"},
        "updateMode": "Off",
    }
    assert api.post(f"{live_url}/api/v1/policies", json=policy, timeout=10).status_code == 201
    for i in range(3):  # what the updater and the scaler record
        db.session.add(
            AuditEvent(
                actor="rightsizer/updater",
                action="evict",
                object_kind="Pod",
                object_ref=f"shop/web0-{i}",
                message=f"evict {i}",
            )
        )
    db.session.add(
        AuditEvent(
            actor="rightsizer/scaler",
            action="scale",
            object_kind="Deployment",
            object_ref="kube-system/coredns",
            message="scaled from 2 to 3 replicas",
        )
    )
    db.session.commit()

    def rows_shown() -> list[tuple[str, str, str, str]]:
        rows = page.locator("tr.event")
        return [
            (
                rows.nth(i).locator("td.actor").inner_text(),
                rows.nth(i).locator("td.action").inner_text(),
                rows.nth(i).locator("td.object").get_attribute("data-kind") or "",
                rows.nth(i).locator("td.object").get_attribute("data-ref") or "",
            )
            for i in range(rows.count())
        ]

    def from_api(query: str = "") -> list[tuple[str, str, str, str]]:
        body = api.get(f"{live_url}/api/v1/events{query}", timeout=10).json()
        return [(e["actor"], e["action"], e["objectKind"], e["objectRef"]) for e in body["items"]]

    page.goto(f"{live_url}/dashboard/events")
    everything = from_api()
    assert len(everything) == 5
    assert everything[-1] == ("alice", "create", "Policy", "shop/web")  # the oldest, by the API
    assert rows_shown() == everything  # same events, same order (newest first)
    shot(page, "events-seeded", database_url)

    page.fill("input[name=action]", "evict")
    page.click("#apply-filter")
    page.wait_for_url("**action=evict**")
    evictions = from_api("?action=evict")
    assert len(evictions) == 3
    assert rows_shown() == evictions
    shot(page, "events-filtered", database_url)
