"""Field paths and field sets of objects, as server-side apply tracks ownership.

Re-derived from sigs.k8s.io/structured-merge-diff (`fieldpath` for paths, their string form and
the FieldsV1 encoding `serialize.go`/`serialize-pe.go`; `typed` for `ToFieldSet`, `Compare`,
`Merge` and `RemoveItems`), on the list and map types of the release's schemas
(x-kubernetes-list-type / -list-map-keys / -map-type, kindmeta.py).

A path element is `("f", name)` for a field or map key, `("k", '{"name":"web"}')` for an item
of a list keyed by its map keys, `("v", '"x"')` for a value of a set. Lists of other types and
atomic maps are leaves. Pure functions of JSON values; nothing here is I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from app.simulator.apiserver.kindmeta import Lookup
from app.simulator.apiserver.schema import Definitions, PatchMeta

Element = tuple[str, str]
FieldPath = tuple[Element, ...]
FieldSet = set[FieldPath]

_MISSING: Any = object()

# List map keys that the API defaults when an item omits them, so an item without the key is
# the same item as one with the default (k8s.io/api core/v1 types.go: ContainerPort.Protocol,
# ServicePort.Protocol... `+default="TCP"`; the kubernetes-validate schemas drop defaults).
KEY_DEFAULTS = {"protocol": "TCP"}


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def names(path: FieldPath) -> tuple[str, ...]:
    """The field names of a path (list items crossed), the form kindmeta's lookup takes."""
    return tuple(text for kind, text in path if kind == "f")


def list_type(meta: PatchMeta) -> str:
    """atomic, set or map; a list with only a patch merge key is keyed by it, as the schema
    converter of kube-openapi treats it."""
    if meta.list_type in ("atomic", "set", "map"):
        return meta.list_type
    if meta.merge_key:
        return "map"
    return "set" if "merge" in meta.strategy else "atomic"


def item_element(meta: PatchMeta, item: Any) -> Element:
    """The path element of one item of a set or a keyed list."""
    if list_type(meta) == "set":
        return ("v", _dumps(item))
    keys = meta.map_keys or ((meta.merge_key,) if meta.merge_key else ())
    values = item if isinstance(item, dict) else {}
    found = {k: values.get(k, KEY_DEFAULTS.get(k)) for k in keys}
    return ("k", _dumps({k: v for k, v in found.items() if v is not None}))


def _is_leaf(value: Any, meta: PatchMeta) -> bool:
    if isinstance(value, dict):
        return meta.map_type == "atomic"
    if isinstance(value, list):
        return list_type(meta) == "atomic"
    return True


