"""Two clusters in one database (PostgreSQL), each with shop/web, its events and policies: the
fleet the API, CLI and dashboard tests read (`fleet` fixture)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from flask import Flask

from app.core.workload_key import WorkloadKey
from app.store import clusters
from app.store.clusters import cluster_key
from app.store.extensions import db
from app.store.models import AuditEvent, Recommendation
from app.store.models import Policy as PolicyRow

WEB = WorkloadKey("shop", "Deployment", "web")
MI = 2**20


def seen(cluster: int | None, target_cpu: int, pods: int, request_cpu: int) -> Recommendation:
    """shop/web's `app` container: `pods` pods seen, each asking `request_cpu` and 512Mi; the
    target `target_cpu` and 256Mi."""
    return Recommendation(
        cluster_id=cluster,
        namespace=WEB.namespace,
        kind=WEB.kind,
        name=WEB.name,
        container="app",
        target_cpu=target_cpu,
        target_memory=256 * MI,
        lower_bound_cpu=target_cpu,
        lower_bound_memory=256 * MI,
        upper_bound_cpu=target_cpu,
        upper_bound_memory=256 * MI,
        uncapped_target_cpu=target_cpu,
        uncapped_target_memory=256 * MI,
        current_cpu_request=request_cpu,
        current_memory_request=512 * MI,
        replicas=pods,
        requested_cpu_total=request_cpu * pods,
        requested_memory_total=512 * MI * pods,
        updated_at=datetime(2026, 12, 1, tzinfo=UTC),
    )


def event(cluster: int, ref: str) -> AuditEvent:
    return AuditEvent(
        cluster_id=cluster,
        time=datetime.now(UTC),
        actor="rightsizer/updater",
        action="evict",
        object_kind="Pod",
        object_ref=ref,
        message="evicted",
        details={},
    )


@pytest.fixture
def fleet(app: Flask, database_url: str) -> Iterator[tuple[int, int]]:
    """Keys of clusters east and west, each with shop/web; the app serves east. East's pods ask
    200m for a 100m target (3 pods: 300m to save), west's 200m for 500m (3 pods: 900m short)."""
    if database_url.startswith("sqlite"):
        pytest.skip("SQLite holds one cluster")
    keys = []
    for uid in ("uid-west", "uid-east"):
        clusters.init_app(app, uid, uid.removeprefix("uid-"))
        keys.append(cluster_key(db.session))
    west, east = keys
    db.session.add_all(
        [
            seen(east, 100, 3, 200),
            seen(west, 500, 3, 200),
            event(east, "shop/web-east"),
            event(west, "shop/web-west"),
            PolicyRow(namespace="shop", name="east-only", update_mode="Off", cluster_id=east),
            PolicyRow(namespace="shop", name="west-only", update_mode="Off", cluster_id=west),
            PolicyRow(namespace="*", name="everywhere", update_mode="Off", cluster_id=None),
        ]
    )
    for p in db.session.new:
        if isinstance(p, PolicyRow):
            p.version = 1
    db.session.commit()
    yield east, west
