"""Proportional scalers as tests/jobs adds them: a row for a Deployment of the default scenario's
kube-system (5 schedulable nodes, coredns at 2), one replica per node."""

from __future__ import annotations

from typing import Any

from flask import Flask

from app.store.extensions import db
from app.store.models import Scaler

NS = "kube-system"


def add_scaler(app: Flask, name: str, target: str, behavior: dict[str, Any] | None = None) -> None:
    with app.app_context():
        db.session.add(
            Scaler(
                name=name,
                target_namespace=NS,
                target_kind="Deployment",
                target_name=target,
                params={"linear": {"nodesPerReplica": 1}},
                enabled=True,
                behavior=behavior,
            )
        )
        db.session.commit()
