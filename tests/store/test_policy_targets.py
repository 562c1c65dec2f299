"""A policy targets its one cluster, clusters by name or id, clusters by label, or every cluster
(app.store.policies): the webhook's snapshot, the recommender's and updater's policy reads
(valid_policies) and the API's lists hold exactly the policies whose target matches their own
cluster. Two clusters on PostgreSQL; one on SQLite (its labels select, or not)."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from app.store import clusters
from app.store.clusters import cluster_key
from app.store.extensions import db
from app.store.models import Policy as PolicyRow
from app.store.policies import InvalidPolicyLog, find_policy, policy_rows, valid_policies
from app.store.snapshot import load_snapshot

TARGETS: dict[str, Any] = {
    "by-name": {"names": ["east"]},
    "by-id": {"names": ["uid-east"]},
    "by-label": {"selector": {"matchLabels": {"env": "prod"}}},
    "by-expression": {
        "selector": {"matchExpressions": [{"key": "region", "operator": "In", "values": ["eu"]}]}
    },
    "all": {"selector": {}},
    "west-by-name": {"names": ["west"]},
    "staging": {"selector": {"matchLabels": {"env": "staging"}}},
    "unreadable": {"names": "east"},  # edited by hand into nonsense: selects no cluster
}
EAST = {"by-name", "by-id", "by-label", "by-expression", "all"}


def add_targeted() -> None:
    for name, target in TARGETS.items():
        db.session.add(
            PolicyRow(namespace="shop", name=name, update_mode="Off", version=1, clusters=target)
        )
    db.session.commit()


def names(policies: Any) -> set[str]:
    return {p.name for p in policies}


def test_each_cluster_reads_the_policies_targeting_it(app: Flask, database_url: str) -> None:
    if database_url.startswith("sqlite"):
        pytest.skip("SQLite holds one cluster")
    clusters.init_app(app, "uid-west", "west", labels={"env": "staging", "region": "us"})
    cluster_key(db.session)
    clusters.init_app(app, "uid-east", "east", labels={"env": "prod", "region": "eu"})
    add_targeted()
    snap = load_snapshot(db.session)
    assert names(p for ps in snap.policies.values() for p in ps) == EAST
    assert names(valid_policies(db.session, InvalidPolicyLog("test"))) == EAST
    assert names(policy_rows(db.session)) == EAST
    assert find_policy(db.session, "shop", "west-by-name") is None
    assert find_policy(db.session, "shop", "west-by-name", to_edit=True) is not None
    clusters.init_app(app, "uid-west", "west")  # labels as stored
    assert names(policy_rows(db.session)) == {"all", "west-by-name", "staging"}


def test_a_clusters_labels_are_what_it_declares(app: Flask) -> None:
    """On SQLite too: the one cluster's labels select policies; declared anew, they replace the
    stored ones (RIGHTSIZER_CLUSTER_LABELS is the truth); without, they are left as they are."""
    clusters.init_app(app, "uid-east", "east", labels={"env": "prod", "region": "eu"})
    add_targeted()
    assert names(policy_rows(db.session)) == EAST
    clusters.init_app(app, "uid-east", "east", labels={"env": "staging"})
    assert names(policy_rows(db.session)) == {"by-name", "by-id", "all", "staging"}
    clusters.init_app(app, "uid-east", "east")
    assert names(policy_rows(db.session)) == {"by-name", "by-id", "all", "staging"}
