"""The Kubernetes API schemas of one release, as data: lookup by kind, `$ref`s, patch metadata.

Source: the PyPI package `kubernetes-validate`, which ships per Kubernetes release a
`_definitions.json` derived from the release's official OpenAPI spec
(kubernetes/kubernetes `api/openapi-spec`): the same definitions, descriptions,
`x-kubernetes-group-version-kind`, `x-kubernetes-patch-merge-key` / `-patch-strategy` and
`x-kubernetes-list-type` / `-list-map-keys`, rewritten as JSON Schema (`$defs`, references
`#/$defs/NAME`, optional fields typed `[T, "null"]`). Only its data files are read (the package
itself is not imported).

Pure apart from reading that file once per release: a field path is a sequence of field names;
a list is crossed implicitly (the path of a container's ports is `spec, containers, ports`), a
map (`additionalProperties`, e.g. labels) takes any key.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Schema = Mapping[str, Any]
_REF_PREFIX = "#/$defs/"


@dataclass(frozen=True)
class PatchMeta:
    """How a field merges, from its definition's x-kubernetes-* extensions.

    `strategy` is the parts of x-kubernetes-patch-strategy ("merge", "retainKeys",
    "replace"; empty when unset); `merge_key` is x-kubernetes-patch-merge-key (lists of maps
    merged by that key); `list_type` and `map_keys` are x-kubernetes-list-type ("atomic", "set",
    "map") and x-kubernetes-list-map-keys, which server-side apply uses.
    """

    strategy: tuple[str, ...] = ()
    merge_key: str | None = None
    list_type: str | None = None
    map_keys: tuple[str, ...] = ()
    map_type: str | None = None


class Definitions:
    """The `$defs` of one release, keyed by definition name (io.k8s.api.core.v1.Pod ...)."""

    def __init__(self, release: str, defs: Mapping[str, Schema]) -> None:
        self.release = release
        self.defs = defs
        by_gvk: dict[tuple[str, str, str], str] = {}
        for name, schema in defs.items():
            for gvk in schema.get("x-kubernetes-group-version-kind") or ():
                key = (gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", ""))
                by_gvk.setdefault(key, name)
        self._by_gvk = by_gvk

    def get(self, name: str) -> Schema:
        """The definition `name`; KeyError if the release has none."""
        return self.defs[name]

    def name_for(self, group: str, version: str, kind: str) -> str | None:
        """The definition of a kind (group "" for core), e.g. ("apps","v1","Deployment")."""
        return self._by_gvk.get((group, version, kind))

    def for_kind(self, group: str, version: str, kind: str) -> Schema | None:
        name = self.name_for(group, version, kind)
        return None if name is None else self.defs[name]

    def gvks(self) -> Iterable[tuple[str, str, str]]:
        return self._by_gvk.keys()

    def resolve(self, schema: Schema) -> Schema:
        """`schema` with its `$ref` followed (repeatedly); the referring schema's own keys
        (a property's description) are kept over the target's."""
        seen: set[str] = set()
        while "$ref" in schema:
            name = ref_name(schema["$ref"])
            if name in seen:
                raise ValueError(f"$ref cycle at {name}")
            seen.add(name)
            target = self.defs[name]
            schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        return schema

    def field(self, root: Schema | str, path: Sequence[str]) -> Schema | None:
        """The resolved schema at `path` below `root` (a schema or a definition name), crossing
        lists implicitly; None when a name on the path is not a field there."""
        schema = self.resolve(self.defs[root] if isinstance(root, str) else root)
        for name in path:
            schema = self.resolve(self._elements(schema))
            child = self.child(schema, name)
            if child is None:
                return None
            schema = self.resolve(child)
        return schema

    def child(self, schema: Schema, name: str) -> Schema | None:
        """The unresolved schema of field `name` of an object schema (a property, or a map's
        value schema); None when the object has no such field."""
        props = schema.get("properties")
        if isinstance(props, Mapping) and name in props:
            found: Schema = props[name]
            return found
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            return extra
        return None

    def items(self, schema: Schema) -> Schema | None:
        """The resolved element schema of a list schema, None for anything else."""
        schema = self.resolve(schema)
        items = schema.get("items")
        return (
            self.resolve(items) if "array" in types(schema) and isinstance(items, Mapping) else None
        )

    def patch_meta(self, root: Schema | str, path: Sequence[str]) -> PatchMeta:
        """The patch strategy and merge key of the field at `path` (empty when unknown: a
        strategic merge patch then replaces lists, as for a field with no extension)."""
        if not path:
            return PatchMeta()
        parent = self.field(root, path[:-1])
        if parent is None:
            return PatchMeta()
        raw = self.child(self.resolve(self._elements(parent)), path[-1])
        if raw is None:
            return PatchMeta()
        raw = self.resolve(raw)  # a struct's own extensions (LabelSelector is atomic) count too
        strategy = str(raw.get("x-kubernetes-patch-strategy") or "")
        return PatchMeta(
            strategy=tuple(s for s in strategy.split(",") if s),
            merge_key=raw.get("x-kubernetes-patch-merge-key"),
            list_type=raw.get("x-kubernetes-list-type"),
            map_keys=tuple(raw.get("x-kubernetes-list-map-keys") or ()),
            map_type=raw.get("x-kubernetes-map-type"),
        )

    def _elements(self, schema: Schema) -> Schema:
        """A list schema's element schema; any other schema as it is."""
        return self.items(schema) or schema


def ref_name(ref: str) -> str:
    """'#/$defs/io.k8s.api.core.v1.Pod' -> 'io.k8s.api.core.v1.Pod'."""
    if not ref.startswith(_REF_PREFIX):
        raise ValueError(f"unsupported $ref {ref!r}")
    return ref[len(_REF_PREFIX) :]


def types(schema: Schema) -> tuple[str, ...]:
    """The JSON types a schema allows, without "null" (which marks an optional field)."""
    raw = schema.get("type")
    if raw is None:
        return ()
    listed = [raw] if isinstance(raw, str) else list(raw)
    return tuple(t for t in listed if t != "null")


def schema_dir() -> Path:
    """kubernetes-validate's directory of per-release schemas (located, not imported)."""
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the kubernetes-validate package (the API schemas) is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema"


def available_minors() -> list[int]:
    """The 1.N releases whose definitions are installed."""
    found = []
    for p in schema_dir().glob("v1.*.0-local"):
        minor = p.name.split(".")[1]
        if minor.isdigit() and (p / "_definitions.json").is_file():
            found.append(int(minor))
    return sorted(found)


@functools.lru_cache(maxsize=4)
def definitions(minor: int) -> Definitions:
    """The definitions of release 1.`minor` (loaded once); LookupError if not installed."""
    path = schema_dir() / f"v1.{minor}.0-local" / "_definitions.json"
    if not path.is_file():
        raise LookupError(
            f"no API schemas for Kubernetes 1.{minor} in kubernetes-validate "
            f"(installed: {', '.join(f'1.{m}' for m in available_minors())})"
        )
    with path.open(encoding="utf-8") as f:
        data = json.load(f)
    return Definitions(f"1.{minor}", data["$defs"])
