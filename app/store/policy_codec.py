"""A policy document <-> its database row: the one mapping, used both ways.

`policy_columns` gives the columns the store writes for a valid document (one
app.documents.policy.parse_policy accepted, read-only fields dropped); `policy_document` gives
the document back from a row, as its author wrote it (quantities as given, defaults not added
but `updateMode` and `containerPolicies`). A document stored and read back reads back the same
the second time, and parses to the same policy as the one written (tests/store/
test_policy_codec.py holds both over generated documents). Each group of fields keeps its own
pair of functions in app.documents (`stored_options`, `recommender_document`, ...): this module
is where they meet the columns.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import orjson

from app.core.policy import Policy
from app.documents.node_group_fields import node_group_document
from app.documents.placement_fields import placement_document, stored_placement
from app.documents.policy import parse_policy
from app.documents.recommender_fields import recommender_document, stored_recommender
from app.documents.target import target_columns, target_document
from app.documents.update_fields import stored_options
from app.store.models import Policy as PolicyRow


def policy_columns(doc: dict[str, Any]) -> dict[str, Any]:
    """The row's columns for a valid document (its identity, the rest as written)."""
    recommender, recommender_params = stored_recommender(doc)
    return {
        "name": doc["name"],
        "namespace": doc["namespace"],
        **target_columns(doc),  # kind, name and the apiVersion and selector as written
        "update_mode": doc.get("updateMode", "Off"),
        "min_replicas": doc.get("minReplicas"),
        "container_policies": doc.get("containerPolicies") or [],
        "update_options": stored_options(doc),  # app.documents.update_fields
        "recommender": recommender,
        "recommender_params": recommender_params,
        "node_group_label": doc.get("nodeGroupLabel"),  # app.documents.node_group_fields
        "placement": stored_placement(doc),  # app.documents.placement_fields
        "clusters": doc.get("clusters"),  # app.documents.cluster_target; absent: its one cluster
    }


def policy_document(row: PolicyRow) -> dict[str, Any]:
    """The policy as users wrote it (quantities as given), from its database row."""
    doc: dict[str, Any] = {"name": row.name, "namespace": row.namespace}
    target = target_document(row.target_kind, row.target_name, row.target_options)
    if target is not None:
        doc["target"] = target
    doc["updateMode"] = row.update_mode
    if row.min_replicas is not None:
        doc["minReplicas"] = row.min_replicas
    doc["containerPolicies"] = row.container_policies or []
    doc.update(row.update_options or {})  # app.documents.update_fields, as written
    doc.update(recommender_document(row.recommender, row.recommender_params))
    doc.update(node_group_document(row.node_group_label))
    doc.update(placement_document(row.placement))
    if row.clusters is not None:
        doc["clusters"] = row.clusters
    return doc


def policy_from_row(row: PolicyRow) -> Policy:
    """Rows were validated on the way in; one edited by hand into nonsense raises PolicyInvalid
    (app.documents.policy). A row whose every column is as when it was last parsed gives the
    same (immutable) Policy again: every reader parses the policies of its cluster (the
    webhook's reload every few seconds, each recommender run, each overview), and with one
    policy per workload, as VPA's objects are imported, parsing was most of their cost."""
    key = _row_values(row)
    with _LOCK:
        policy = _PARSED.get(key)
        if policy is not None:
            _PARSED.move_to_end(key)
            return policy
    policy = parse_policy(
        policy_document(row), created=row.created_at, id_=row.id, changed=row.updated_at
    )
    with _LOCK:
        _PARSED[key] = policy
        while len(_PARSED) > PARSED_KEPT:
            _PARSED.popitem(last=False)  # the least recently read
    return policy


# Policies parsed, by their row's values: a row edited in any column (by the API, or by hand in
# SQL without its version moving) is a new key, parsed anew; an invalid row is never kept.
PARSED_KEPT = 50_000
_PARSED: OrderedDict[tuple[Any, ...], Policy] = OrderedDict()
_LOCK = threading.Lock()
_COLUMNS = tuple(c.key for c in PolicyRow.__table__.columns)


def _row_values(row: PolicyRow) -> tuple[Any, ...]:
    return tuple(_hashable(getattr(row, c)) for c in _COLUMNS)


def _hashable(value: Any) -> Any:
    if isinstance(value, dict | list):  # JSON columns
        return orjson.dumps(value)  # keys in their order: a document as written
    return value
