"""Node levels saved by the leader and loaded by every process, on SQLite and PostgreSQL: one row
per node, updated in place, forgotten a day after its last metrics."""

from __future__ import annotations

import dataclasses

from flask import Flask
from sqlalchemy import update

from app.core.placement.windows import NodeLevel
from app.store.extensions import db
from app.store.models import NodeLevelRow
from app.store.node_levels import load_node_levels, save_node_levels

GI = 1 << 30


def level(name: str, cpu: float, at: float) -> NodeLevel:
    return NodeLevel(name, 4000, 16 * GI, (cpu, cpu / 2, cpu / 4), (0.5, 0.25, 0.125), at)


def test_saved_levels_load_back_and_update_in_place(app: Flask) -> None:
    save_node_levels(db.session, [level("a", 0.8, 1000.0), level("b", 0.2, 1000.0)], 0.0)
    db.session.commit()
    assert sorted(load_node_levels(db.session), key=lambda n: n.name) == [
        level("a", 0.8, 1000.0),
        level("b", 0.2, 1000.0),
    ]
    save_node_levels(db.session, [level("a", 0.4, 1030.0)], 0.0)
    db.session.commit()
    by = {n.name: n for n in load_node_levels(db.session)}
    assert by["a"] == level("a", 0.4, 1030.0) and by["b"] == level("b", 0.2, 1000.0)


def test_nodes_without_metrics_for_a_day_are_forgotten(app: Flask) -> None:
    save_node_levels(db.session, [level("old", 0.1, 1000.0), level("new", 0.1, 90_000.0)], 0.0)
    db.session.commit()
    forgotten = save_node_levels(db.session, [level("new", 0.2, 90_030.0)], 90_030.0 - 86_400)
    db.session.commit()
    assert forgotten == 1
    assert [n.name for n in load_node_levels(db.session)] == ["new"]


def test_levels_ahead_load_back_and_a_malformed_value_reads_as_none(app: Flask) -> None:
    a = dataclasses.replace(
        level("a", 0.5, 1000.0), cpu_ahead=(0.5, 0.625, 0.75), memory_ahead=(0.5, 0.5, 0.5)
    )
    save_node_levels(db.session, [a, level("b", 0.2, 1000.0)], 0.0)
    db.session.commit()
    by = {n.name: n for n in load_node_levels(db.session)}
    assert by["a"] == a and by["b"].cpu_ahead == () and by["b"].memory_ahead == ()
    # a row edited by hand: that node is scored by its windows alone, the others as saved
    for bad in ('{"x": 1}', "[0.5, true]", "not json", '[0.5, "0.6"]', "[NaN]"):
        db.session.execute(
            update(NodeLevelRow).where(NodeLevelRow.name == "b").values(cpu_ahead=bad)
        )
        db.session.commit()
        by = {n.name: n for n in load_node_levels(db.session)}
        assert by["b"].cpu_ahead == () and by["a"] == a, bad
