"""Policy rows: found, listed, read back as valid policies, and written (created, replaced,
deleted) with their audit event, committed here.

A policy governs the cluster it was created in (`cluster_id`), or the clusters its `clusters`
target names or selects by label (app.documents.cluster_target; `cluster_id` NULL), or every
cluster (both NULL). The rows that may govern this cluster are read with one query (its own and
the fleet's), and a target is matched against the cluster's name, id and labels here.

A row is written only through the API's validation, but a row edited by hand (or by an older
release) may no longer parse: every reader skips it and logs it once per version, through one
`InvalidPolicyLog` it keeps, rather than on every refresh or page.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from sqlalchemy import ColumnElement, or_, select

from app.core.policy import CLUSTER_WIDE, Policy
from app.documents.cluster_target import parse_cluster_target
from app.documents.fields import FieldError
from app.documents.policy import PolicyInvalid
from app.store import audit
from app.store.clusters import cluster_key, own_cluster_key
from app.store.models import Cluster
from app.store.models import Policy as PolicyRow
from app.store.policy_codec import policy_columns, policy_document, policy_from_row
from app.store.session import DbSession
from app.store.versioned import AlreadyExists, commit_created, delete_versioned, update_versioned

log = logging.getLogger(__name__)


class InvalidPolicyLog:
    """Logs each invalid policy row once per version, as "<reader> ignores invalid policy ..."."""

    def __init__(self, reader: str) -> None:
        self.reader = reader
        self.seen: set[tuple[int, int]] = set()

    def report(self, row: PolicyRow, e: PolicyInvalid) -> None:
        key = (row.id, row.version)
        if key not in self.seen:
            self.seen.add(key)
            log.warning(
                "%s ignores invalid policy %s/%s: %s", self.reader, row.namespace, row.name, e
            )


def governing(session: DbSession) -> ColumnElement[bool]:
    """The policies that may govern this cluster: its own and the fleet's (no cluster), whose
    target `targets_this` then checks."""
    return or_(PolicyRow.cluster_id == cluster_key(session), PolicyRow.cluster_id.is_(None))


def targets_this(session: DbSession) -> Callable[[PolicyRow], bool]:
    """Whether a row `governing` read governs this cluster: one without a target does; one with
    a target, when it names or selects this cluster (an unreadable target selects none)."""
    cluster = session.get(Cluster, cluster_key(session))
    name, uid = (cluster.name, cluster.uid) if cluster is not None else ("", None)
    labels = (cluster.labels or {}) if cluster is not None else {}

    def check(row: PolicyRow) -> bool:
        if row.clusters is None:
            return True
        errors: list[FieldError] = []
        target = parse_cluster_target({"clusters": row.clusters}, errors)
        return target is not None and target.matches(name, uid, labels)

    return check


def valid_policies(
    session: DbSession, invalid: InvalidPolicyLog, namespace: str | None = None
) -> list[Policy]:
    """Every policy row governing this cluster that parses (one query); the others are reported
    to `invalid`. With `namespace`, only those that can govern its workloads: its own and the
    cluster defaults."""
    q = select(PolicyRow).where(governing(session))
    if namespace is not None:
        q = q.where(PolicyRow.namespace.in_((namespace, CLUSTER_WIDE)))
    out = []
    mine = targets_this(session)
    for row in filter(mine, session.scalars(q)):
        try:
            out.append(policy_from_row(row))
        except PolicyInvalid as e:
            invalid.report(row, e)
    return out


def find_policy(
    session: DbSession, namespace: str, name: str, to_edit: bool = False
) -> PolicyRow | None:
    """The policy of that name if it governs this cluster; `to_edit`: also a policy of the
    fleet whose target leaves this cluster out (any cluster may edit those; another cluster's
    own policy stays its own)."""
    row: PolicyRow | None = session.scalar(
        select(PolicyRow).where(
            governing(session), PolicyRow.namespace == namespace, PolicyRow.name == name
        )
    )
    if row is None or to_edit or targets_this(session)(row):
        return row
    return None


def policy_exists(session: DbSession, namespace: str, name: str) -> bool:
    """Whether the name is taken in the fleet (a policy's name is unique across clusters)."""
    q = select(PolicyRow.id).where(PolicyRow.namespace == namespace, PolicyRow.name == name)
    return session.scalar(q) is not None


def policy_rows(session: DbSession, namespace: str | None = None) -> list[PolicyRow]:
    """The rows governing this cluster as stored (valid or not), by namespace and name; of one
    namespace if given."""
    q = select(PolicyRow).where(governing(session)).order_by(PolicyRow.namespace, PolicyRow.name)
    if namespace is not None:
        q = q.where(PolicyRow.namespace == namespace)
    return list(filter(targets_this(session), session.scalars(q)))


def create_policy(session: DbSession, doc: dict[str, Any], actor: str) -> PolicyRow:
    """Stores the valid document `doc` (read-only fields dropped) as a new policy with its audit
    event, committed. AlreadyExists (nothing written) when its name is taken in the fleet, even
    by a writer that got in between."""
    ns, name = doc["namespace"], doc["name"]
    if policy_exists(session, ns, name):
        raise AlreadyExists
    # A policy without a target governs the cluster whose API wrote it; with one, the clusters
    # it names or selects (cluster_id NULL).
    own = None if doc.get("clusters") is not None else own_cluster_key(session)
    row = PolicyRow(**policy_columns(doc), cluster_id=own, version=1)
    ref = f"{ns}/{name}"
    audit.record(session, actor, "create", "Policy", ref, f"created policy {ref}", {"after": doc})
    commit_created(session, row)
    return row


def replace_policy(session: DbSession, row: PolicyRow, doc: dict[str, Any], actor: str) -> None:
    """Writes the valid document `doc` over `row` if it is still at the version read, with its
    audit event, committed (StaleVersion, nothing written, otherwise). `row` reads back as
    stored."""
    before = policy_document(row)
    ref = f"{row.namespace}/{row.name}"
    values = policy_columns(doc)
    if doc.get("clusters") is not None:
        values["cluster_id"] = None
    elif row.clusters is not None:  # its target dropped: it governs the cluster editing it
        values["cluster_id"] = own_cluster_key(session)
    # else untargeted before and after: it keeps its cluster (or all)
    update_versioned(session, row, values)
    details = {"before": before, "after": doc}
    audit.record(session, actor, "update", "Policy", ref, f"updated policy {ref}", details)
    session.commit()


def delete_policy(session: DbSession, row: PolicyRow, actor: str) -> None:
    """Deletes `row` if it is still at the version read, with its audit event, committed
    (StaleVersion, nothing written, otherwise)."""
    before = policy_document(row)
    ref = f"{row.namespace}/{row.name}"
    delete_versioned(session, row)
    audit.record(
        session, actor, "delete", "Policy", ref, f"deleted policy {ref}", {"before": before}
    )
    session.commit()
