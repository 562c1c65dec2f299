"""Proportional scalers over REST: /api/v1/scalers[/<name>], the same contract as policies.

The document and its validation are app/documents/scaler.py's (the CLI checks files with it too);
what the scaler job last did is under the read-only `status`.
"""

from __future__ import annotations

import time
from typing import Any

from flask import Blueprint, Response, jsonify, url_for
from flask.typing import ResponseReturnValue

from app.api.auth import requires
from app.api.common import (
    changed_meanwhile,
    check_identity,
    check_preconditions,
    etag,
    invalid,
    json_object_body,
    merge_patch,
    rfc3339,
    stored_response,
    with_metadata,
)
from app.api.errors import ApiError
from app.api.fleet import per_cluster
from app.api.query import reject_unknown_args
from app.core.scaling.behavior import BehaviorError, History, decide, parse_behavior
from app.core.scaling.proportional import ParamsError, cluster_status, parse_params, replicas
from app.documents.scaler import preview, validate_scaler
from app.documents.stored import without_read_only
from app.kube.client import ClusterUnreachable, api_client
from app.kube.scale import ScaleClient, ScaleFailed, TargetMissing, list_nodes
from app.settings import settings
from app.store import scalers as scaler_store
from app.store.extensions import db
from app.store.models import Scaler
from app.store.scaler_codec import scaler_document
from app.store.scalers import all_scalers, find_scaler
from app.store.versioned import AlreadyExists, StaleVersion
from app.web.auth import actor

bp = Blueprint("scalers", __name__)


def document(row: Scaler) -> dict[str, Any]:
    doc = scaler_document(row)
    doc["status"] = {
        "lastProposed": row.last_proposed,
        "lastApplied": row.last_applied,
        "lastRunTime": rfc3339(row.last_run_at),
        "message": row.last_message,
    }
    return with_metadata(doc, row)


def _respond(row: Scaler, status: int = 200) -> Response:
    return stored_response(document(row), row, status, url_for("scalers.get_scaler", name=row.name))


def _find(name: str) -> Scaler:
    row = find_scaler(db.session, name)
    if row is None:
        raise ApiError(404, "NotFound", f"no scaler {name!r}")
    return row


def _validated(doc: dict[str, Any]) -> dict[str, Any]:
    doc = without_read_only(doc)
    errors = validate_scaler(doc)
    if errors:
        raise invalid(errors, "the scaler")
    return doc


@bp.get("/scalers")
@requires("list", "scalers")
@per_cluster
def list_scalers() -> ResponseReturnValue:
    reject_unknown_args(("cluster",))
    rows = all_scalers(db.session)
    return jsonify({"items": [document(r) for r in rows]})


@bp.get("/scalers/<name>")
@requires("get", "scalers")
@per_cluster
def get_scaler(name: str) -> ResponseReturnValue:
    reject_unknown_args(("cluster",))
    return _respond(_find(name))


@bp.post("/scalers")
@requires("create", "scalers")
def create_scaler() -> ResponseReturnValue:
    reject_unknown_args(())
    doc = _validated(json_object_body())
    name = doc["name"]
    try:
        row = scaler_store.create_scaler(db.session, doc, actor())
    except AlreadyExists:
        raise ApiError(409, "AlreadyExists", f"scaler {name!r} already exists") from None
    return _respond(row, 201)


def _replace(row: Scaler, body: dict[str, Any], doc: dict[str, Any]) -> Response:
    check_preconditions(etag(row), row.version, body)
    name = row.name
    try:
        scaler_store.replace_scaler(db.session, row, _validated(doc), actor())
    except StaleVersion:
        raise changed_meanwhile("Scaler", name) from None
    return _respond(row)


@bp.put("/scalers/<name>")
@requires("update", "scalers")
def replace_scaler(name: str) -> ResponseReturnValue:
    reject_unknown_args(())
    body = json_object_body()
    row = _find(name)
    return _replace(row, body, check_identity(body, {"name": name}))


@bp.patch("/scalers/<name>")
@requires("patch", "scalers")
def patch_scaler(name: str) -> ResponseReturnValue:
    """A JSON merge patch (RFC 7396), e.g. {"enabled": false} or {"params": {"linear": {...}}}.

    Note that merge patch merges objects: to switch from linear to ladder, send
    {"params": {"linear": null, "ladder": {...}}}.
    """
    reject_unknown_args(())
    patch = json_object_body()
    row = _find(name)
    merged = merge_patch(scaler_document(row), without_read_only(patch))
    return _replace(row, patch, check_identity(merged, {"name": name}))


@bp.delete("/scalers/<name>")
@requires("delete", "scalers")
def delete_scaler(name: str) -> ResponseReturnValue:
    reject_unknown_args(())
    row = _find(name)
    check_preconditions(etag(row), row.version, {})
    try:
        scaler_store.delete_scaler(db.session, row, actor())
    except StaleVersion:
        raise changed_meanwhile("Scaler", name) from None
    return "", 204


@bp.get("/scalers/<name>/preview")
@requires("get", "scalers")
def preview_scaler(name: str) -> ResponseReturnValue:
    """What the scaler proposes for the cluster as it is now, and what its behavior allows."""
    reject_unknown_args(())
    row = _find(name)
    try:
        api = api_client(settings().cluster.kubeconfig or None)
        nodes = list_nodes(api)
        current = ScaleClient(api).get_replicas(
            row.target_namespace, row.target_kind, row.target_name
        )
    except TargetMissing as e:
        raise ApiError(404, "NotFound", str(e)) from None
    except (ClusterUnreachable, ScaleFailed) as e:
        raise ApiError(503, "ServiceUnavailable", str(e)) from None
    except Exception as e:
        raise ApiError(
            503, "ServiceUnavailable", f"cluster not reachable: {type(e).__name__}"
        ) from None
    try:
        status = cluster_status(nodes, row.node_selector or None, row.skip_taints or ())
        proposed = replicas(parse_params(row.params), status)
        history = History.from_json(row.history)
        decision = decide(
            current,
            proposed,
            history.proposals,
            history.changes,
            time.time(),
            parse_behavior(row.behavior),
        )
    except (ParamsError, BehaviorError, ValueError) as e:
        raise ApiError(409, "Conflict", f"the stored scaler cannot be evaluated: {e}") from None
    return jsonify(preview(current, proposed, decision, status))
