"""load_snapshot reads every policy and recommendation with the cyclic collector paused: the rows
become long-lived objects by the thousand, and the full collections they set off walked every
object of the process (the webhook reloads every few seconds, the updater every run)."""

from __future__ import annotations

import gc
from typing import Any

import pytest
from flask import Flask

from app.extensions import db
from app.store import snapshot
from app.store.snapshot import load_snapshot


def test_the_collector_is_paused_while_the_rows_are_read_and_restored_after(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    during: list[bool] = []
    read = snapshot.recommendation_targets

    def targets(session: Any) -> Any:
        during.append(gc.isenabled())
        return read(session)

    monkeypatch.setattr(snapshot, "recommendation_targets", targets)
    assert gc.isenabled()
    with app.app_context():
        loaded = load_snapshot(db.session)
    assert during == [False] and gc.isenabled()
    assert loaded.counts == {"policies": 0, "recommendations": 0}

    def failing(session: Any) -> Any:
        raise RuntimeError("the database is gone")

    monkeypatch.setattr(snapshot, "recommendation_targets", failing)
    with app.app_context(), pytest.raises(RuntimeError):
        load_snapshot(db.session)
    assert gc.isenabled()  # back on after a failed load too
