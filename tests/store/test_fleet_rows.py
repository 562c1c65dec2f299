"""Two clusters in one PostgreSQL database: each process's store reads and writes only its own
cluster's rows, and the webhook's snapshot holds its own recommendations, its own policies and
the fleet-wide ones (app.store.clusters). SQLite holds one cluster (tests/db)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from flask import Flask, has_app_context
from sqlalchemy.orm import Session

from app.core.workload_key import WorkloadKey
from app.store import clusters
from app.store.clusters import cluster_key
from app.store.extensions import db
from app.store.models import Policy as PolicyRow
from app.store.recommendations import delete_workload, find_recommendations, save_all
from app.store.results import ContainerResult, SampleSpan
from app.store.session import app_sessions
from app.store.snapshot import load_snapshot
from tests.store.test_snapshot_rows import WEB, row
from tests.support.pods import rec


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


def test_a_writer_outside_an_app_writes_to_the_databases_only_cluster(
    app: Flask, database_url: str
) -> None:
    """A script or harness saving through the store without an app (no identity, as
    tests/realkube's seeding does) writes to the database's only cluster, which a rightsizer
    process of that cluster then reads. A new thread runs outside the fixture's app context."""
    own = cluster_key(db.session)
    now = datetime.now(UTC)
    span = SampleSpan(10, now.timestamp() - 60, now.timestamp())
    result = ContainerResult(WEB, "app", rec(250, 2**28), None, samples=span)
    engine = sa.create_engine(database_url)
    failures: list[BaseException] = []

    def write() -> None:
        try:
            assert not has_app_context()
            with Session(engine) as session:
                save_all(session, [result], now, batch_size=10)
                session.commit()
        except BaseException as e:  # reported by the test's own thread
            failures.append(e)

    writer = threading.Thread(target=write)
    writer.start()
    writer.join(timeout=60)
    engine.dispose()
    assert failures == []
    rows = find_recommendations(db.session, namespace=WEB.namespace)
    assert [(r.container, r.cluster_id) for r in rows] == [("app", own)]


def test_a_jobs_session_outside_any_app_context_knows_its_cluster(
    app: Flask, fleet: tuple[int, int]
) -> None:
    """The leader's jobs run in threads of their own, with no app context: the session factory
    they are given (app.store.session.app_sessions) carries the process's cluster identity, so
    they read and write east's rows, not the database's first cluster's."""
    east, west = fleet
    sessions = app_sessions(app)
    mine, theirs = row(WEB, "app", 100), row(WEB, "app", 900)
    mine.cluster_id, theirs.cluster_id = east, west
    db.session.add_all([mine, theirs])
    db.session.commit()
    seen: list[object] = []

    def job() -> None:
        try:
            assert not has_app_context()
            with sessions() as session:
                seen.append(cluster_key(session))
                seen.append([r.target_cpu for r in find_recommendations(session)])
        except BaseException as e:
            seen.append(e)

    thread = threading.Thread(target=job)
    thread.start()
    thread.join(60)
    assert seen == [east, [100]]
