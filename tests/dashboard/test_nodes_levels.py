"""The nodes page's water levels from raw Node, Pod and NodeMetrics JSON."""

from __future__ import annotations

from app.core.quantity import amount as quantity_amount
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
