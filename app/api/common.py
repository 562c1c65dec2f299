"""What the editable resources (policies, scalers) share: bodies, ETags, merge patch (their
writes, audited and committed, are app.store.policies' and app.store.scalers')."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask import Response, jsonify, request

from app.api.body import refused, request_json
from app.api.errors import ApiError
from app.documents.fields import FieldError

INT32_MAX = 2**31 - 1


def rfc3339(d: datetime | None) -> str | None:
    if d is None:
        return None
    if d.tzinfo is None:  # SQLite hands back naive datetimes: they were written as UTC
        d = d.replace(tzinfo=UTC)
    return d.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def json_body() -> Any:
    """The request's JSON, whatever its Content-Type claims (app.api.body: 400 when it is not
    JSON, 413 over the size limit)."""
    return request_json()


def json_object_body() -> dict[str, Any]:
    body = json_body()
    if not isinstance(body, dict):
        raise ApiError(400, "BadRequest", "the body must be a JSON object")
    return body


def invalid(errors: list[FieldError], what: str) -> ApiError:
    """422 listing every bad field; 400 naming the fields whose JSON text does not parse, as a
    body that does not parse is (app.api.body), when there are any."""
    unparsable = [e for e in errors if e.unparsable]
    if unparsable:
        message = "; ".join(f"{e.field}: {e.message}" for e in unparsable)
        return refused(message, [e.as_dict() for e in unparsable])
    fields = ", ".join(dict.fromkeys(e.field or "(body)" for e in errors))
    return ApiError(
        422, "Invalid", f"{what} is not valid: {fields}", details=[e.as_dict() for e in errors]
    )


def etag(row: Any) -> str:
    """The version, plus the row's id and creation time: a deleted and re-created object (SQLite
    may even reuse the id) never matches an ETag of the old one."""
    created = row.created_at
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    return f'"{row.version}-{row.id}-{round(created.timestamp() * 1e6):x}"'


def check_preconditions(current_etag: str, current_version: int, body: dict[str, Any]) -> None:
    """If-Match (a list of ETags or *) and a `version` in the body must match: else 412."""
    header = request.headers.get("If-Match")
    if header is not None:
        tags = [t.strip() for t in header.split(",")]
        if "*" not in tags and current_etag not in tags:
            raise ApiError(
                412,
                "PreconditionFailed",
                f"If-Match {header} does not match the current ETag {current_etag}: "
                "it changed since you read it; get it again and retry",
            )
    version = body.get("version")
    if version is not None and version != current_version:
        raise ApiError(
            412,
            "PreconditionFailed",
            f"version {version!r} is not the current version {current_version}: "
            "it changed since you read it; get it again and retry",
        )


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396 JSON merge patch: objects merge, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def check_identity(body: dict[str, Any], url: dict[str, str]) -> dict[str, Any]:
    """PUT and PATCH name the object in the URL: the body may repeat it, not change it."""
    out = dict(body)
    errors = []
    for key, value in url.items():
        if key not in out or out[key] is None:
            out[key] = value
        elif out[key] != value:
            errors.append(FieldError(key, f"is {value!r} in the URL; it cannot be changed"))
    if errors:
        raise invalid(errors, "the request")
    return out


def with_metadata(doc: dict[str, Any], row: Any) -> dict[str, Any]:
    """The read-only fields every stored document carries: version and times."""
    doc["version"] = row.version
    doc["createdAt"] = rfc3339(row.created_at)
    doc["updatedAt"] = rfc3339(row.updated_at)
    return doc


def stored_response(doc: dict[str, Any], row: Any, status: int, location: str) -> Response:
    """A document with its ETag, and its Location when it was just created."""
    resp = jsonify(doc)
    resp.status_code = status
    resp.headers["ETag"] = etag(row)
    if status == 201:
        resp.headers["Location"] = location
    return resp


def changed_meanwhile(kind: str, ref: str) -> ApiError:
    return ApiError(412, "PreconditionFailed", f"{kind.lower()} {ref} changed meanwhile; retry")
