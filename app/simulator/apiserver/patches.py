"""PATCH bodies: JSON Patch (RFC 6902), JSON Merge Patch (RFC 7386) and strategic merge patch
(strategic.py, with the merge keys and strategies of the kind's schema, kindmeta.py).

Server-side apply (`application/apply-patch+yaml`) is not a patch of the stored object but a
merge with field ownership: managedfields.py.
"""

from __future__ import annotations

import json
from typing import Any

import jsonpatch
import jsonpointer

from app.simulator.apiserver import kindmeta, strategic
from app.simulator.apiserver.errors import ApiError, bad_request
from app.simulator.apiserver.jsonnumbers import Literal

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"


def apply_patch(
    content_type: str, original: dict[str, Any], body: bytes, minor: int | None = None
) -> dict[str, Any]:
    """The patched object; 400 for an undecodable patch, 422 for one that cannot apply. A
    strategic merge patch merges as the schema of `original`'s kind in release 1.`minor` says."""
    media = content_type.split(";")[0].strip()
    if media not in (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH):
        raise unsupported_media_type()
    try:
        # A JSON Patch's values reach the Go structs as sent (evanphx/json-patch keeps raw
        # messages): each float keeps its text for a Quantity; the merge patches go through
        # Go's interface{} (float64), as Python's float does.
        patch = json.loads(body, parse_float=Literal if media == JSON_PATCH else float)
    except (ValueError, UnicodeDecodeError) as e:
        raise bad_request(f"error decoding patch: {e}") from None
    if media == JSON_PATCH:
        if not isinstance(patch, list):
            raise bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
        try:
            applied: dict[str, Any] = jsonpatch.JsonPatch(patch).apply(original)
            return applied
        except jsonpatch.InvalidJsonPatch as e:
            raise bad_request(f"invalid JSON Patch: {e}") from None
        except jsonpatch.JsonPatchTestFailed:
            # a failed `test`: kube-apiserver's generic 422 (handlers/patch.go, ErrTestFailed)
            raise ApiError(
                422, "the server rejected our request due to an error in our request", "Invalid", {}
            ) from None
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as e:
            raise ApiError(422, str(e)) from None
    if not isinstance(patch, dict):
        raise bad_request(
            "json: cannot unmarshal array into Go value of type map[string]interface {}"
        )
    if media == MERGE_PATCH:
        merged: dict[str, Any] = merge_patch(original, patch)
        return merged
    meta = kindmeta.lookup(str(original.get("apiVersion")), str(original.get("kind")), minor)
    return strategic.apply(original, patch, meta)


def unsupported_media_type() -> ApiError:
    """negotiation.NewUnsupportedMediaTypeError for the patch types a resource accepts."""
    return ApiError(
        415,
        f"the body of the request was in an unknown format - accepted media "
        f"types include: {JSON_PATCH}, {MERGE_PATCH}, {STRATEGIC_MERGE_PATCH}, {APPLY_PATCH}",
    )


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result
