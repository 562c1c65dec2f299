"""The cluster this process belongs to, in a database that may hold a fleet of them.

Every per-cluster row carries its cluster's key (`clusters.id`); each store query of this
process reads and writes its own cluster's rows only, through `cluster_key`. A process knows
its cluster by an identity: RIGHTSIZER_CLUSTER_ID, else the kube-system namespace's uid, read once
when first needed (app/__init__.py gives the reader). The first time an identity meets the
database it claims the row migration 0013 left unclaimed (a single-cluster database moved into
the fleet shape, or a new one), or else joins the fleet with a row of its own. SQLite stays the
single-cluster default: a second identity is refused with `ClusterRefused`. A process with no
identity (no cluster to read it from: tests, `rightsizer db`), or code writing through the store
outside an app, uses the database's only cluster.

A read may look at another cluster of the fleet: within `viewing(key)`, `cluster_key` answers
that cluster's key. Only the REST API's and the dashboard's reads (`?cluster=`) and the fleet
summary run under it; nothing that writes does.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from flask import Flask, current_app, has_app_context
from sqlalchemy import event, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.store.models import Cluster, Policy
from app.store.session import CLUSTER_IDENTITY, DbSession

EXTENSION = CLUSTER_IDENTITY
# the cluster the reads of this context look at (`viewing`); None: the process's own
_VIEWED: ContextVar[int | None] = ContextVar("rightsizer_viewed_cluster", default=None)
log = logging.getLogger(__name__)


class IdentityUnknown(RuntimeError):
    """The cluster could not say who it is now (unreachable, 5xx): asked again on the next call."""


class ClusterRefused(RuntimeError):
    """This database cannot hold this process's cluster (the message says why and what to do)."""


@dataclass
class ClusterIdentity:
    uid: str  # empty: read it with `read_uid`, if given
    name: str  # empty: the uid
    read_uid: Callable[[], str] | None = None
    labels: dict[str, str] | None = None  # RIGHTSIZER_CLUSTER_LABELS; None: as stored
    key: int | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    warned: bool = False


def init_app(
    app: Flask,
    uid: str,
    name: str,
    read_uid: Callable[[], str] | None = None,
    labels: dict[str, str] | None = None,
) -> ClusterIdentity:
    identity = ClusterIdentity(uid, name, read_uid, labels)
    app.extensions[EXTENSION] = identity
    return identity


def cluster_key(session: DbSession) -> int:
    """This process's cluster's key, claimed or added in a session of its own the first time
    (never committing the caller's work), or the cluster a read is `viewing`."""
    viewed = _VIEWED.get()
    if viewed is not None:
        return viewed
    return own_cluster_key(session)


def own_cluster_key(session: DbSession) -> int:
    """This process's own cluster's key, whatever cluster a read is `viewing`. The identity comes
    with the session (a job's, made by app.store.session.app_sessions) or from the app. Outside an
    app (a script or test harness writing through the store), the database's only cluster, looked
    up on every call: such a caller has no identity, and may meet several databases."""
    identity: ClusterIdentity | None = session.info.get(EXTENSION)  # app.store.session
    if identity is None and has_app_context():
        identity = current_app.extensions[EXTENSION]
    if identity is None:
        with Session(session.get_bind()) as own:
            return _claimed(own, ClusterIdentity("", ""))
    if identity.key is None:
        with identity.lock:
            if identity.key is None:
                with Session(session.get_bind()) as own:
                    try:
                        identity.key = _claimed(own, identity)
                    except IdentityUnknown as e:
                        # Serve meanwhile as a process without identity (the database's only
                        # cluster), caching nothing: the identity is asked for again next time.
                        if not identity.warned:
                            identity.warned = True
                            log.warning("%s: using the database's only cluster until it answers", e)
                        return _claimed(own, ClusterIdentity("", ""))
    return identity.key


@event.listens_for(Session, "before_flush")
def _own_new_rows(session: Session, _context: Any, _instances: Any) -> None:
    """A per-cluster row added through the ORM without a cluster is this process's cluster's
    (a policy without one governs the whole fleet: it is left as it is), never the cluster a
    read is `viewing`."""
    for obj in session.new:
        if getattr(obj, "cluster_id", 0) is None and not isinstance(obj, Policy):
            obj.cluster_id = own_cluster_key(session)


