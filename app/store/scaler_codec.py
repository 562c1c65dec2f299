"""A proportional scaler's document <-> its database row: the one mapping, used both ways.

`scaler_columns` gives the columns the store writes for a valid document (one
app.documents.scaler.validate_scaler accepted, read-only fields dropped), `scaler_document` the
document back from a row (params as stored: JSON text decoded). What the scaler job last did
(`status`) is the API's to add: it is not part of what the author wrote.
"""

from __future__ import annotations

from typing import Any

from app.documents.scaler import normalized_params
from app.store.models import Scaler


def scaler_columns(doc: dict[str, Any]) -> dict[str, Any]:
    """The row's columns for a valid document."""
    target = doc["target"]
    return {
        "name": doc["name"],
        "target_namespace": target["namespace"],
        "target_kind": target["kind"],
        "target_name": target["name"],
        "params": normalized_params(doc["params"]),
        "node_selector": doc.get("nodeSelector") or None,
        "skip_taints": doc.get("skipTaints") or None,
        "enabled": doc.get("enabled", True),
        "behavior": doc.get("behavior"),
    }


def scaler_document(row: Scaler) -> dict[str, Any]:
    """The scaler as its author wrote it (params as stored), from its database row."""
    doc: dict[str, Any] = {
        "name": row.name,
        "target": {
            "namespace": row.target_namespace,
            "kind": row.target_kind,
            "name": row.target_name,
        },
        "params": row.params,
    }
    if row.node_selector:
        doc["nodeSelector"] = row.node_selector
    if row.skip_taints:
        doc["skipTaints"] = row.skip_taints
    doc["enabled"] = row.enabled
    if row.behavior is not None:
        doc["behavior"] = row.behavior
    return doc
