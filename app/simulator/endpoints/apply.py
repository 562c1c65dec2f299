"""Field managers of writes and server-side apply over HTTP (apiserver/managedfields.py).

`PATCH` with `application/apply-patch+yaml` merges the applied configuration into the object,
or creates it (201), as its `fieldManager` (required); `force=true` takes fields over from their
other managers instead of a 409. Every other write records its manager: the `fieldManager`
parameter, else the User-Agent's product (`managerOrUserAgent` in apiserver
`pkg/endpoints/handlers/rest.go`). PatchOptions are validated as `ValidatePatchOptions`
(apimachinery `pkg/apis/meta/v1/validation`) does: 422 on `PatchOptions.meta.k8s.io`.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from app.simulator.apiserver import fieldpaths, kindmeta, kinds, managedfields, podutil, schema
from app.simulator.apiserver import fieldvalidation as fv
from app.simulator.apiserver.errors import ApiError, FieldError, bad_request
from app.simulator.apiserver.patches import APPLY_PATCH
from app.simulator.apiserver.resources import POD, ResourceType
from app.simulator.apiserver.store import Entry
from app.simulator.control.cluster import generic_create
from app.simulator.endpoints.messages import ApiContext, Request, Response, json_response

MAX_MANAGER_LENGTH = 128  # validation.FieldManagerMaxLength


def is_apply(req: Request) -> bool:
    return req.method == "PATCH" and _media(req) == APPLY_PATCH


def _media(req: Request) -> str:
    return req.headers.get("content-type", "").split(";")[0].strip().lower()


def field_manager(req: Request) -> str:
    """managerOrUserAgent: the fieldManager parameter, else the User-Agent up to its first
    `/` (kubectl/v1.32.0 -> kubectl), printable characters only, at most 128 bytes."""
    manager = req.query.get("fieldManager") or ""
    if manager:
        return manager
    out = ""
    for ch in req.headers.get("user-agent", "").split("/")[0]:
        if not ch.isprintable():
            continue
        if len((out + ch).encode()) > MAX_MANAGER_LENGTH:
            break
        out += ch
    return out


def check_options(req: Request) -> None:
    """ValidatePatchOptions (PATCH) / ValidateFieldManager (every write): 422."""
    errs: list[str] = []
    causes: list[FieldError] = []
    manager = req.query.get("fieldManager") or ""
    if req.method == "PATCH":
        if is_apply(req) and not manager:
            causes.append(
                FieldError("fieldManager", "FieldValueRequired", "is required for apply patch")
            )
        if not is_apply(req) and "force" in req.query:
            causes.append(
                FieldError(
                    "force", "FieldValueForbidden", "may not be specified for non-apply patch"
                )
            )
    if len(manager.encode()) > MAX_MANAGER_LENGTH:
        errs.append(f"fieldManager: Too long: may not be more than {MAX_MANAGER_LENGTH} bytes")
    for i, ch in enumerate(manager):
        if not ch.isprintable():
            causes.append(
                FieldError(
                    "fieldManager",
                    "FieldValueInvalid",
                    f"invalid character U+{ord(ch):04X} (at position {i})",
                    manager,
                )
            )
    messages = errs + [c.message() for c in causes]
    if not messages:
        return
    options = "PatchOptions" if req.method == "PATCH" else "UpdateOptions"
    if req.method == "POST":
        options = "CreateOptions"
    joined = messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"
    raise ApiError(
        422,
        f'{options}.meta.k8s.io "" is invalid: {joined}',
        "Invalid",
        {
            "group": "meta.k8s.io",
            "kind": options,
            "causes": [
                {"reason": "FieldValueInvalid", "message": m, "field": "fieldManager"} for m in errs
            ]
            + [{"reason": c.kind, "message": c.message(), "field": c.field} for c in causes],
        },
    )


def write_for(
    api: ApiContext, rt: ResourceType, req: Request, sub: str | None
) -> managedfields.Write:
    return managedfields.Write(
        manager=field_manager(req),
        api_version=rt.api_version,
        now=api.cluster.now_str(),
        lookup=kindmeta.lookup(rt.api_version, rt.kind, api.version.minor),
        subresource=sub or "",
        has_status=rt.has_status,
    )


# --- recording managers of other writes -------------------------------------------------------


def record_create(api: ApiContext, rt: ResourceType, req: Request, obj: dict[str, Any]) -> None:
    """Set the managedFields of an object about to be created: its creator owns every field
    it set, decode-time defaults included (the field manager runs before admission)."""
    probe = json.loads(json.dumps(obj))
    try:
        if rt is POD:
            kinds.default_pod(probe)
            podutil.default_resource_requests(probe)
        else:
            meta = probe.setdefault("metadata", {})
            if not meta.get("name") and meta.get("generateName"):
                meta["name"] = meta["generateName"] + "x"  # the name is not a managed field
            kinds.prepare_create(rt, probe)
    except ApiError:
        return  # the create itself answers the error
    managedfields.record_update(None, probe, write_for(api, rt, req, None))
    managed = probe["metadata"].get("managedFields")
    meta = obj.setdefault("metadata", {})
    if managed:
        meta["managedFields"] = managed
    else:
        meta.pop("managedFields", None)


def record_update(
    api: ApiContext,
    rt: ResourceType,
    req: Request,
    sub: str | None,
    old: dict[str, Any],
    new: dict[str, Any],
) -> None:
    """Set the managedFields of an updated object (PUT or a non-apply PATCH)."""
    if not is_apply(req):
        managedfields.record_update(old, new, write_for(api, rt, req, sub))


# --- apply ------------------------------------------------------------------------------------


class _YamlLoader(yaml.SafeLoader):  # type: ignore[misc]
    """YAML as sigs.k8s.io/yaml reads it into JSON: timestamps stay strings."""


_YamlLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def applied_config(req: Request) -> dict[str, Any]:
    """The applied configuration (JSON or YAML); 400 `error decoding YAML` otherwise."""
    try:
        config = json.loads(req.body)
    except (ValueError, UnicodeDecodeError):
        try:
            config = yaml.load(req.body, Loader=_YamlLoader)  # a SafeLoader
        except yaml.YAMLError as e:
            raise bad_request(f"error decoding YAML: {e}") from None
    if not isinstance(config, dict):
        raise bad_request(
            "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot "
            "unmarshal array into Go value of type map[string]interface {}"
        )
    return config


def applied(
    api: ApiContext,
    rt: ResourceType,
    ns: str,
    name: str,
    sub: str | None,
    req: Request,
    live: dict[str, Any] | None,
) -> dict[str, Any]:
    """The object `live` (None: none yet) becomes when the request's configuration is applied."""
    config = applied_config(req)
    force = req.query.get("force") in ("true", "1", "True")
    write = write_for(api, rt, req, sub)
    managedfields.check_config(config, rt.api_version)
    _check_declared(api, rt, config, write)
    new = managedfields.apply(live, config, write, force=force)
    defs = schema.definitions(api.version.minor)
    root = defs.name_for(rt.group, rt.version, rt.kind)
    if root is not None:
        # The merged object is converted to the kind's Go structs: quantities come out as stored
        # ("500m" for 0.5); its undeclared fields were refused above (_check_declared).
        new = fv.check(defs, root, new)[0]
    if rt is POD:  # the merged object is defaulted (structuredmerge.go), pruned fields come back
        kinds.default_pod(new)
        podutil.default_resource_requests(new)
    meta = new.setdefault("metadata", {})
    if rt.namespaced and meta.get("namespace") and meta["namespace"] != ns:
        raise bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    if meta.get("name") != name:
        raise bad_request(
            f"the name of the object ({meta.get('name') or ''}) does not match the name on "
            f"the URL ({name})"
        )
    return new


