"""CustomResourceDefinitions (apiextensions.k8s.io/v1) and the custom resources they serve.

Re-derived from kubernetes/kubernetes `staging/src/k8s.io/apiextensions-apiserver`:

- defaulting: `pkg/apis/apiextensions/v1/defaults.go` (singular = lower-case kind, listKind =
  kind + "List", conversion strategy None, status.storedVersions = the storage version);
- validation: `pkg/apis/apiextensions/validation/validation.go` (ValidateCustomResourceDefinition:
  the name `<plural>.<group>`, a group with at least one dot, names as DNS-1035 labels, scope
  Cluster or Namespaced, unique version names with exactly one storage version, a schema for every
  version, subresources.scale paths under `.spec.`/`.status.`, kind != listKind; group, plural and
  once established scope and kind are immutable);
- what the API server then serves (`pkg/apiserver/customresource_handler.go`): each served
  version, with `status` and `scale` subresources when the definition has them, and the
  conditions NamesAccepted and Established at once (the simulator has no naming controller race);
- the custom resources: pruning of fields the structural schema does not declare
  (`pkg/apiserver/schema/pruning`), the schema's `type` and `required` checks
  (`pkg/apiserver/validation`, messages `<path> in body must be of type integer: "string"`),
  status dropped on create and kept on update when the status subresource is on, generation bumped
  on changes outside metadata (and status) (`pkg/registry/customresource/strategy.go`);
- `/scale` (`pkg/registry/customresource/etcd.go`, scaleFromCustomResource): spec replicas, status
  replicas (0 when absent) and the selector string from the definition's paths; a GET is a 500
  when the spec replicas field does not exist.

Knowingly simplified: one served version per definition (no conversion between versions: a
definition serving more is refused, naming `spec.versions`), no CEL rules, formats, defaults or
other value validations (minimum, pattern, enum ...), no additionalPrinterColumns (custom
resources print NAME and AGE, as when a definition has none).
"""

from __future__ import annotations

import re
from typing import Any

from app.simulator.apiserver.errors import ApiError, FieldError
from app.simulator.apiserver.resources import ResourceType, ScalePaths

_DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_SCOPES = ("Cluster", "Namespaced")
_TYPES = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


# --- the definition ---------------------------------------------------------------------------


def default(crd: dict[str, Any]) -> None:
    """SetDefaults_CustomResourceDefinition (v1)."""
    spec = crd.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    names = spec.setdefault("names", {})
    if isinstance(names, dict):
        kind = names.get("kind")
        if not names.get("singular") and isinstance(kind, str):
            names["singular"] = kind.lower()
        if not names.get("listKind") and isinstance(kind, str) and kind:
            names["listKind"] = kind + "List"
    if spec.get("conversion") is None:
        spec["conversion"] = {"strategy": "None"}
    status = crd.setdefault("status", {})
    if isinstance(status, dict) and not status.get("storedVersions"):
        storage = [
            v.get("name") for v in _versions(spec) if v.get("storage") is True and v.get("name")
        ]
        status["storedVersions"] = storage[:1]


def _versions(spec: dict[str, Any]) -> list[dict[str, Any]]:
    versions = spec.get("versions")
    return [v for v in versions if isinstance(v, dict)] if isinstance(versions, list) else []


