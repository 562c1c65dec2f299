"""The dashboard's fleet: the fleet page (every cluster of the database, and the totals) and the
cluster the other pages show (`?cluster=NAME_OR_ID`, the selector in the header).

The figures are app.store.fleet's, the API's GET /api/v1/fleet (so both say the same), priced
with the dashboard's prices. Every other page reads the serving process's own cluster unless
`?cluster=` names another of the database; then every link of the page keeps it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import g, request

from app.dashboard.data import prices, scoper
from app.store import clusters
from app.store.extensions import db
from app.store.fleet import ClusterSummary, Fleet, fleet
from app.store.models import Cluster
from app.store.session import DatabaseUnavailable

_TOKEN = "rightsizer_cluster_token"


@dataclass(frozen=True)
class Choice:
    """A cluster the selector offers."""

    ref: str  # what ?cluster= takes: its id, else its name
    label: str
    selected: bool


def ref(c: Cluster | ClusterSummary) -> str:
    return c.uid or c.name


def label(c: Cluster | ClusterSummary) -> str:
    return c.name or c.uid or "(unclaimed)"


def select() -> str | None:
    """Before a page: its reads look at the cluster `?cluster=` names; an error message naming
    the parameter when no cluster of the database answers to it."""
    wanted = request.args.get("cluster")
    if not wanted:
        return None
    try:
        found = clusters.find_cluster(db.session, wanted)
    except clusters.ClusterUnknown as e:
        return f"cluster: {e}"
    g.cluster_ref = wanted
    setattr(g, _TOKEN, clusters.viewing(found.id))
    getattr(g, _TOKEN).__enter__()
    return None


def release() -> None:
    """After a page: its reads' cluster is let go."""
    g.pop("cluster_ref", None)
    view = g.pop(_TOKEN, None)
    if view is not None:
        view.__exit__(None, None, None)


def choices() -> list[Choice]:
    """The clusters the selector offers (none with one cluster: nothing to choose, nor when
    the database does not answer: the page says what went wrong)."""
    try:
        found = clusters.clusters(db.session)
        if len(found) < 2:
            return []
        own = clusters.own_cluster_key(db.session)
    except DatabaseUnavailable:
        db.session.rollback()
        return []
    wanted = g.get("cluster_ref")
    out = []
    for c in found:
        selected = ref(c) == wanted or c.name == wanted if wanted else c.id == own
        out.append(Choice(ref(c), label(c) + (" (this)" if c.id == own else ""), selected))
    return out


def view() -> Fleet:
    return fleet(db.session, scoper)


def page_args() -> dict[str, Any]:
    """What dashboard/fleet.html needs besides the fleet."""
    return {"ref": ref, "label": label, "prices": prices()}
