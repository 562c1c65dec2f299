"""The fleet at a glance: per cluster of the database, its workloads, savings and risk, and the
totals across clusters; one reading for the REST API (GET /api/v1/fleet), the CLI and the
dashboard's fleet page, so all say the same numbers.

Each cluster's numbers are the ones its own overview shows (app.store.figures), as its leader
summed them after its last recommender run (app.store.cluster_totals): one stored row per
cluster, read whatever the fleet's size, each with `as_of`, when it was summed. A cluster whose
leader has not written totals yet (right after migration 0017, or a cluster whose rightsizer has
not finished a recommender run since) has its rows summed at the request, as before, `as_of`
the request's time (`computed` says which): every cluster is counted, with true numbers.
What rightsizer would change is scoped by the policies governing each cluster and, for stored
totals, by that cluster's own never-sized namespaces and pod minimum (for totals summed at the
request, by the viewing process's: the same in every cluster installed from the same values).
The totals add up only quantities that mean the same in every cluster: counts (workloads,
containers, pods), millicores and bytes. Prices are not summed here (a viewer multiplies).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from app.store.cluster_totals import Totals, load_totals, summed
from app.store.clusters import clusters, own_cluster_key, viewing
from app.store.figures import Figures
from app.store.savings import Scoper
from app.store.session import DbSession, to_unix

Computed = Literal["leader", "request"]
LEADER: Computed = "leader"  # by the cluster's leader after its recommender run (stored)
REQUEST: Computed = "request"  # summed at the request (no totals stored yet)


@dataclass(frozen=True)
class ClusterSummary:
    key: int
    uid: str | None  # None: not claimed yet (a single-cluster database moved by migration 0013)
    name: str
    own: bool  # the serving process's cluster
    figures: Figures
    last_update: datetime | None  # the newest recommendation row summed
    as_of: datetime  # when the figures were summed
    computed: Computed  # by the cluster's leader after its run, or at this request


@dataclass(frozen=True)
class Fleet:
    clusters: list[ClusterSummary]

    @property
    def totals(self) -> Figures:
        return sum((c.figures for c in self.clusters), Figures())

    @property
    def last_update(self) -> datetime | None:
        known = [c.last_update for c in self.clusters if c.last_update is not None]
        return max(known, key=_aware) if known else None

    @property
    def as_of(self) -> datetime | None:
        """The oldest cluster's `as_of`: the totals are true as of no later (None: no cluster)."""
        return min((c.as_of for c in self.clusters), key=_aware, default=None)


def _aware(d: datetime) -> float:
    return to_unix(d) or 0.0


def fleet(session: DbSession, scoper: Callable[[], Scoper], stored: bool = True) -> Fleet:
    """Every cluster of the database with its figures: its stored totals, else (or with
    `stored` False, every cluster: the benchmark's comparison) its rows summed now. `scoper`
    builds the Scoper of the cluster being summed (called while it is viewed)."""
    own = own_cluster_key(session)
    found = load_totals(session) if stored else {}
    now = datetime.now(UTC)
    out = []
    for c in clusters(session):
        totals, computed = found.get(c.id), LEADER
        if totals is None:
            with viewing(c.id):
                totals, computed = summed(session, scoper(), now), REQUEST
        out.append(_summary(c.id, c.uid, c.name, c.id == own, totals, computed))
    return Fleet(out)


def _summary(
    key: int, uid: str | None, name: str, own: bool, t: Totals, computed: Computed
) -> ClusterSummary:
    return ClusterSummary(key, uid, name, own, t.figures, t.last_update, t.as_of, computed)
