"""The nodes page's water levels from raw Node, Pod and NodeMetrics JSON."""

from __future__ import annotations

import re

import pytest
from flask import Flask
from flask.testing import FlaskClient

from app.core.quantity import amount as quantity_amount
from app.dashboard import nodes
from app.dashboard.nodes import NodeLevel, levels_from, unevenness

NODES = [
    {"metadata": {"name": "b"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi"}}},
    {"metadata": {"name": "a"}, "status": {"allocatable": {"cpu": "2", "memory": "4Gi"}}},
]
PODS = [
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
    assert re.findall(r'data-percent="([\d.]+)"', row) == ["75.0", "12.5", "25.0", "12.5"]
    assert '<span class="percent">75%</span>' in row and 'style="width: 75.0%"' in row
    # under the bar, one unit a column; the exact quantities in its title
    assert "1.50 of 2.00 cores" in row and "1.00 of 4.00 GiB" in row
    assert 'title="1500m of 2"' in row and 'title="1Gi of 4Gi"' in row
    other = html[html.index('data-name="b"') :]
    assert "no metrics" in other
    spread = html[html.index('id="spread"') :]
    assert re.search(r'id="unevenness" data-value="0.75">75 percentage points<', spread)
    assert "the fullest node, a, has 75% of its CPU requested, the emptiest, b, 0%" in spread
    assert "Unevenness" not in html  # a word the page did not explain
