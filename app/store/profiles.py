"""The workloads' daily profiles (app.core.placement.profile) in the database, one row per workload.

The leader keeps the profiles in memory and stores them all every `EVERY` seconds (an hour) in
one transaction: the cluster's rows replaced by the profiles it holds, so a workload forgotten
(gone, idle) loses its row. A new leader loads them at its first run (`load_profiles`) and
resumes where the last one stored them, instead of learning a whole day anew; at most an hour of
samples is lost with a leader. A row that is not a profile (edited by hand: another length,
NaN, negative) is logged and skipped; the others load.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from sqlalchemy import delete, insert, select

from app.core.placement.profile import Profiles
from app.core.workload_key import WorkloadKey
from app.store.clusters import cluster_key
from app.store.models import WorkloadProfileRow as Row
from app.store.session import DbSession

log = logging.getLogger(__name__)

EVERY = 3600.0  # seconds between two stores of the profiles


def save_profiles(session: DbSession, profiles: Profiles, at: float) -> int:
    """Replaces the cluster's stored profiles with `profiles` (keyed by WorkloadKey), stored at
    `at` (Unix seconds). Committed; returns the rows written."""
    cluster = cluster_key(session)
    stamp = datetime.fromtimestamp(at, UTC)
    rows = [
        {
            "cluster_id": cluster,
            "namespace": w.namespace,
            "kind": w.kind,
            "name": w.name,
            "data": data,
            "saved_at": stamp,
        }
        for w, data in profiles.encoded()
        if isinstance(w, WorkloadKey)
    ]
    session.execute(delete(Row).where(Row.cluster_id == cluster))
    if rows:
        session.execute(insert(Row), rows)
    session.commit()
    return len(rows)


def load_profiles(session: DbSession, profiles: Profiles) -> tuple[int, int]:
    """`profiles` replaced by the cluster's stored ones; (loaded, skipped as unreadable)."""
    profiles.clear()
    loaded = skipped = 0
    query = select(Row.namespace, Row.kind, Row.name, Row.data).where(
        Row.cluster_id == cluster_key(session)
    )
    for namespace, kind, name, data in session.execute(query):
        key = WorkloadKey(namespace, kind, name)
        if profiles.restore(key, bytes(data)):
            loaded += 1
        else:
            skipped += 1
            log.warning("workload_profiles %s: not a daily profile; skipped", key)
    return loaded, skipped
