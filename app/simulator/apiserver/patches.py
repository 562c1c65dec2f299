"""PATCH bodies: JSON Patch (RFC 6902), JSON Merge Patch (RFC 7386) and strategic merge patch.

Strategic merge is implemented for what clients of this API send: maps merge recursively, `null`
deletes a key, lists of objects that Kubernetes merges by a key (containers by `name`, ...) merge
element-wise, `$patch: delete` removes such an element, and every other list is replaced.
"""

from __future__ import annotations

import json
from typing import Any

import jsonpatch
import jsonpointer

from app.simulator.apiserver.errors import ApiError, bad_request

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"

# Field name -> merge key, for lists the OpenAPI marks `x-kubernetes-patch-merge-key`.
_MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "env": "name",
    "ports": "containerPort",
    "conditions": "type",
    "imagePullSecrets": "name",
    "containerStatuses": "name",
    "initContainerStatuses": "name",
    "ownerReferences": "uid",
    "addresses": "type",
}


def apply_patch(content_type: str, original: dict[str, Any], body: bytes) -> dict[str, Any]:
    """The patched object; 400 for an undecodable patch, 422 for one that cannot apply."""
    media = content_type.split(";")[0].strip()
    try:
        patch = json.loads(body)
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
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as e:
            raise ApiError(422, str(e)) from None
    if not isinstance(patch, dict):
        raise bad_request(
            "json: cannot unmarshal array into Go value of type map[string]interface {}"
        )
    if media == MERGE_PATCH:
        merged: dict[str, Any] = merge_patch(original, patch)
        return merged
    if media == STRATEGIC_MERGE_PATCH:
        strategic: dict[str, Any] = strategic_merge_patch(original, patch)
        return strategic
    raise ApiError(
        415,
        f"the body of the request was in an unknown format - accepted media "
        f"types include: {JSON_PATCH}, {MERGE_PATCH}, {STRATEGIC_MERGE_PATCH}",
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


def strategic_merge_patch(target: Any, patch: Any, field: str = "") -> Any:
    if isinstance(patch, dict):
        if patch.get("$patch") == "replace":
            return {k: v for k, v in patch.items() if k != "$patch"}
        result = dict(target) if isinstance(target, dict) else {}
        for key, value in patch.items():
            if key.startswith("$"):
                continue
            if value is None:
                result.pop(key, None)
            else:
                result[key] = strategic_merge_patch(result.get(key), value, key)
        return result
    if isinstance(patch, list) and field in _MERGE_KEYS and isinstance(target, list):
        return _merge_list(target, patch, _MERGE_KEYS[field])
    return patch


def _merge_list(target: list[Any], patch: list[Any], key: str) -> list[Any]:
    result = list(target)
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            raise ApiError(422, f"map: {item!r} does not contain declared merge key: {key}")
        pos = next(
            (
                i
                for i, cur in enumerate(result)
                if isinstance(cur, dict) and cur.get(key) == item[key]
            ),
            None,
        )
        if item.get("$patch") == "delete":
            if pos is not None:
                del result[pos]
        elif pos is None:
            result.append({k: v for k, v in item.items() if k != "$patch"})
        else:
            result[pos] = strategic_merge_patch(result[pos], item)
    return result
