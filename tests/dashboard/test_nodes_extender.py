"""The Nodes page's extender column and spread over time (SQLite and PostgreSQL): each node's score
as `prioritize` would answer it now for a pod predicted to use nothing (the extender's own table,
from the levels the leader saved), and per window how far apart the nodes' levels are; without
saved levels the page leaves both out."""

from __future__ import annotations

import dataclasses
import re

import pytest
from flask import Flask
from flask.testing import FlaskClient

from app.core.placement.table import LevelTable, PlacementOptions
from app.core.placement.windows import NodeLevel as SavedLevel
from app.dashboard import nodes
from app.dashboard.nodes import NodeLevel
from app.store.extensions import db
from app.store.node_levels import save_node_levels

GI = 1 << 30
SAVED = [  # CPU and memory levels per window: 15 minutes, 1 hour, 1 day
    SavedLevel("hot", 8000, 32 * GI, (0.95, 0.8, 0.7), (0.6, 0.6, 0.5), 1000.0),
    SavedLevel("warm", 8000, 32 * GI, (0.5, 0.5, 0.4), (0.4, 0.4, 0.4), 1000.0),
    SavedLevel("cool", 8000, 32 * GI, (0.1, 0.2, 0.3), (0.2, 0.25, 0.3), 1000.0),
]


@pytest.fixture
def page_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [NodeLevel(n.name, 8000, 32 * GI, 1000, GI, 2000, 4 * GI) for n in SAVED]
    rows.append(NodeLevel("new", 8000, 32 * GI, 0, 0, None, None))  # no levels saved
    monkeypatch.setattr(nodes, "node_levels", lambda: rows)


def test_each_node_shows_the_score_prioritize_gives_now(
    app: Flask, client: FlaskClient, page_nodes: None
) -> None:
    save_node_levels(db.session, SAVED, 0.0)
    db.session.commit()
    html = client.get("/dashboard/nodes").get_data(as_text=True)
    want = LevelTable(SAVED, PlacementOptions()).scores(["hot", "warm", "cool"], (0, 0))
    assert want[2] > want[1] > want[0]  # the cool node ranks first
    for name, score in zip(("hot", "warm", "cool"), want, strict=True):
        row = html[html.index(f'data-name="{name}"') :]
        cell = re.search(
            r'class="num extender-score" data-value="(\d+)" data-filtered="(\w+)"', row
        )
        assert cell and int(cell.group(1)) == score, name
        assert cell.group(2) == ("true" if name == "hot" else "false")  # 95% > the 90% filter
    new = html[html.index('data-name="new"') :]
    assert 'data-value="" data-filtered="false">\u2013<span class="sub">no levels</span>' in new
    assert "what rightsizer's scheduler extender answers kube-scheduler now" in html
    assert "the one it ranks worst 0, the others in proportion" in html


def test_the_spread_over_time_is_per_window(
    app: Flask, client: FlaskClient, page_nodes: None
) -> None:
    save_node_levels(db.session, SAVED, 0.0)
    db.session.commit()
    html = client.get("/dashboard/nodes").get_data(as_text=True)
    table = html[html.index('id="window-spread"') :]
    for window, cpu, memory in (("15 minutes", 85, 40), ("1 hour", 60, 35), ("1 day", 40, 20)):
        row = table[table.index(f'data-window="{window}"') :]
        values = re.findall(r'class="num level (cpu|memory)" data-value="([\d.]+)"', row)[:2]
        assert [(r, round(float(v) * 100)) for r, v in values] == [
            ("cpu", cpu),
            ("memory", memory),
        ], window


def test_without_saved_levels_both_are_left_out(
    app: Flask, client: FlaskClient, page_nodes: None
) -> None:
    html = client.get("/dashboard/nodes").get_data(as_text=True)
    assert "Extender score" not in html and 'id="window-spread"' not in html
    assert 'id="unevenness"' in html  # the page itself is there


def test_with_levels_ahead_the_forecast_spread_is_a_row_of_its_own(
    app: Flask, client: FlaskClient, page_nodes: None
) -> None:
    """The widest spread of the hours ahead the extender scores: `hot` stays flat at 0.95
    (no profile: its newest level, the 15-minute one here), `warm` rises to 0.9 in hour 2,
    `cool` falls to 0.05; memory flat."""
    hot, warm, cool = SAVED
    ahead = [
        hot,
        dataclasses.replace(warm, cpu_ahead=(0.5, 0.9), memory_ahead=(0.4, 0.4)),
        dataclasses.replace(cool, cpu_ahead=(0.1, 0.05), memory_ahead=(0.2, 0.2)),
    ]
    save_node_levels(db.session, ahead, 0.0)
    db.session.commit()
    html = client.get("/dashboard/nodes").get_data(as_text=True)
    table = html[html.index('id="window-spread"') :]
    row = table[table.index('data-window="next 2 hours (forecast)"') :]
    values = re.findall(r'class="num level (cpu|memory)" data-value="([\d.]+)"', row)[:2]
    assert [(r, round(float(v) * 100)) for r, v in values] == [("cpu", 90), ("memory", 40)]
    assert "in each of the next 2 hours" in html
    assert table.count('class="window"') == 4  # the three windows and the forecast