def _check_declared(
    api: ApiContext, rt: ResourceType, config: dict[str, Any], write: managedfields.Write
) -> None:
    """An applied field the schema does not declare fails the typed conversion of the patch
    object (structuredmerge.go): a plain error, so a 500 without a reason, naming the fields."""
    defs = schema.definitions(api.version.minor)
    root = defs.name_for(rt.group, rt.version, rt.kind)
    if root is None:
        return
    found = fieldpaths.undeclared(defs, root, config, write.lookup)
    if not found:
        return
    meta = config.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    where = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
    gvk = f"{rt.api_version if rt.group else '/' + rt.version}, Kind={rt.kind}"
    detail = found[0] if len(found) == 1 else "errors:\n  " + "\n  ".join(found)
    err = ApiError(500, f"failed to create typed patch object ({where}; {gvk}): {detail}")
    err.reason = ""
    raise err


def create(api: ApiContext, rt: ResourceType, ns: str, name: str, req: Request) -> Response:
    """Apply to an object that does not exist: a create (201), as the applier's."""
    new = applied(api, rt, ns, name, None, req, None)
    dry_run = req.query.get("dryRun") == "All"
    if rt is POD:
        created = api.cluster.create_pod(ns, new, dry_run=dry_run)
    else:
        created = generic_create(api.cluster, rt, ns, new, dry_run=dry_run)
    if isinstance(created, Entry):
        return Response(201, created.raw)
    return json_response(201, created)
