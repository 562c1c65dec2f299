"""Usage models with known samples: `seed` saves one as recommendations for API, CLI and dashboard
tests to read back; `fed_model` builds one of any number of workloads for database tests."""

from __future__ import annotations

from datetime import UTC, datetime

from app.core.recommend.array_model import ArrayModel, Sample
from app.core.recommend.settings import RecommenderSettings
from app.core.workload_key import WorkloadKey
from app.store.extensions import db
from app.store.recommendations import save_all
from app.store.results import results_from_model

NOW = datetime(2024, 7, 4, tzinfo=UTC)


def seed() -> ArrayModel:
    """100 minutes of samples for shop/Deployment/web, shop/StatefulSet/db and ops/Deployment/web,
    saved as recommendations at NOW."""
    m = ArrayModel()
    samples: list[Sample] = [
        (WorkloadKey(ns, kind, name), f"{name}-0", "main", 1_719_792_000.0 + 60 * i, 0.5, 1.0, 1e9)
        for i in range(100)
        for ns, kind, name in (
            ("shop", "Deployment", "web"),
            ("shop", "StatefulSet", "db"),
            ("ops", "Deployment", "web"),
        )
    ]
    m.add_usages(samples)
    save_all(db.session, results_from_model(m), NOW, batch_size=100)
    return m


T0 = 1_719_792_000.0


def fed_model(workloads: int, cpu: float = 0.3) -> ArrayModel:
    m = ArrayModel(RecommenderSettings())
    keys = [WorkloadKey("shop", "Deployment", f"w{n}") for n in range(workloads)]
    m.add_usages(
        [
            (w, f"{w.name}-1", "app", T0 + 1800 * i, cpu + (i % 5) / 50, 0.5, 3e8 + (i % 7) * 1e7)
            for i in range(48)
            for w in keys
        ]
    )
    return m
