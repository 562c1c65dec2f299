"""OpenAPI v3 documents of the served API, in the shape kube-apiserver serves them.

`/openapi/v3` is a discovery document `{"paths": {"api/v1": {"serverRelativeURL":
"/openapi/v3/api/v1?hash=..."}, ...}}` and each `/openapi/v3/<api/v1 | apis/G/V>` an OpenAPI 3.0
document of one group version: its paths (the operations the simulator really serves, each
with `x-kubernetes-action` and `x-kubernetes-group-version-kind`; writes take `fieldValidation`,
which is how kubectl decides to validate on the server) and `components.schemas` (every
definition those operations reach). Shape re-derived from kube-openapi `pkg/handler3/handler.go`
and `pkg/builder3`, and kube-apiserver's `/openapi/v3` documents (kubectl's
`testdata/openapi/v3`).

The schemas come from apiserver/schema.py and are turned back from JSON Schema into OpenAPI:
`#/$defs/X` -> `#/components/schemas/X` (wrapped in `allOf` when the reference has a
description, as kube-openapi writes it), `[T, "null"]` -> `T`, and the `enum` that the JSON
Schema conversion put on `apiVersion`/`kind` dropped. Pure: documents are plain dicts.
Responses advertise `application/json` only: the simulator answers in no other format.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from app.simulator.apiserver.resources import RESOURCES, ResourceType
from app.simulator.apiserver.schema import Definitions, ref_name

_COMPONENTS = "#/components/schemas/"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_JSON = "application/json"
_PATCH_TYPES = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)
_SUBRESOURCE_KINDS = {
    "eviction": ("policy", "v1", "Eviction"),
    "scale": ("autoscaling", "v1", "Scale"),
}


def gv_path(group: str, version: str) -> str:
    """'api/v1' or 'apis/apps/v1': the key of a group version in the discovery document."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


def served_group_versions() -> list[tuple[str, str]]:
    """The group versions with an OpenAPI document: every served one whose kinds the schemas
    describe (metrics.k8s.io, an aggregated API, has none)."""
    seen: list[tuple[str, str]] = []
    for r in RESOURCES:
        if not r.computed and (r.group, r.version) not in seen:
            seen.append((r.group, r.version))
    return seen


def discovery(hashes: Mapping[str, str]) -> dict[str, Any]:
    """The `/openapi/v3` document for {gv path: hash of its document}."""
    return {
        "paths": {
            path: {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
            for path, digest in sorted(hashes.items())
        }
    }


def document(defs: Definitions, group: str, version: str, git_version: str) -> dict[str, Any]:
    """The OpenAPI 3.0 document of one group version."""
    resources = [r for r in RESOURCES if (r.group, r.version) == (group, version)]
    paths: dict[str, Any] = {}
    roots: set[str] = {_META + "Status", _META + "DeleteOptions", _META + "Patch"}
    for rt in resources:
        if rt.computed:
            continue
        for path, item, used in _resource_paths(defs, rt):
            paths[path] = item
            roots.update(used)
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": git_version},
        "paths": dict(sorted(paths.items())),
        "components": {
            "schemas": {name: to_openapi(defs, name) for name in sorted(_reachable(defs, roots))},
            "securitySchemes": {
                "BearerToken": {
                    "type": "apiKey",
                    "description": "Bearer Token authentication",
                    "name": "authorization",
                    "in": "header",
                }
            },
        },
    }


def to_openapi(defs: Definitions, name: str) -> dict[str, Any]:
    """Definition `name` as an OpenAPI v3 component schema."""
    out = convert_definition(defs.get(name), _wrapped_ref, ordered=False)
    if name == "io.k8s.apimachinery.pkg.util.intstr.IntOrString":
        out["format"] = "int-or-string"
    return out


def _wrapped_ref(rest: dict[str, Any], name: str) -> dict[str, Any]:
    """A reference as v3 writes it: alone, or in `allOf` beside its description."""
    target = {"$ref": _COMPONENTS + name}
    if not rest:
        return target
    rest["allOf"] = [target]
    return rest


PlaceRef = Callable[[dict[str, Any], str], dict[str, Any]]


def convert_definition(
    schema: Mapping[str, Any], place_ref: PlaceRef, *, ordered: bool
) -> dict[str, Any]:
    """A JSON Schema definition turned back into OpenAPI (v3 here, v2 in openapiv2.py): each
    `$ref` written by `place_ref` (the node's other keys, the definition's name), `[T, "null"]`
    -> `T`, keys sorted when `ordered`, and the `enum` the JSON Schema conversion put on a
    kind's `apiVersion`/`kind` dropped."""
    out: dict[str, Any] = _convert(schema, place_ref, ordered)
    if schema.get("x-kubernetes-group-version-kind"):
        for field in ("apiVersion", "kind"):
            prop = out.get("properties", {}).get(field)
            if isinstance(prop, dict):
                prop.pop("enum", None)
    return out


