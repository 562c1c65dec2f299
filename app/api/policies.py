"""Policies over REST: /api/v1/policies[/<namespace>/<name>], with ETags and an audit trail.

Validation is app.documents.policy.parse_policy, the parser every other path uses, so the API
can store nothing the webhook or recommender would read differently. Stored documents keep what
the user wrote (quantities as given). Writes are conditional on the row's version in the UPDATE
itself, so two editors racing cannot both win even between our read and our write. A write that
succeeds but cannot act (a target in a namespace never sized, or not in the cluster now) answers
with `Warning` headers as kube-apiserver does (app.core.policy_warnings, app.kube.targets).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, request, url_for
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
    stored_response,
    with_metadata,
)
from app.api.errors import ApiError
from app.api.fleet import per_cluster
from app.api.query import reject_unknown_args
from app.core.job_families import mode_warning
from app.core.policy_warnings import (
    TargetFacts,
    never_sized_reasons,
    policy_warnings,
    warning_header,
)
from app.core.workload_key import WorkloadKey
from app.documents.placement_fields import placement_warning
from app.documents.policy import PolicyInvalid, parse_policy
from app.documents.stored import without_read_only
from app.kube.client import ClusterUnreachable, api_client
from app.kube.targets import target_facts
from app.settings import settings
from app.store import policies as policy_store
from app.store.extensions import db
from app.store.models import Policy as PolicyRow
from app.store.policies import find_policy, policy_rows
from app.store.policy_codec import policy_document
from app.store.versioned import AlreadyExists, StaleVersion
from app.web.auth import actor

bp = Blueprint("policies", __name__)


def document(row: PolicyRow) -> dict[str, Any]:
    return with_metadata(policy_document(row), row)


def _respond(row: PolicyRow, status: int = 200, warn: bool = False) -> Response:
    location = url_for("policies.get_policy", namespace=row.namespace, name=row.name)
    resp = stored_response(document(row), row, status, location)
    for text in _warnings(row) if warn else ():
        resp.headers.add("Warning", warning_header(text))
    return resp


# A write waits for these answers: a cluster that does not answer costs seconds, not minutes.
CHECK_TIMEOUT = (3.0, 5.0)


def _warnings(row: PolicyRow) -> list[str]:
    """What a write of `row` warns about (app.core.policy_warnings): a namespace rightsizer never
    sizes, or a namespace or workload the cluster does not have now; an updateMode the
    updater never applies to Jobs (app.core.job_families); and a placement no scheduler
    serves here (app.documents.placement_fields)."""
    cluster = settings().cluster
    never = never_sized_reasons(cluster.namespace, cluster.excluded_namespaces)
    target = (
        WorkloadKey(row.namespace, row.target_kind, row.target_name or "")
        if row.target_kind
        else None
    )
    facts = None
    if row.namespace not in never:
        try:
            api = api_client(cluster.kubeconfig or None, timeout=CHECK_TIMEOUT, qps=0)
        except ClusterUnreachable as e:
            facts = TargetFacts(unchecked=str(e))
        else:
            with api:
                facts = target_facts(api, row.namespace, target)
    jobs = mode_warning(
        row.target_kind, (row.target_options or {}).get("selector"), row.update_mode
    )
    placement = placement_warning(row.placement, settings().webhook.placement_scheduler)
    extra = [w for w in (jobs, placement) if w]
    return policy_warnings(row.namespace, target, never, facts) + extra


def _find(namespace: str, name: str, to_edit: bool = False) -> PolicyRow:
    row = find_policy(db.session, namespace, name, to_edit)
    if row is None:
        raise ApiError(404, "NotFound", f"no policy {name!r} in namespace {namespace!r}")
    return row


def _validated(doc: dict[str, Any]) -> dict[str, Any]:
    """The document to store (read-only fields dropped); 422 listing every bad field."""
    doc = without_read_only(doc)
    try:
        parse_policy(doc)
    except PolicyInvalid as e:
        raise invalid(e.errors, "the policy") from None
    return doc


@bp.get("/policies")
@requires("list", "policies", namespaced=True)
@per_cluster
def list_policies() -> ResponseReturnValue:
    reject_unknown_args(("namespace", "cluster"))
    rows = policy_rows(db.session, request.args.get("namespace"))
    return jsonify({"items": [document(r) for r in rows]})


@bp.get("/policies/<namespace>/<name>")
@requires("get", "policies", namespaced=True)
@per_cluster
def get_policy(namespace: str, name: str) -> ResponseReturnValue:
    reject_unknown_args(("cluster",))
    return _respond(_find(namespace, name))


@bp.post("/policies")
@requires("create", "policies", namespaced=True)
def create_policy() -> ResponseReturnValue:
    reject_unknown_args(())
    doc = _validated(json_object_body())
    ns, name = doc["namespace"], doc["name"]
    try:
        row = policy_store.create_policy(db.session, doc, actor())
    except AlreadyExists:
        raise ApiError(
            409, "AlreadyExists", f"policy {name!r} in namespace {ns!r} already exists"
        ) from None
    return _respond(row, 201, warn=True)


def _replace(row: PolicyRow, body: dict[str, Any], doc: dict[str, Any]) -> Response:
    check_preconditions(etag(row), row.version, body)
    doc = _validated(doc)
    try:
        policy_store.replace_policy(db.session, row, doc, actor())
    except StaleVersion:
        raise changed_meanwhile("Policy", f"{doc['namespace']}/{doc['name']}") from None
    return _respond(row, warn=True)


@bp.put("/policies/<namespace>/<name>")
@requires("update", "policies", namespaced=True)
def replace_policy(namespace: str, name: str) -> ResponseReturnValue:
    reject_unknown_args(())
    body = json_object_body()
    row = _find(namespace, name, to_edit=True)
    return _replace(row, body, check_identity(body, {"namespace": namespace, "name": name}))


@bp.patch("/policies/<namespace>/<name>")
@requires("patch", "policies", namespaced=True)
def patch_policy(namespace: str, name: str) -> ResponseReturnValue:
    """A JSON merge patch (RFC 7396): send only what changes; null removes a field."""
    reject_unknown_args(())
    patch = json_object_body()
    row = _find(namespace, name, to_edit=True)
    merged = merge_patch(policy_document(row), without_read_only(patch))
    return _replace(row, patch, check_identity(merged, {"namespace": namespace, "name": name}))


@bp.delete("/policies/<namespace>/<name>")
@requires("delete", "policies", namespaced=True)
def delete_policy(namespace: str, name: str) -> ResponseReturnValue:
    reject_unknown_args(())
    row = _find(namespace, name, to_edit=True)
    check_preconditions(etag(row), row.version, {})
    try:
        policy_store.delete_policy(db.session, row, actor())
    except StaleVersion:
        raise changed_meanwhile("Policy", f"{namespace}/{name}") from None
    return "", 204