def _claimed(session: Session, identity: ClusterIdentity) -> int:
    uid = identity.uid or (identity.read_uid() if identity.read_uid else "")
    if not uid:
        keys = list(session.scalars(select(Cluster.id).order_by(Cluster.id).limit(2)))
        if len(keys) == 1:
            return keys[0]
        if keys:
            raise ClusterRefused(
                "this database holds several clusters: set RIGHTSIZER_CLUSTER_ID (or let "
                "rightsizer read the cluster) to say which one this process belongs to"
            )
        return _added(session, None, identity.name)
    name = identity.name or uid
    labels = identity.labels
    found = session.scalar(select(Cluster).where(Cluster.uid == uid))
    if found is not None:
        if found.name != name or (labels is not None and found.labels != labels):
            found.name = name
            found.labels = labels if labels is not None else found.labels
            session.commit()
        found_key: int = found.id
        return found_key
    unclaimed = select(func.min(Cluster.id)).where(Cluster.uid.is_(None)).scalar_subquery()
    done = session.execute(
        update(Cluster)
        .where(Cluster.id == unclaimed)
        .values(uid=uid, name=name, labels=labels or {})
    )
    if done.rowcount == 1:  # type: ignore[attr-defined]
        session.commit()
        key = session.scalar(select(Cluster.id).where(Cluster.uid == uid))
        assert key is not None
        return key
    session.rollback()
    # another process of the same cluster may have claimed it between our look-up and update
    raced = session.scalar(select(Cluster.id).where(Cluster.uid == uid))
    if raced is not None:
        return raced
    if session.get_bind().dialect.name == "sqlite":
        other = session.scalar(select(Cluster).order_by(Cluster.id).limit(1))
        held = f"{other.name} ({other.uid})" if other is not None else "another cluster"
        raise ClusterRefused(
            f"cluster {name} ({uid}) cannot join this SQLite database: it holds {held}. "
            "SQLite serves one cluster; a fleet shares a PostgreSQL database "
            "(RIGHTSIZER_DATABASE_URL, docs/database.md)"
        )
    return _added(session, uid, name, labels)


def _added(
    session: Session, uid: str | None, name: str, labels: dict[str, str] | None = None
) -> int:
    row = Cluster(uid=uid, name=name, labels=labels or {})
    session.add(row)
    try:
        session.commit()
    except IntegrityError:  # another process of the same cluster added it first
        session.rollback()
        key = session.scalar(select(Cluster.id).where(Cluster.uid == uid))
        assert key is not None
        return key
    return row.id


def clusters(session: DbSession) -> list[Cluster]:
    """Every cluster of the database, by key."""
    return list(session.scalars(select(Cluster).order_by(Cluster.id)))


class ClusterUnknown(LookupError):
    """No cluster, or several, answer to a name or id (the message says which and lists them)."""


def find_cluster(session: DbSession, ref: str) -> Cluster:
    """The cluster whose id (uid) is `ref`, else the one whose name is: ClusterUnknown when none
    is, or several clusters share that name (then their ids tell them apart)."""
    found: Cluster | None = session.scalar(select(Cluster).where(Cluster.uid == ref))
    if found is not None:
        return found
    named: list[Cluster] = list(
        session.scalars(select(Cluster).where(Cluster.name == ref).limit(2))
    )
    if len(named) == 1:
        return named[0]
    if named:
        raise ClusterUnknown(f"several clusters are named {ref!r}: give the cluster's id")
    known = ", ".join(c.name or c.uid or "(unclaimed)" for c in clusters(session)[:20])
    raise ClusterUnknown(f"no cluster named {ref!r} or with that id; clusters: {known or 'none'}")


@contextmanager
def viewing(key: int | None) -> Iterator[None]:
    """Reads in the block look at cluster `key` (`cluster_key` answers it; None: the process's
    own): for the fleet's views, which only read."""
    token = _VIEWED.set(key)
    try:
        yield
    finally:
        _VIEWED.reset(token)
