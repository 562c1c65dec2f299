"""Usage models with known samples: `seed` saves one as recommendations for API, CLI and dashboard
tests to read back; `fed_model` builds one of any number of workloads for database tests."""

from __future__ import annotations

from datetime import UTC, datetime

from app.core.recommend.model import UsageModel, WorkloadKey
from app.core.recommend.settings import RecommenderSettings
from app.extensions import db
from app.store.recommendations import save_all
from app.store.results import results_from_model

NOW = datetime(2024, 7, 4, tzinfo=UTC)


def seed() -> UsageModel:
    """100 minutes of samples for shop/Deployment/web, shop/StatefulSet/db and ops/Deployment/web,
    saved as recommendations at NOW."""
    m = UsageModel()
    for ns, kind, name in (
        ("shop", "Deployment", "web"),
        ("shop", "StatefulSet", "db"),
        ("ops", "Deployment", "web"),
    ):
        w = WorkloadKey(ns, kind, name)
        for i in range(100):
            m.add_cpu(w, f"{name}-0", "main", 1_719_792_000.0 + 60 * i, 0.5, 1.0)
            m.add_memory(w, f"{name}-0", "main", 1_719_792_000.0 + 60 * i, 1e9)
    save_all(db.session, results_from_model(m), NOW, batch_size=100)
    return m


T0 = 1_719_792_000.0


def fed_model(workloads: int, cpu: float = 0.3) -> UsageModel:
    m = UsageModel(RecommenderSettings())
    for n in range(workloads):
        w = WorkloadKey("shop", "Deployment", f"w{n}")
        for i in range(48):
            m.add_cpu(w, f"w{n}-1", "app", T0 + 1800 * i, cpu + (i % 5) / 50, 0.5)
            m.add_memory(w, f"w{n}-1", "app", T0 + 1800 * i, 3e8 + (i % 7) * 1e7)
    return m
