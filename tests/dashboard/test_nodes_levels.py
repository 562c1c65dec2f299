"""The nodes page's water levels from raw Node, Pod and NodeMetrics JSON."""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from app.core.quantity import amount as quantity_amount
from app.dashboard import nodes
from app.dashboard.nodes import NodeLevel, levels_from, unevenness, unevenness_of_use

NODES = [
    {"metadata": {"name": "b"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi"}}},
    {"metadata": {"name": "a"}, "status": {"allocatable": {"cpu": "2", "memory": "4Gi"}}},
]
PODS: list[dict[str, Any]] = [
    {
        "spec": {
            "nodeName": "a",
            "containers": [{"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}],
        }
    },
    {
        "spec": {
            "nodeName": "a",
            "containers": [{"resources": {}}, {"resources": {"requests": {"cpu": "1"}}}],
        }
    },
    {"spec": {"containers": [{"resources": {"requests": {"cpu": "9"}}}]}},  # pending: no node
]
METRICS = [{"metadata": {"name": "a"}, "usage": {"cpu": "250000000n", "memory": "512Mi"}}]


def test_levels_sum_requests_per_node_and_take_usage_from_metrics() -> None:
    a, b = levels_from(NODES, PODS, METRICS, quantity_amount)
    assert a == NodeLevel("a", 2000, 4 * 2**30, 1500, 2**30, 250, 512 * 2**20)
    assert b == NodeLevel("b", 4000, 8 * 2**30, 0, 0, None, None)
    assert unevenness([a, b]) == 0.75


def test_the_nodes_page_shows_shares_with_bars_and_explains_the_spread(
    app: Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = levels_from(NODES, PODS, METRICS, quantity_amount)
    monkeypatch.setattr(nodes, "node_levels", lambda: [a, b])
    html = client.get("/dashboard/nodes").get_data(as_text=True)
    row = html[html.index('data-name="a"') : html.index('data-name="b"')]
    # node a: 1500m of 2 cores requested, 250m used; 1Gi of 4Gi requested, 512Mi used
    cell = r'<td class="num level [^"]*" data-value="[^"]*" data-percent="([\d.]+)"'
    cells = re.findall(cell, row)
    assert cells == ["75.0", "12.5", "25.0", "12.5"]
    assert '<span class="percent">75%</span>' in row and 'style="width: 75.0%"' in row
    # under the bar, one unit a column; the exact quantities in its title
    assert "1.50 of 2.00 cores" in row and "1.00 of 4.00 GiB" in row
    assert 'title="1500m of 2"' in row and 'title="1Gi of 4Gi"' in row
    other = html[html.index('data-name="b"') :]
    assert "no metrics" in other
    spread = html[html.index('id="spread"') :]
    assert re.search(r'id="request-spread" data-value="0.75">75 percentage points<', spread)
    assert "the fullest node, a, has 75% of its CPU requested, the emptiest, b, 0%" in spread
    # the used bar marks the requested share
    used = row[row.index("used-cpu") :]
    assert 'class="mark" data-percent="75.0" style="left: 75.0%"' in used
    # one node with metrics: no unevenness of use, and the page says what it needs
    assert 'id="no-unevenness"' in html and "at least two nodes" in html


def level(
    name: str, cpu: int, used_cpu: int | None, memory: int, used_memory: int | None
) -> NodeLevel:
    return NodeLevel(name, cpu, memory, 0, 0, used_cpu, used_memory)


def test_unevenness_of_use_is_the_gap_between_the_hottest_and_coolest_node() -> None:
    levels = [
        level("a", 4000, 3000, 8 * 2**30, 2**30),  # cpu 75%, memory 12.5%
        level("b", 8000, 2000, 8 * 2**30, 4 * 2**30),  # 25%, 50%
        level("c", 2000, 1000, 4 * 2**30, 2**30),  # 50%, 25%
        level("d", 4000, None, 8 * 2**30, None),  # no metrics: left out
    ]
    cpu = unevenness_of_use(levels, "cpu")
    assert cpu is not None
    assert (cpu.hottest.name, cpu.coolest.name, cpu.count) == ("a", "b", 3)
    assert cpu.value == pytest.approx(0.5) and (cpu.high, cpu.low) == (0.75, 0.25)
    assert cpu.deviation == pytest.approx(((0.25**2 + 0.25**2 + 0) / 3) ** 0.5)
    memory = unevenness_of_use(levels, "memory")
    assert memory is not None and memory.value == pytest.approx(0.375)
    assert (memory.hottest.name, memory.coolest.name) == ("b", "a")
    assert unevenness_of_use(levels[:1] + levels[3:], "cpu") is None


def test_the_nodes_page_shows_and_explains_unevenness(
    app: Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    levels = [
        level("a", 4000, 3000, 8 * 2**30, 2**30),
        level("b", 8000, 2000, 8 * 2**30, 4 * 2**30),
    ]
    monkeypatch.setattr(nodes, "node_levels", lambda: levels)
    html = client.get("/dashboard/nodes").get_data(as_text=True)
    cards = html[html.index('id="unevenness"') : html.index('id="unevenness-explained"')]
    cpu = cards[cards.index('data-resource="cpu"') : cards.index('data-resource="memory"')]
    assert re.search(r'class="spread" data-value="0.5">50 points<', cpu)
    assert "hottest a 75% used, coolest b 25%" in cpu and "over 2 nodes" in cpu
    memory = cards[cards.index('data-resource="memory"') :]
    assert re.search(r'class="spread" data-value="0.375">38 points<', memory)
    explained = html[html.index('id="unevenness-explained"') :]
    assert "the hottest node uses minus the share the coolest uses" in explained
    assert "0 means every node is used alike" in explained