def _convert(node: Any, place_ref: PlaceRef, ordered: bool) -> Any:
    if isinstance(node, list):
        return [_convert(v, place_ref, ordered) for v in node]
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    ref = node.get("$ref")
    for key, value in sorted(node.items()) if ordered else node.items():
        if key == "$ref" and isinstance(value, str):
            continue
        if key == "type" and isinstance(value, list):
            kept = [t for t in value if t != "null"]
            out[key] = kept[0] if len(kept) == 1 else kept
        elif key == "properties" and isinstance(value, Mapping):
            props = sorted(value.items()) if ordered else value.items()
            out[key] = {k: _convert(v, place_ref, ordered) for k, v in props}
        else:
            out[key] = _convert(value, place_ref, ordered)
    return place_ref(out, ref_name(ref)) if isinstance(ref, str) else out


def _reachable(defs: Definitions, roots: Iterable[str]) -> set[str]:
    seen: set[str] = set()
    todo = [r for r in roots if r in defs.defs]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(n for n in _refs(defs.get(name)) if n not in seen)
    return seen


def _refs(node: Any) -> Iterable[str]:
    if isinstance(node, list):
        for v in node:
            yield from _refs(v)
    elif isinstance(node, Mapping):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref_name(ref)
        for key, value in node.items():
            if key != "$ref" or not isinstance(value, str):
                yield from _refs(value)


# --- operations --------------------------------------------------------------------------


def _resource_paths(
    defs: Definitions, rt: ResourceType
) -> Iterable[tuple[str, dict[str, Any], set[str]]]:
    """(path, path item, definitions used) for each URL of resource `rt`."""
    kind = defs.name_for(rt.group, rt.version, rt.kind)
    list_kind = defs.name_for(rt.group, rt.version, rt.list_kind)
    if kind is None or list_kind is None:
        return
    base = "/" + gv_path(rt.group, rt.version)
    gvk = {"group": rt.group, "version": rt.version, "kind": rt.kind}
    ns = "/namespaces/{namespace}" if rt.namespaced else ""
    op = _Ops(rt, gvk)
    collection = {
        "get": op.make("list", "list", list_kind, "list or watch objects of kind"),
        "post": op.make("post", "create", kind, "create"),
        "parameters": _path_params(rt.namespaced, named=False),
    }
    yield f"{base}{ns}/{rt.plural}", collection, {kind, list_kind}
    if rt.namespaced:
        everywhere = {
            "get": op.make("list", "list", list_kind, "list or watch objects of kind", True),
            "parameters": [_param("pretty")],
        }
        yield f"{base}/{rt.plural}", everywhere, set()
    item = {
        "get": op.make("get", "read", kind, "read the specified"),
        "put": op.make("put", "replace", kind, "replace the specified"),
        "patch": op.make("patch", "patch", kind, "partially update the specified"),
        "delete": op.make("delete", "delete", kind, "delete"),
        "parameters": _path_params(rt.namespaced, named=True),
    }
    yield f"{base}{ns}/{rt.plural}/{{name}}", item, set()
    subs = (["status"] if rt.has_status else []) + list(rt.subresources)
    for sub in subs:
        yield from _subresource_path(defs, rt, sub, f"{base}{ns}/{rt.plural}/{{name}}/{sub}")


def _subresource_path(
    defs: Definitions, rt: ResourceType, sub: str, path: str
) -> Iterable[tuple[str, dict[str, Any], set[str]]]:
    group, version, kind = _SUBRESOURCE_KINDS.get(sub, (rt.group, rt.version, rt.kind))
    name = defs.name_for(group, version, kind)
    if name is None:
        return
    op = _Ops(rt, {"group": group, "version": version, "kind": kind}, sub)
    item: dict[str, Any] = {"parameters": _path_params(rt.namespaced, named=True)}
    if sub == "log":  # a container's log as text
        read = op.make("get", "read", name, "read log of the specified")
        text = {"text/plain": {"schema": {"type": "string"}}}
        read["responses"]["200"]["content"] = text
        item["get"] = read
        yield path, item, set()
        return
    if sub == "eviction":
        item["post"] = op.make("post", "create", name, "create eviction of a")
    else:
        item["get"] = op.make("get", "read", name, f"read {sub} of the specified")
        item["put"] = op.make("put", "replace", name, f"replace {sub} of the specified")
        item["patch"] = op.make("patch", "patch", name, f"partially update {sub} of the specified")
    yield path, item, {name}