def _dns1035(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= 63 and bool(_DNS1035.fullmatch(value))


def validate(crd: dict[str, Any], old: dict[str, Any] | None = None) -> list[FieldError]:
    """ValidateCustomResourceDefinition (and ...Update with `old`), in its order."""
    meta = crd.get("metadata") or {}
    spec = crd.get("spec") if isinstance(crd.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    names = spec.get("names") if isinstance(spec.get("names"), dict) else {}
    assert isinstance(names, dict)
    errs: list[FieldError] = []
    name, group = meta.get("name", ""), spec.get("group")
    if name != f"{names.get('plural', '')}.{group or ''}":
        errs.append(
            FieldError(
                "metadata.name",
                "FieldValueInvalid",
                'must be spec.names.plural+"."+spec.group',
                name,
            )
        )
    if not group:
        errs.append(FieldError("spec.group", "FieldValueRequired", ""))
    elif not isinstance(group, str) or not _DNS1123_SUBDOMAIN.fullmatch(group):
        errs.append(FieldError("spec.group", "FieldValueInvalid", _SUBDOMAIN_MSG, group))
    elif len(group.split(".")) < 2:
        errs.append(
            FieldError(
                "spec.group", "FieldValueInvalid", "should be a domain with at least one dot", group
            )
        )
    scope = spec.get("scope")
    if not scope:
        errs.append(FieldError("spec.scope", "FieldValueRequired", ""))
    elif scope not in _SCOPES:
        errs.append(
            FieldError(
                "spec.scope",
                "FieldValueNotSupported",
                'supported values: "Cluster", "Namespaced"',
                scope,
            )
        )
    errs += _version_errors(spec)
    errs += _name_errors(names)
    if old is not None:
        errs += _immutable(spec, old.get("spec") or {})
    return errs


def _version_errors(spec: dict[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    versions = _versions(spec)
    seen: set[str] = set()
    unique, storage, served = True, 0, 0
    for i, v in enumerate(versions):
        path = f"spec.versions[{i}]"
        storage += v.get("storage") is True
        served += v.get("served") is True
        vname = v.get("name")
        if vname in seen:
            unique = False
        seen.add(str(vname))
        if not _dns1035(vname):
            errs.append(FieldError(f"{path}.name", "FieldValueInvalid", _DNS1035_MSG, vname))
        schema = (v.get("schema") or {}).get("openAPIV3Schema")
        if not isinstance(schema, dict):
            errs.append(
                FieldError(
                    f"{path}.schema.openAPIV3Schema", "FieldValueRequired", "schemas are required"
                )
            )
        errs += _scale_errors(v.get("subresources"), f"{path}.subresources")
    if not unique:
        errs.append(
            FieldError(
                "spec.versions", "FieldValueInvalid", "must contain unique version names", ""
            )
        )
    if storage != 1:
        errs.append(
            FieldError(
                "spec.versions",
                "FieldValueInvalid",
                "must have exactly one version marked as storage version",
                "",
            )
        )
    if served > 1:  # the simulator's own limit (no conversion between versions)
        errs.append(
            FieldError(
                "spec.versions",
                "FieldValueForbidden",
                "the simulated cluster serves one version of a custom resource "
                "(no conversion between versions)",
            )
        )
    return errs


def _simple_path(path: Any) -> bool:
    """validateSimpleJSONPath: `.a.b` without array notation."""
    return (
        isinstance(path, str)
        and path.startswith(".")
        and all(part and "[" not in part for part in path[1:].split("."))
    )


def _scale_errors(subresources: Any, path: str) -> list[FieldError]:
    """ValidateCustomResourceDefinitionSubresources."""
    scale = subresources.get("scale") if isinstance(subresources, dict) else None
    if not isinstance(scale, dict):
        return []
    errs: list[FieldError] = []
    for key, prefix, allowed in (
        ("specReplicasPath", ".spec.", "should be a json path under .spec"),
        ("statusReplicasPath", ".status.", "should be a json path under .status"),
    ):
        value = scale.get(key)
        field = f"{path}.scale.{key}"
        if not value:
            errs.append(FieldError(field, "FieldValueRequired", ""))
        elif not _simple_path(value):
            errs.append(
                FieldError(
                    field, "FieldValueInvalid", "must be a simple json path starting with .", value
                )
            )
        elif not value.startswith(prefix):
            errs.append(FieldError(field, "FieldValueInvalid", allowed, value))
    selector = scale.get("labelSelectorPath")
    field = f"{path}.scale.labelSelectorPath"
    if selector:
        if not _simple_path(selector):
            errs.append(
                FieldError(
                    field,
                    "FieldValueInvalid",
                    "must be a simple json path starting with .",
                    selector,
                )
            )
        elif not (selector.startswith(".spec.") or selector.startswith(".status.")):
            errs.append(
                FieldError(
                    field,
                    "FieldValueInvalid",
                    "should be a json path under either .spec or .status",
                    selector,
                )
            )
    return errs


def _name_errors(names: dict[str, Any]) -> list[FieldError]:
    """The required names, then ValidateCustomResourceDefinitionNames."""
    errs: list[FieldError] = [
        FieldError(f"spec.names.{key}", "FieldValueRequired", "")
        for key in ("plural", "singular", "kind", "listKind")
        if not names.get(key)
    ]
    for key in ("plural", "singular"):
        value = names.get(key)
        if value and not _dns1035(value):
            errs.append(FieldError(f"spec.names.{key}", "FieldValueInvalid", _DNS1035_MSG, value))
    for key in ("kind", "listKind"):
        value = names.get(key)
        if value and not (isinstance(value, str) and _dns1035(value.lower())):
            errs.append(
                FieldError(
                    f"spec.names.{key}",
                    "FieldValueInvalid",
                    "may have mixed case, but should otherwise match: " + _DNS1035_MSG,
                    value,
                )
            )
    for key in ("shortNames", "categories"):
        for i, value in enumerate(names.get(key) or []):
            if not _dns1035(value):
                errs.append(
                    FieldError(f"spec.names.{key}[{i}]", "FieldValueInvalid", _DNS1035_MSG, value)
                )
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        errs.append(
            FieldError(
                "spec.names.listKind",
                "FieldValueInvalid",
                "kind and listKind may not be the same",
                names["listKind"],
            )
        )
    return errs


def _immutable(spec: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """validateCustomResourceDefinitionSpecUpdate: group and plural always; scope and kind once
    established (always, here: a definition is established as soon as it is created)."""
    errs = []
    pairs = (
        ("spec.scope", spec.get("scope"), old.get("scope")),
        (
            "spec.names.kind",
            (spec.get("names") or {}).get("kind"),
            (old.get("names") or {}).get("kind"),
        ),
        ("spec.group", spec.get("group"), old.get("group")),
        (
            "spec.names.plural",
            (spec.get("names") or {}).get("plural"),
            (old.get("names") or {}).get("plural"),
        ),
    )
    for path, new, was in pairs:
        if new != was:
            errs.append(FieldError(path, "FieldValueInvalid", "field is immutable", new))
    return errs


def established(crd: dict[str, Any], now: str) -> dict[str, Any]:
    """The status the API server's controllers give a valid definition: its names accepted and
    the resource established."""
    status = dict(crd.get("status") or {})
    names = dict((crd.get("spec") or {}).get("names") or {})
    status["acceptedNames"] = names
    old = {c.get("type"): c for c in status.get("conditions") or [] if isinstance(c, dict)}
    status["conditions"] = [
        old.get(kind)
        or {
            "type": kind,
            "status": "True",
            "lastTransitionTime": now,
            "reason": reason,
            "message": message,
        }
        for kind, reason, message in (
            ("NamesAccepted", "NoConflicts", "no conflicts found"),
            ("Established", "InitialNamesAccepted", "the initial names have been accepted"),
        )
    ]
    return status


def served_types(crd: dict[str, Any]) -> list[ResourceType]:
    """The resources a (valid) definition makes the API server serve."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    out = []
    for v in _versions(spec):
        if v.get("served") is not True:
            continue
        subresources = v.get("subresources") or {}
        scale = subresources.get("scale")
        paths = (
            ScalePaths(
                scale["specReplicasPath"],
                scale["statusReplicasPath"],
                scale.get("labelSelectorPath") or None,
            )
            if isinstance(scale, dict)
            else None
        )
        out.append(
            ResourceType(
                spec["group"],
                v["name"],
                names["plural"],
                names["kind"],
                spec.get("scope") == "Namespaced",
                tuple(names.get("shortNames") or ()),
                has_status=isinstance(subresources.get("status"), dict),
                subresources=("scale",) if paths else (),
                scale_paths=paths,
                singular=names.get("singular") or "",
                categories=tuple(names.get("categories") or ()),
                custom=True,
            )
        )
    return out


def schema_of(crd: dict[str, Any], version: str) -> dict[str, Any]:
    for v in _versions(crd.get("spec") or {}):
        if v.get("name") == version:
            found = (v.get("schema") or {}).get("openAPIV3Schema")
            return found if isinstance(found, dict) else {}
    return {}


# --- the custom resources ---------------------------------------------------------------------


def prune(obj: Any, schema: dict[str, Any], root: bool = False) -> Any:
    """Drops the fields a structural schema does not declare (apiVersion, kind and metadata
    always stay at the root), unless `x-kubernetes-preserve-unknown-fields` keeps them."""
    if isinstance(obj, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        keep_unknown = schema.get("x-kubernetes-preserve-unknown-fields") is True
        out = {}
        for key, value in obj.items():
            if root and key in ("apiVersion", "kind", "metadata"):
                out[key] = value
            elif isinstance(props, dict) and key in props:
                out[key] = prune(value, props[key] or {})
            elif isinstance(extra, dict):
                out[key] = prune(value, extra)
            elif keep_unknown or extra is True:
                out[key] = value
        return out
    if isinstance(obj, list) and isinstance(schema.get("items"), dict):
        return [prune(item, schema["items"]) for item in obj]
    return obj


def _go_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def type_errors(obj: Any, schema: dict[str, Any], path: str = "") -> list[FieldError]:
    """The schema's `type` and `required` over the object, as the validator reports them."""
    errs: list[FieldError] = []
    want = schema.get("type")
    if obj is None and schema.get("nullable") is True:
        return errs
    if want in _TYPES and (
        not isinstance(obj, _TYPES[want]) or (want != "boolean" and isinstance(obj, bool))
    ):
        got = _go_type(obj)
        where = path or "<root>"
        errs.append(
            FieldError(
                where,
                "FieldValueTypeInvalid",
                f'{where} in body must be of type {want}: "{got}"',
                got,
            )
        )
        return errs
    if isinstance(obj, dict):
        for key in schema.get("required") or []:
            if key not in obj:
                errs.append(FieldError(_join(path, key), "FieldValueRequired", ""))
        props = schema.get("properties") or {}
        for key, value in obj.items():
            if not path and key in ("apiVersion", "kind", "metadata"):
                continue
            sub = props.get(key) if isinstance(props, dict) else None
            if sub is None and isinstance(schema.get("additionalProperties"), dict):
                sub = schema["additionalProperties"]
            if isinstance(sub, dict):
                errs += type_errors(value, sub, _join(path, key))
    elif isinstance(obj, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(obj):
            errs += type_errors(item, schema["items"], f"{path}[{i}]")
    return errs


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def spec_changed(rt: ResourceType, old: dict[str, Any], new: dict[str, Any]) -> bool:
    """What bumps a custom resource's generation: any change but metadata (and status, when it
    is a subresource)."""
    skip = {"metadata", "status"} if rt.has_status else {"metadata"}
    return {k: v for k, v in old.items() if k not in skip} != {
        k: v for k, v in new.items() if k not in skip
    }


# --- /scale -----------------------------------------------------------------------------------


def _nested(obj: Any, path: str) -> tuple[Any, bool]:
    for part in path.strip(".").split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None, False
        obj = obj[part]
    return obj, True


def _int_at(obj: dict[str, Any], path: str) -> tuple[int, bool]:
    """unstructured.NestedInt64: absent is (0, False); another type is an error."""
    value, found = _nested(obj, path)
    if not found:
        return 0, False
    if not isinstance(value, int) or isinstance(value, bool):
        raise ApiError(
            500,
            f"{path.strip('.')} accessor error: {value} is of the type {type(value).__name__}, "
            "expected int64",
        )
    return value, True


def scale_of(paths: ScalePaths, obj: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """(the autoscaling/v1 Scale of a custom resource, whether its spec replicas exist)."""
    spec_replicas, found = _int_at(obj, paths.spec_replicas)
    status_replicas, _ = _int_at(obj, paths.status_replicas)
    selector = ""
    if paths.label_selector:
        value, ok = _nested(obj, paths.label_selector)
        if ok and not isinstance(value, str):
            raise ApiError(
                500,
                f"{paths.label_selector.strip('.')} accessor error: {value} is of the type "
                f"{type(value).__name__}, expected string",
            )
        selector = value if ok else ""
    meta = obj["metadata"]
    scale = {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": spec_replicas},
        "status": {"replicas": status_replicas, "selector": selector},
    }
    return scale, found


def set_replicas(paths: ScalePaths, obj: dict[str, Any], replicas: int) -> None:
    """unstructured.SetNestedField at the spec replicas path (creating the maps on the way)."""
    parts = paths.spec_replicas.strip(".").split(".")
    node = obj
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            if child is not None:
                raise ApiError(
                    500,
                    f"value cannot be set because {child} is not a map[string]interface{{}}",
                )
            child = node[part] = {}
        node = child
    node[parts[-1]] = replicas