def _children(value: Any, path: FieldPath, lookup: Lookup) -> Iterator[tuple[Element, Any]]:
    """(element, child) of a map or a keyed/set list, in order."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield ("f", key), child
    elif isinstance(value, list):
        meta = lookup(names(path))
        for item in value:
            yield item_element(meta, item), item


# --- sets of an object --------------------------------------------------------------------------


def to_field_set(value: dict[str, Any], lookup: Lookup) -> FieldSet:
    """ToFieldSet: the leaves of an applied configuration and the items of its sets and keyed
    lists (an empty map or list counts as a leaf)."""
    out: FieldSet = set()
    _leaves(value, (), lookup, out)
    return out


def _leaves(value: Any, path: FieldPath, lookup: Lookup, out: FieldSet) -> None:
    meta = lookup(names(path)) if path else PatchMeta()
    if path and (_is_leaf(value, meta) or not value):
        out.add(path)
        return
    is_list = isinstance(value, list)
    for element, child in _children(value, path, lookup):
        child_path = (*path, element)
        if is_list:
            out.add(child_path)
            if element[0] == "k" and isinstance(child, dict):
                for key, grandchild in child.items():
                    _leaves(grandchild, (*child_path, ("f", key)), lookup, out)
        else:
            _leaves(child, child_path, lookup, out)


@dataclass
class Comparison:
    """typed.Compare: leaves whose value changed; paths (nodes and everything below) that only
    the new object has, or only the old one."""

    added: FieldSet = field(default_factory=set)
    modified: FieldSet = field(default_factory=set)
    removed: FieldSet = field(default_factory=set)

    def changed(self) -> FieldSet:
        return self.added | self.modified


def compare(old: dict[str, Any], new: dict[str, Any], lookup: Lookup) -> Comparison:
    out = Comparison()
    _compare(old, new, (), lookup, out)
    return out


def _compare(old: Any, new: Any, path: FieldPath, lookup: Lookup, out: Comparison) -> None:
    meta = lookup(names(path)) if path else PatchMeta()
    present = new if new is not _MISSING else old
    same_shape = old is _MISSING or new is _MISSING or type(old) is type(new)
    if not isinstance(present, (dict, list)) or not same_shape or _is_leaf(present, meta):
        if old is _MISSING:
            out.added.add(path)
        elif new is _MISSING:
            out.removed.add(path)
        elif _dumps(old) != _dumps(new):
            out.modified.add(path)
        return
    before = dict(_children(old, path, lookup)) if old is not _MISSING else {}
    after = dict(_children(new, path, lookup)) if new is not _MISSING else {}
    for element in [*before, *(e for e in after if e not in before)]:
        child_path = (*path, element)
        _compare(
            before.get(element, _MISSING), after.get(element, _MISSING), child_path, lookup, out
        )
    if path and old is _MISSING:
        out.added.add(path)
    elif path and new is _MISSING:
        out.removed.add(path)


# --- merging and removing -----------------------------------------------------------------------


def merge(live: Any, config: Any, lookup: Lookup, path: FieldPath = ()) -> Any:
    """typed.Merge: `config` over `live`; maps and keyed or set lists merge (live items first,
    in their order, then the config's new ones), everything else is the config's value."""
    if config is _MISSING:
        return live
    if live is _MISSING or type(live) is not type(config):
        return config
    meta = lookup(names(path)) if path else PatchMeta()
    if not isinstance(config, (dict, list)) or _is_leaf(config, meta) or not (live or config):
        return config
    if isinstance(config, dict):
        out = dict(live)
        for key, value in config.items():
            out[key] = merge(live.get(key, _MISSING), value, lookup, (*path, ("f", key)))
        return out
    mine = dict(_children(config, path, lookup))
    merged: list[Any] = []
    seen: set[Element] = set()
    for element, item in _children(live, path, lookup):
        seen.add(element)
        merged.append(merge(item, mine.get(element, _MISSING), lookup, (*path, element)))
    merged += [item for element, item in mine.items() if element not in seen]
    return merged


def remove(value: dict[str, Any], paths: Iterable[FieldPath], lookup: Lookup) -> dict[str, Any]:
    """RemoveItems: `value` without the fields and items at `paths` (each with what is below
    it); a map or list that this empties goes too, as server-side apply leaves no empty parent
    of fields it pruned."""
    out: dict[str, Any] = json.loads(json.dumps(value))
    for path in sorted(paths, key=len):  # an item goes whole, before its key fields could
        _remove_one(out, path, lookup)
    return out


def _remove_one(root: dict[str, Any], path: FieldPath, lookup: Lookup) -> None:
    chain: list[tuple[Any, Element]] = []
    node: Any = root
    for i, element in enumerate(path):
        chain.append((node, element))
        node = _child(node, element, path[:i], lookup)
        if node is _MISSING:
            return
    for depth in range(len(chain) - 1, -1, -1):
        parent, element = chain[depth]
        _delete(parent, element, path[:depth], lookup)
        if parent or depth == 0:
            return


def _child(node: Any, element: Element, path: FieldPath, lookup: Lookup) -> Any:
    if isinstance(node, dict) and element[0] == "f":
        return node.get(element[1], _MISSING)
    if isinstance(node, list):
        for e, item in _children(node, path, lookup):
            if e == element:
                return item
    return _MISSING


def _delete(node: Any, element: Element, path: FieldPath, lookup: Lookup) -> None:
    if isinstance(node, dict):
        node.pop(element[1], None)
    elif isinstance(node, list):
        keep = [item for e, item in _children(node, path, lookup) if e != element]
        node[:] = keep


# --- encodings ----------------------------------------------------------------------------------


def path_string(path: FieldPath) -> str:
    """fieldpath.Path.String: `.spec.template.spec.containers[name="web"].image`."""
    out = []
    for kind, text in path:
        if kind == "f":
            out.append("." + text)
        elif kind == "k":
            keys = json.loads(text)
            out.append("[" + ",".join(f"{k}={_to_string(v)}" for k, v in keys.items()) + "]")
        elif kind == "v":
            out.append(f"[={_to_string(json.loads(text))}]")
        else:
            out.append(f"[{text}]")
    return "".join(out)


def _to_string(value: Any) -> str:
    """value.ToString: strings quoted, the rest as Go prints them."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)


def encode(paths: FieldSet) -> dict[str, Any]:
    """The FieldsV1 object of a set: a tree keyed `f:`/`k:`/`v:`, `.` marking a path that is
    itself in the set and has children."""
    root: dict[str, Any] = {}
    for path in paths:
        node = root
        for kind, text in path:
            node = node.setdefault(f"{kind}:{text}", {})
    for path in paths:  # a member with children is marked "."
        node = root
        for kind, text in path:
            node = node[f"{kind}:{text}"]
        if node and "." not in node:
            node["."] = {}
    return _sorted_tree(root)


def _sorted_tree(node: dict[str, Any]) -> dict[str, Any]:
    return {k: _sorted_tree(node[k]) for k in sorted(node, key=lambda k: (k != ".", k))}


def decode(tree: Any) -> FieldSet:
    """The set a FieldsV1 object encodes; ValueError for a malformed one."""
    out: FieldSet = set()
    _decode(tree, (), out)
    return out


def _decode(node: Any, path: FieldPath, out: FieldSet) -> None:
    if not isinstance(node, dict):
        raise ValueError(f"FieldsV1 at {path_string(path) or '.'} is not an object")
    if path and (not node or "." in node):
        out.add(path)
    for key, child in node.items():
        if key == ".":
            continue
        kind, sep, text = key.partition(":")
        if not sep or kind not in ("f", "k", "v", "i"):
            raise ValueError(f"unexpected FieldsV1 key {key!r}")
        _decode(child, (*path, (kind, text)), out)


# --- the applied configuration against the schema -----------------------------------------------


def undeclared(defs: Definitions, root: str, value: Any, lookup: Lookup) -> list[str]:
    """The fields of `value` its kind's schema does not declare, as structured-merge-diff's
    typed conversion reports them (`.spec.replica: field not declared in schema`); objects of
    any shape (no properties, no additionalProperties) take anything."""
    out: list[str] = []
    _undeclared(defs, defs.resolve(defs.get(root)), value, (), lookup, out)
    return out


def _undeclared(
    defs: Definitions, schema: Any, value: Any, path: FieldPath, lookup: Lookup, out: list[str]
) -> None:
    if isinstance(value, list):
        element = defs.items(schema)
        if element is None:
            return
        meta = lookup(names(path))
        keyed = list_type(meta) != "atomic"
        for i, item in enumerate(value):
            pe = item_element(meta, item) if keyed else ("i", str(i))
            _undeclared(defs, element, item, (*path, pe), lookup, out)
        return
    if not isinstance(value, dict):
        return
    if schema.get("properties") is None and schema.get("additionalProperties") is None:
        return
    for key, child in value.items():
        child_schema = defs.child(schema, key)
        if child_schema is None:
            out.append(f"{path_string((*path, ('f', key)))}: field not declared in schema")
            continue
        _undeclared(defs, defs.resolve(child_schema), child, (*path, ("f", key)), lookup, out)