class _Ops:
    """Builds the operations of one resource (or subresource) URL."""

    def __init__(self, rt: ResourceType, gvk: dict[str, str], sub: str = "") -> None:
        self.rt, self.gvk, self.sub = rt, gvk, sub
        group = rt.group.split(".")[0] if rt.group else "core"
        self.tag = f"{group}_{rt.version}"
        self.prefix = f"{group[0].upper()}{group[1:]}{rt.version[0].upper()}{rt.version[1:]}"

    def make(
        self, action: str, verb: str, schema: str, what: str, all_ns: bool = False
    ) -> dict[str, Any]:
        suffix = self.sub[:1].upper() + self.sub[1:]
        scope = "Namespaced" if self.rt.namespaced and not all_ns else ""
        op_id = f"{verb}{self.prefix}{scope}{self.rt.kind}{suffix}"
        if all_ns:
            op_id += "ForAllNamespaces"
        body = {"schema": {"$ref": _COMPONENTS + schema}}
        out: dict[str, Any] = {
            "tags": [self.tag],
            "description": f"{what} {self.rt.kind}",
            "operationId": op_id,
        }
        params = _ACTION_PARAMS[action]
        if params:
            out["parameters"] = [_param(p) for p in params]
        if action in ("post", "put"):
            out["requestBody"] = {"content": {"*/*": body}}
        elif action == "patch":
            patch = {"schema": {"$ref": _COMPONENTS + _META + "Patch"}}
            out["requestBody"] = {"content": dict.fromkeys(_PATCH_TYPES, patch)}
        elif action == "delete":
            opts = {"schema": {"$ref": _COMPONENTS + _META + "DeleteOptions"}}
            out["requestBody"] = {"content": {"*/*": opts}}
        content = {_JSON: body}
        if action == "list":
            content[_JSON + ";stream=watch"] = body
        codes = {"post": ("200", "201", "202"), "put": ("200", "201"), "patch": ("200", "201")}
        answers = codes.get(action, ("200",))
        out["responses"] = {c: {"description": _CODE_TEXT[c], "content": content} for c in answers}
        out["responses"]["401"] = {"description": "Unauthorized"}
        out["x-kubernetes-action"] = action
        out["x-kubernetes-group-version-kind"] = dict(self.gvk)
        return out


_CODE_TEXT = {"200": "OK", "201": "Created", "202": "Accepted"}

_ACTION_PARAMS: dict[str, tuple[str, ...]] = {
    "list": (
        "allowWatchBookmarks",
        "continue",
        "fieldSelector",
        "labelSelector",
        "limit",
        "resourceVersion",
        "sendInitialEvents",
        "timeoutSeconds",
        "watch",
    ),
    "get": (),
    "post": ("dryRun", "fieldManager", "fieldValidation"),
    "put": ("dryRun", "fieldManager", "fieldValidation"),
    "patch": ("dryRun", "fieldManager", "fieldValidation", "force"),
    "delete": ("dryRun", "gracePeriodSeconds", "orphanDependents", "propagationPolicy"),
}

# Query parameters: (type, what the simulator does with it).
_PARAMS: dict[str, tuple[str, str]] = {
    "allowWatchBookmarks": ("boolean", "ask for BOOKMARK events on a watch"),
    "continue": ("string", "the token of the next page of a paginated list"),
    "fieldSelector": ("string", "select objects by their fields"),
    "labelSelector": ("string", "select objects by their labels"),
    "limit": ("integer", "the largest number of items a list returns"),
    "resourceVersion": ("string", "the resource version a list or watch starts from"),
    "sendInitialEvents": ("boolean", "start a watch with the current objects"),
    "timeoutSeconds": ("integer", "how long a list or watch may take"),
    "watch": ("boolean", "watch for changes instead of listing"),
    "dryRun": ("string", "All: validate and admit, persist nothing"),
    "fieldManager": ("string", "the name of the actor making the change"),
    "fieldValidation": (
        "string",
        "what to do with unknown or duplicate fields: Ignore (drop them), Warn (drop them "
        "and answer with a Warning header each) or Strict (refuse the request with 400)",
    ),
    "force": ("boolean", "server-side apply: take fields other managers own"),
    "gracePeriodSeconds": ("integer", "seconds before the object is deleted; 0: now"),
    "orphanDependents": ("boolean", "deprecated: use propagationPolicy"),
    "propagationPolicy": ("string", "Orphan, Background or Foreground"),
    "pretty": ("string", "pretty-print the answer"),
}


def _param(name: str) -> dict[str, Any]:
    type_, text = _PARAMS[name]
    return {
        "name": name,
        "in": "query",
        "description": text,
        "schema": {"type": type_, "uniqueItems": True},
    }


def _path_params(namespaced: bool, named: bool) -> list[dict[str, Any]]:
    out = []
    if named:
        out.append(_path_param("name", "name of the object"))
    if namespaced:
        out.append(_path_param("namespace", "the namespace of the objects"))
    return [*out, _param("pretty")]


def _path_param(name: str, text: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "description": text,
        "required": True,
        "schema": {"type": "string", "uniqueItems": True},
    }
