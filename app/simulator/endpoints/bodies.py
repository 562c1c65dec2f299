"""Request bodies decoded as kube-apiserver decodes them, with server-side field validation.

A body is JSON or, from client-go's generated clients, protobuf (apiserver/protobuf.py); any
other media type is a 415. An object body (create, update) must be of the resource's kind (400
naming apiVersion or kind otherwise). A JSON one goes through `fieldValidation`
(apiserver/fieldvalidation.py): Strict refuses unknown or duplicate fields with 400, Warn and
Ignore drop them, Warn answering with a Warning header for each; protobuf has no such check (a
field number the release does not know is dropped silently). A patched object is checked the
same way after the patch applies, a violation under Strict being a 422 on field `patch`
(apiserver `pkg/endpoints/handlers/patch.go`). A create or update whose values do not fit the
kind's Go types (`replicas: "two"`) is a 400 under every directive, as decoding into typed
structs refuses it (apiserver/jsontypes.py). Every object decoded, patched or applied comes out
with its quantities as kube-apiserver stores them (`cpu: 0.5` as "500m": fieldvalidation.check;
server-side apply: apply.applied).
A DELETE's body is DeleteOptions, in JSON or protobuf (`handlers/delete.go`).
"""

from __future__ import annotations

import json
from typing import Any

from app.simulator.apiserver import fieldvalidation as fv
from app.simulator.apiserver import jsontypes, protobuf, schema
from app.simulator.apiserver.errors import ApiError, bad_request
from app.simulator.apiserver.gofmt import go_format
from app.simulator.apiserver.resources import ResourceType
from app.simulator.apiserver.version import KubeVersion
from app.simulator.endpoints.messages import Request

_JSON_TYPES = ("application/json", "", "*/*")
_JSON_PATCH = "application/json-patch+json"
_CHECKED_PATCHES = (
    _JSON_PATCH,
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)


def media_type(req: Request) -> str:
    return req.headers.get("content-type", "application/json").split(";")[0].strip().lower()


def decode(req: Request) -> Any:
    """The JSON body (each object keeps its duplicate members for field validation); 415 for a
    media type the simulator does not read."""
    media = media_type(req)
    if media not in _JSON_TYPES:
        raise ApiError(
            415,
            f"the body of the request was in an unknown format - accepted media types "
            f'include: application/json, {protobuf.MEDIA_TYPE} (got "{media}")',
        )
    try:
        return fv.loads(req.body)
    except (ValueError, UnicodeDecodeError) as e:
        raise bad_request(f"couldn't get version/kind; json parse error: {e}") from None


def object_body(
    req: Request, rt: ResourceType, version: KubeVersion, options_kind: str
) -> tuple[dict[str, Any], list[str]]:
    """(the object of a create or update, the field validation warnings to send)."""
    directive = fv.directive(req.query, options_kind)
    defs = schema.definitions(version.minor)
    root = defs.name_for(rt.group, rt.version, rt.kind)
    if media_type(req) == protobuf.MEDIA_TYPE and root is not None:
        env = protobuf.envelope(req.body)
        _check_kind(rt, env.api_version, env.kind)
        obj = {"apiVersion": rt.api_version, "kind": rt.kind, **protobuf.decode(root, env.raw)}
        return fv.check(defs, root, obj)[0], []
    obj = decode(req)
    if not isinstance(obj, dict):
        raise bad_request(
            "couldn't get version/kind; json parse error: json: cannot "
            "unmarshal array into Go value of type struct"
        )
    _check_kind(rt, obj.get("apiVersion"), obj.get("kind"))
    if root is None:
        return fv.plain(obj), []
    wrong_type = jsontypes.decode_error(defs, root, obj)  # decoding fails before any validation
    if wrong_type is not None:
        raise fv.cannot_handle(rt.kind, rt.api_version, wrong_type)
    pruned, errors = fv.check(defs, root, obj)
    if errors and directive == fv.STRICT:
        raise fv.refuse_body(rt.kind, rt.api_version, errors)
    return pruned, errors if directive == fv.WARN else []


def _check_kind(rt: ResourceType, api_version: Any, kind: Any) -> None:
    if api_version and api_version != rt.api_version:
        raise bad_request(
            f"the API version in the data ({api_version}) does not match the "
            f"expected API version ({rt.api_version})"
        )
    if kind and kind != rt.kind:
        raise bad_request(
            f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})"
        )


def patched_object(
    req: Request, rt: ResourceType, version: KubeVersion, new: dict[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """(the patched object without unknown fields, the warnings to send) for a JSON, merge or
    strategic merge patch; other patch types are returned as they are (server-side apply's
    object is decoded in apply.applied)."""
    directive = fv.directive(req.query, "PatchOptions")
    media = media_type(req)
    defs = schema.definitions(version.minor)
    root = defs.name_for(rt.group, rt.version, rt.kind)
    if media not in _CHECKED_PATCHES or root is None or directive == fv.IGNORE:
        if root is not None and media in _CHECKED_PATCHES:
            return fv.check(defs, root, new)[0], []
        return new, []
    try:
        patch = fv.loads(req.body)
    except (ValueError, UnicodeDecodeError):
        patch = None  # cannot happen: the patch applied, so it decoded
    dups = fv.duplicates(patch)
    if media == _JSON_PATCH:
        dups = [f"json patch {e}" for e in dups]
    pruned, unknown = fv.check(defs, root, new)
    errors = dups + unknown
    if errors and directive == fv.STRICT:
        # handlers/patch.go shows the patched object for JSON and merge patches, the patch
        # map (Go's %+v) for a strategic merge patch.
        shown = (
            go_format(fv.plain(patch))
            if media == "application/strategic-merge-patch+json"
            else json.dumps(new, separators=(",", ":"))
        )
        raise fv.refuse_patch(shown, errors)
    return pruned, errors


_DELETE_OPTIONS = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"


def delete_body(req: Request) -> dict[str, Any] | None:
    """The DeleteOptions a DELETE carries in its body (JSON or protobuf, which client-go's
    generated clients send), None without a body; 400 when it is not DeleteOptions."""
    if not req.body.strip():
        return None
    if media_type(req) == protobuf.MEDIA_TYPE:
        env = protobuf.envelope(req.body)
        kind = env.kind
        options: Any = protobuf.decode(_DELETE_OPTIONS, env.raw)
    else:
        try:
            options = json.loads(req.body)
        except (ValueError, UnicodeDecodeError) as e:
            raise bad_request(f"error decoding DeleteOptions: {e}") from None
        kind = options.get("kind", "") if isinstance(options, dict) else ""
    if not isinstance(options, dict) or kind not in ("", "DeleteOptions"):
        raise bad_request("decoded object cannot be converted to DeleteOptions")
    return options
