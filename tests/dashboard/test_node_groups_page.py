"""The dashboard's Node groups section of a DaemonSet sized per node group (its own template,
dashboard/_node_groups.html), over the test client on SQLite and PostgreSQL."""

from __future__ import annotations

import re

from flask import Flask
from flask.testing import FlaskClient

from tests.support.node_groups import TYPE, add_group
from tests.support.reviews import MI, add_recommendation
from tests.support.tokens import TOKENS

PAGE = "/dashboard/workloads/ops/DaemonSet/agent"


def get(client: FlaskClient, path: str) -> str:
    headers = {"Authorization": f"Bearer {TOKENS['admin']}"}
    resp = client.get(path, headers=headers)
    assert resp.status_code == 200
    return resp.get_data(as_text=True)


def test_a_grouped_daemonset_shows_each_group(app: Flask, client: FlaskClient) -> None:
    add_recommendation("agent", 300, 500 * MI, workload=("ops", "DaemonSet", "agent"))
    add_group("m5.4xlarge", 240, 900 * MI, 2)
    add_group("m5.large", 60, 300 * MI, 2)
    add_group("<none>", None, 0, None)
    html = get(client, PAGE)
    assert f'<code id="node-group-label">{TYPE}</code>' in html
    rows = re.findall(r'<tr class="node-group" data-container="agent" data-group="([^"]+)">', html)
    assert rows == ["&lt;none&gt;", "m5.4xlarge", "m5.large"]
    targets = re.findall(r'class="num target-cpu" data-value="(\d*)"', html.split("node-groups")[1])
    assert targets == ["", "240", "60"]  # <none> has no recommendation yet
    assert html.index('id="containers"') < html.index('id="node-groups"')


def test_other_workloads_have_no_node_groups_section(app: Flask, client: FlaskClient) -> None:
    add_recommendation("app", 300, 500 * MI, workload=("ops", "Deployment", "web"))
    html = get(client, "/dashboard/workloads/ops/Deployment/web")
    assert "node-groups" not in html and "Node groups" not in html
