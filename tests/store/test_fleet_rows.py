"""Two clusters in one PostgreSQL database: each process's store reads and writes only its own
cluster's rows, and the webhook's snapshot holds its own recommendations, its own policies and
the fleet-wide ones (app.store.clusters). SQLite holds one cluster (tests/db)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask import Flask

from app.core.recommend.model import WorkloadKey
from app.extensions import db
from app.models import Policy as PolicyRow
from app.store import clusters
from app.store.clusters import cluster_key
from app.store.recommendations import delete_workload, find_recommendations
from app.store.snapshot import load_snapshot
from tests.store.test_snapshot_rows import WEB, row


@pytest.fixture
def fleet(app: Flask, database_url: str) -> Iterator[tuple[int, int]]:
    """Keys of clusters east and west; the app is east's."""
    if database_url.startswith("sqlite"):
        pytest.skip("SQLite holds one cluster")
    keys = []
    for uid in ("uid-west", "uid-east"):
        clusters.init_app(app, uid, uid.removeprefix("uid-"))
        keys.append(cluster_key(db.session))
    yield keys[1], keys[0]


def policy(namespace: str, name: str, cluster: int | None) -> PolicyRow:
    return PolicyRow(
        namespace=namespace, name=name, update_mode="Off", version=1, cluster_id=cluster
    )


def test_the_snapshot_holds_its_own_cluster_and_the_fleet_wide_policies(
    app: Flask, fleet: tuple[int, int]
) -> None:
    east, west = fleet
    mine, theirs = row(WEB, "app", 100), row(WEB, "app", 900)
    mine.cluster_id, theirs.cluster_id = east, west
    db.session.add_all(
        [
            mine,
            theirs,
            policy("shop", "east-only", east),
            policy("shop", "west-only", west),
            policy("*", "everywhere", None),
        ]
    )
    db.session.commit()
    snap = load_snapshot(db.session)
    assert snap.recommendations[WEB]["app"].target.cpu == 100
    names = {p.name for ps in snap.policies.values() for p in ps}
    assert names == {"east-only", "everywhere"}


def test_a_row_added_without_a_cluster_is_this_process_clusters(
    app: Flask, fleet: tuple[int, int]
) -> None:
    east, _ = fleet
    added = row(WEB, "app", 100)
    db.session.add(added)
    db.session.commit()
    assert added.cluster_id == east


def test_forgetting_a_workload_leaves_the_other_clusters_alone(
    app: Flask, fleet: tuple[int, int]
) -> None:
    east, west = fleet
    mine, theirs = row(WEB, "app", 100), row(WEB, "app", 900)
    mine.cluster_id, theirs.cluster_id = east, west
    db.session.add_all([mine, theirs])
    db.session.commit()
    delete_workload(db.session, WorkloadKey("shop", "Deployment", "web"))
    assert find_recommendations(db.session) == []
    clusters.init_app(app, "uid-west", "west")  # the same database, as west's process
    assert [r.target_cpu for r in find_recommendations(db.session)] == [900]
