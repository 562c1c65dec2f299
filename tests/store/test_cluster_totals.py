"""Each cluster's stored totals (app.store.cluster_totals) are the figures the fleet view used to
sum from every row at each request (tests/support/fleet_oracle.py, the code before migration
0017), as the view's request-time summation is: all three ways on the same rows, on SQLite and
PostgreSQL (two clusters on PostgreSQL); a cluster without stored totals is summed at the
request and says so; a write never replaces newer totals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from flask import Flask

from app.settings import settings
from app.store import clusters
from app.store.cluster_totals import load_totals, write_totals
from app.store.clusters import cluster_key
from app.store.extensions import db
from app.store.fleet import Fleet, fleet
from app.store.models import Policy as PolicyRow
from app.store.models import Recommendation
from app.store.policies import InvalidPolicyLog
from app.store.recommendations import find_recommendations
from app.store.savings import Scoper
from tests.support.fleet import seen
from tests.support.fleet_oracle import figures as oracle

T = datetime(2026, 12, 7, 5, 0, tzinfo=UTC)
MI = 2**20


def scoper() -> Scoper:
    return Scoper.as_configured(db.session, InvalidPolicyLog("test"), settings())


def container(
    cluster: int | None,
    where: tuple[str, str],
    name: str,
    target_cpu: int,
    pods: int | None,
    request_cpu: int,
    minutes: int = 0,
    conflicts: dict[str, str] | None = None,
    memory_mib: int = 256,
) -> Recommendation:
    """`seen`'s row, for container `name` of Deployment `where` (namespace, name); `pods` None:
    no pod seen."""
    r = seen(cluster, target_cpu, pods or 0, request_cpu)
    r.namespace, r.name, r.container = where[0], where[1], name
    r.updated_at = T - timedelta(minutes=minutes)
    r.conflicts = conflicts or {}
    r.target_memory = r.uncapped_target_memory = memory_mib * MI
    if pods is None:
        r.replicas = r.requested_cpu_total = r.requested_memory_total = None
    return r


def cluster_rows(cluster: int | None, scale: int) -> list[Recommendation]:
    """Workloads saving, short, unseen, in conflict, never sized and left alone by a policy."""
    return [
        container(cluster, ("shop", "web"), "app", 100 * scale, 3, 250, minutes=5),
        container(cluster, ("shop", "web"), "proxy", 50, None, 100),  # its pods not seen
        container(cluster, ("shop", "cache"), "redis", 10, 2, 100, memory_mib=1024),  # short
        container(cluster, ("shop", "api"), "app", 700 * scale, 2, 200, minutes=1),  # short
        container(cluster, ("shop", "hpa"), "app", 10, 4, 500, conflicts={"cpu": "HPA hpa"}),
        container(cluster, ("kube-system", "dns"), "dns", 10, 2, 500),  # never sized
        container(cluster, ("shop", "batch"), "app", 10, 5, 300),
        container(cluster, ("shop", "batch"), "sidecar", 10, 5, 300),  # its policy: Off
        container(cluster, ("shop", "tiny"), "app", 25, 2, 5),  # short only of the pod minimum
        container(cluster, ("shop", "tiny2"), "app", 2000, 2, 100),  # ... its policy's: 2 cores
    ]


def add_policy(cluster: int | None) -> None:
    db.session.add(
        PolicyRow(
            namespace="shop",
            name=f"tiny2-{cluster or 0}",
            target_kind="Deployment",
            target_name="tiny2",
            update_mode="Auto",
            recommender="vpa",
            recommender_params={"podMinCpuMillicores": 2000},
            version=1,
            cluster_id=cluster,
        )
    )
    db.session.add(
        PolicyRow(
            namespace="shop",
            name=f"batch-{cluster or 0}",  # a policy's name is fleet-wide
            target_kind="Deployment",
            target_name="batch",
            update_mode="Auto",
            container_policies=[{"containerName": "sidecar", "mode": "Off"}],
            version=1,
            cluster_id=cluster,
        )
    )


def both_ways() -> tuple[Fleet, Fleet]:
    return fleet(db.session, scoper), fleet(db.session, scoper, stored=False)


def assert_same(stored: Fleet, summed: Fleet) -> None:
    assert [c.computed for c in stored.clusters] == ["leader"] * len(stored.clusters)
    assert [c.computed for c in summed.clusters] == ["request"] * len(summed.clusters)
    for a, b in zip(stored.clusters, summed.clusters, strict=True):
        assert (a.key, a.figures, a.last_update) == (b.key, b.figures, b.last_update)
        with clusters.viewing(a.key):
            assert a.figures == oracle(find_recommendations(db.session), scoper())
    assert stored.totals == summed.totals


def test_stored_totals_are_the_rows_summed_at_the_request(app: Flask) -> None:
    db.session.add_all(cluster_rows(None, 1))
    add_policy(None)
    db.session.commit()
    before = fleet(db.session, scoper)
    assert [c.computed for c in before.clusters] == ["request"]  # no totals stored yet
    assert write_totals(db.session, scoper(), T)
    stored, summed = both_ways()
    assert_same(stored, summed)
    f = stored.clusters[0].figures
    # every kind of row counted: 7 workloads, the never-sized and conflicting ones saving nothing
    assert (f.workloads, f.containers, f.seen_workloads, f.short_containers) == (8, 10, 8, 2)
    saved = (750 - 300) + (400 - 1400) + (200 - 20) + (1500 - 50) + (10 - 50) + (200 - 4000)
    assert f.savings.cpu == saved
    assert (f.shortfall.cpu, f.shortfall.memory) == (1000, 2 * (1024 - 512) * MI)
    assert stored.clusters[0].as_of.replace(tzinfo=UTC) == T
    assert stored.as_of is not None and stored.as_of.replace(tzinfo=UTC) == T
    assert stored.clusters[0].last_update is not None
    assert stored.clusters[0].last_update.replace(tzinfo=UTC) == T


def test_totals_of_two_clusters_are_each_clusters_rows_summed(
    app: Flask, database_url: str
) -> None:
    if database_url.startswith("sqlite"):
        pytest.skip("SQLite holds one cluster")
    keys = []
    for uid, scale in (("uid-west", 3), ("uid-east", 1)):
        clusters.init_app(app, uid, uid.removeprefix("uid-"))
        key = cluster_key(db.session)
        keys.append(key)
        db.session.add_all(cluster_rows(key, scale))
        add_policy(key)
        db.session.commit()
        assert write_totals(db.session, scoper(), T)  # as that cluster's leader
    assert set(load_totals(db.session)) == set(keys)
    stored, summed = both_ways()
    assert_same(stored, summed)
    west, east = (c.figures for c in stored.clusters)
    assert west != east  # each its own rows
    assert stored.totals.short_containers == 5  # west: web, api, cache; east: api, cache


def test_a_write_never_replaces_newer_totals(app: Flask) -> None:
    db.session.add_all(cluster_rows(None, 1))
    db.session.commit()
    assert write_totals(db.session, scoper(), T)
    db.session.add(container(None, ("shop", "late"), "app", 10, 1, 100))
    db.session.commit()
    # a deposed leader's run that began earlier: its totals do not replace its successor's
    assert not write_totals(db.session, scoper(), T - timedelta(seconds=30))
    shown = fleet(db.session, scoper).clusters[0]
    assert (shown.figures.workloads, shown.as_of.replace(tzinfo=UTC)) == (8, T)
    # the next run's do, rows added since counted
    assert write_totals(db.session, scoper(), T + timedelta(seconds=60))
    assert fleet(db.session, scoper).clusters[0].figures.workloads == 9
