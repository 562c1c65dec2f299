"""Strategic merge patch, as kube-apiserver applies it (`application/strategic-merge-patch+json`).

Re-derived from apimachinery `pkg/util/strategicpatch/patch.go` (`StrategicMergeMapPatch`, i.e.
`mergeMap` with MergeParallelList and IgnoreUnmatchedNulls) and the errors of
`pkg/util/mergepatch/errors.go`, answered as `interpretStrategicMergePatchError` in apiserver
`pkg/endpoints/handlers/patch.go` does (400, 422, else 500).

- maps merge recursively; `null` deletes a key; a field whose patch strategy is `replace` is
  replaced whole; `{"$patch": "replace"}` replaces a map, `{"$patch": "delete"}` empties it;
- lists whose strategy is `merge` merge: lists of maps by their merge key (an element with
  `$patch: delete` removes the matching ones, `$patch: replace` replaces the list), lists of
  scalars as a union, `$deleteFromPrimitiveList/<field>` removes scalars; every other list is
  replaced;
- `$setElementOrder/<field>` orders the merged list; without it, patched elements come first
  (patch order) and the server's own elements keep their order around them, as in patch.go;
- `$retainKeys` clears the keys of a map that it does not name (strategy `retainKeys`).

Pure: the patch meta (strategy and merge key of a field) comes from `lookup`, a function of the
field's path (field names; lists are crossed implicitly, as `schema.Definitions.patch_meta`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.simulator.apiserver.errors import ApiError, bad_request
from app.simulator.apiserver.gofmt import go_format
from app.simulator.apiserver.schema import PatchMeta

Lookup = Callable[[tuple[str, ...]], PatchMeta]
Path = tuple[str, ...]

DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
DELETE_PRIMITIVES = "$deleteFromPrimitiveList"
SET_ORDER = "$setElementOrder"

# mergepatch's sentinel errors, by the status interpretStrategicMergePatchError gives them.
ERR_PRIMITIVE_LIST = "invalid patch format of primitive list"
ERR_RETAIN_KEYS = "invalid patch format of retainKeys"
ERR_SET_ORDER = "invalid patch format of setElementOrder list"
ERR_NO_LIST_OF_LISTS = "lists of lists are not supported"


def apply(original: dict[str, Any], patch: dict[str, Any], lookup: Lookup) -> dict[str, Any]:
    """`original` patched; neither argument is modified. ApiError as kube-apiserver answers.

    Directives left in the result (inside a value the patch sets whole, where patch.go keeps
    them) are dropped, as decoding the result into the typed object drops them."""
    merged: dict[str, Any] = _strip_directives(
        _merge_map(_copy(original), _copy(patch), (), lookup)
    )
    return merged


# --- errors -----------------------------------------------------------------------------------


def _server_error(message: str) -> ApiError:
    """A plain Go error from the patch code: ErrorToAPIStatus makes it a 500 with no reason."""
    err = ApiError(500, message)
    err.reason = ""
    return err


def _no_merge_key(item: dict[str, Any], key: str) -> ApiError:
    return _server_error(f"map: {go_format(item)} does not contain declared merge key: {key}")


def _bad_arg_type(expected: str, actual: Any) -> ApiError:
    return _server_error(f"expected a {expected}, but received a {_go_type(actual)}")


def _unknown_patch_type(directive: Any, patch: dict[str, Any]) -> ApiError:
    return _server_error(f"unknown patch type: {go_format(directive)} in map: {go_format(patch)}")


def _go_type(value: Any) -> str:
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if value is None:
        return "%!s(<nil>)"
    return {bool: "bool", int: "int64", float: "float64", str: "string"}.get(type(value), "?")


# --- maps -------------------------------------------------------------------------------------


def _merge_map(
    original: dict[str, Any] | None, patch: dict[str, Any], path: Path, lookup: Lookup
) -> dict[str, Any]:
    if DIRECTIVE in patch:
        directive = patch[DIRECTIVE]
        if directive == "replace":
            return {k: v for k, v in patch.items() if k != DIRECTIVE}
        if directive == "delete":
            return {}
        raise _unknown_patch_type(directive, patch)
    result: dict[str, Any] = original if original is not None else {}
    _apply_retain_keys(result, patch)
    _merge_ordered_lists(result, patch, path, lookup)
    for key in list(patch):
        value = patch[key]
        delete_list = False
        if key.startswith(DELETE_PRIMITIVES):
            key, delete_list = _directive_target(key, DELETE_PRIMITIVES, ERR_PRIMITIVE_LIST), True
        if value is None:
            result.pop(key, None)
            continue
        if key not in result:
            result[key] = value
            continue
        current = result[key]
        if _kind(current) != _kind(value) or not isinstance(value, (dict, list)):
            result[key] = value
            continue
        meta = lookup((*path, key))
        strategy = _strategy(meta)
        if isinstance(value, dict):
            if strategy == "replace":
                result[key] = value
            else:
                result[key] = _merge_map(current, value, (*path, key), lookup)
        elif strategy == "merge":
            result[key] = _merge_list(current, value, (*path, key), meta, delete_list, lookup)
        else:
            result[key] = value
    return result


def _strategy(meta: PatchMeta) -> str:
    """The strategy besides retainKeys (extractRetainKeysPatchStrategy)."""
    parts = list(meta.strategy)
    if len(parts) <= 1:
        return "" if not parts or parts[0] == "retainKeys" else parts[0]
    if len(parts) == 2 and "retainKeys" in parts:
        return parts[1] if parts[0] == "retainKeys" else parts[0]
    raise _server_error(f"unexpected patch strategy: [{' '.join(parts)}]")


def _directive_target(key: str, prefix: str, error: str) -> str:
    """`$prefix/field` -> field (extractKey); 400 for any other form."""
    head, sep, tail = key.partition("/")
    if not sep or head != prefix:
        raise bad_request(error)
    return tail


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    """applyRetainKeysDirective: every key the patch sets must be retained; the others go."""
    if RETAIN_KEYS not in patch:
        return
    retained = patch.pop(RETAIN_KEYS)
    if not isinstance(retained, list):
        raise bad_request(ERR_RETAIN_KEYS)
    keep = {_sk(v) for v in retained}
    for key, value in patch.items():
        if value is None or key.startswith((DELETE_PRIMITIVES, SET_ORDER)):
            continue
        if _sk(key) not in keep:
            raise bad_request(ERR_RETAIN_KEYS)
    for key in list(original):
        if _sk(key) not in keep:
            del original[key]


# --- lists ------------------------------------------------------------------------------------


def _merge_ordered_lists(
    original: dict[str, Any], patch: dict[str, Any], path: Path, lookup: Lookup
) -> None:
    """mergePatchIntoOriginal: each `$setElementOrder/<field>` with its patch list, merged and
    put in the order the directive gives (patch order > order in the live list)."""
    for key in [k for k in patch if k.startswith(SET_ORDER)]:
        order = patch.pop(key)
        if not isinstance(order, list):
            raise _bad_arg_type("[]interface {}", order)
        field = _directive_target(key, SET_ORDER, ERR_SET_ORDER)
        found_original, found_patch = field in original, field in patch
        current, changes = original.get(field), patch.get(field)
        if found_original and not isinstance(current, list):
            raise _bad_arg_type("[]interface {}", current)
        if found_patch and not isinstance(changes, list):
            raise _bad_arg_type("[]interface {}", changes)
        before: list[Any] = current or []
        after: list[Any] = changes or []
        meta = lookup((*path, field))
        merge_key = meta.merge_key or ""
        _validate_against_order(after, order, merge_key)
        if not found_original and not found_patch:
            continue
        if found_original and found_patch and _strategy(meta) == "merge":
            merged = _merge_list(before, after, (*path, field), meta, False, lookup)
        else:
            merged = list(after if found_patch else before)
        key_ = merge_key if _element_kind(before, after) is dict else ""
        in_order, server_only = _partition(merged, order, key_)
        original[field] = _normalize_order(in_order, server_only, order, before, key_)
        patch.pop(field, None)


def _validate_against_order(changes: list[Any], order: list[Any], merge_key: str) -> None:
    """validatePatchWithSetOrderList: the patch list's elements appear in the order list, in
    the same relative order."""
    if not order or not changes:
        return
    kept = [c for c in changes if not _is_delete(c)] if merge_key else changes
    i = j = 0
    while i < len(kept) and j < len(order):
        if isinstance(kept[i], dict) and DIRECTIVE in kept[i]:
            i += 1
            continue
        if _key_equal(kept[i], order[j], merge_key):
            i += 1
        j += 1
    if i < len(kept) and j >= len(order):
        raise _server_error(
            f"The order in patch list:\n{go_format(changes)}\n doesn't match "
            f"{SET_ORDER} list:\n{go_format(order)}\n"
        )


def _merge_list(
    original: list[Any],
    patch: list[Any],
    path: Path,
    meta: PatchMeta,
    delete_list: bool,
    lookup: Lookup,
) -> list[Any]:
    """mergeSlice for a list whose strategy is `merge`."""
    if not original and not patch:
        return original
    kind = _element_kind(original, patch)
    merge_key = meta.merge_key or ""
    if kind is not dict:
        if delete_list:
            gone = {_sk(v) for v in patch}
            return [v for v in original if _sk(v) not in gone]
        merged = _dedupe(original + patch)
        in_patch, server_only = _partition(merged, patch, "")
        return _normalize_order(in_patch, server_only, patch, original, "")
    if not merge_key:
        raise _server_error("cannot merge lists without merge key for type map")
    original, patch = _special_elements(original, patch, merge_key)
    merged = list(original)
    for item in patch:
        if merge_key not in item:
            raise _no_merge_key(item, merge_key)
        pos = _find(merged, merge_key, item[merge_key])
        if pos is None:
            merged.append(item)
        else:
            merged[pos] = _merge_map(merged[pos], item, path, lookup)
    in_patch, server_only = _partition(merged, patch, merge_key)
    return _normalize_order(in_patch, server_only, patch, original, merge_key)


def _special_elements(
    original: list[Any], patch: list[Any], merge_key: str
) -> tuple[list[Any], list[Any]]:
    """mergeSliceWithSpecialElements: `$patch: delete` elements remove the matching ones,
    `$patch: replace` makes the (other) patch elements the whole list."""
    plain: list[Any] = []
    replace = False
    for item in patch:
        if DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[DIRECTIVE]
        if directive == "delete":
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
            while (pos := _find(original, merge_key, item[merge_key])) is not None:
                original = original[:pos] + original[pos + 1 :]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise _server_error("merging lists cannot yet be specified in the patch")
        else:
            raise _unknown_patch_type(directive, item)
    if replace:
        return plain, []
    return original, plain


def _find(items: list[Any], key: str, value: Any) -> int | None:
    """findMapInSliceBasedOnKeyValue."""
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise _server_error(f"value for key {i} is not a map.")
        if key in item and _sk(item[key]) == _sk(value):
            return i
    return None


def _partition(items: list[Any], by: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    """(items present in `by`, the others), by merge key for maps, by value for scalars."""
    if merge_key:
        wanted = set()
        for other in by:
            if isinstance(other, dict) and merge_key in other:
                wanted.add(_sk(other[merge_key]))
        present: list[Any] = []
        rest: list[Any] = []
        for item in items:
            if not isinstance(item, dict):
                raise _bad_arg_type("map[string]interface {}", item)
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
            (present if _sk(item[merge_key]) in wanted else rest).append(item)
        return present, rest
    wanted = {_sk(v) for v in by if not isinstance(v, (dict, list))}
    present = [v for v in items if _sk(v) in wanted]
    return present, [v for v in items if _sk(v) not in wanted]


def _normalize_order(
    patch_items: list[Any],
    server_only: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    merge_key: str,
) -> list[Any]:
    """normalizeElementOrder: patch items in patch order, server-only items in server order,
    then interleaved: a server item goes before a patch item only when both are in the server's
    list and it came first there."""
    patch_items = _sort_by(patch_items, patch_order, merge_key)
    server_only = _sort_by(server_only, server_order, merge_key)
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(patch_items):
        if i >= len(server_only):
            out.append(patch_items[j])
            j += 1
        elif j >= len(patch_items):
            out.append(server_only[i])
            i += 1
        else:
            li = _index(server_order, server_only[i], merge_key)
            ri = _index(server_order, patch_items[j], merge_key)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(server_only[i])
                i += 1
            else:
                out.append(patch_items[j])
                j += 1
    return out


def _sort_by(items: list[Any], order: list[Any], merge_key: str) -> list[Any]:
    """normalizeSliceOrder: stable sort by position in `order`; `$patch: delete` elements
    (maps only) go last. Every element of both lists needs the merge key."""
    deletes: list[Any] = []
    if merge_key:
        for item in (*items, *order):
            if not isinstance(item, dict):
                raise _bad_arg_type("map[string]interface {}", item)
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
        deletes = [i for i in items if _is_delete(i)]
        items = [i for i in items if not _is_delete(i)]
    positions = [_index(order, item, merge_key) for item in items]
    ranked = sorted(range(len(items)), key=lambda n: positions[n])
    return [items[n] for n in ranked] + deletes


def _index(items: list[Any], value: Any, merge_key: str) -> int:
    def key_of(v: Any) -> Any:
        if merge_key:
            return _sk(v.get(merge_key)) if isinstance(v, dict) else None
        return _sk(v)

    wanted = key_of(value)
    for i, item in enumerate(items):
        if key_of(item) == wanted:
            return i
    return -1


def _key_equal(left: Any, right: Any, merge_key: str) -> bool:
    """mergeKeyValueEqual."""
    if not merge_key:
        return bool(_sk(left) == _sk(right))
    for side in (left, right):
        if not isinstance(side, dict):
            raise _bad_arg_type("map[string]interface {}", side)
        if merge_key not in side:
            raise _no_merge_key(side, merge_key)
    return bool(_sk(left[merge_key]) == _sk(right[merge_key]))


def _element_kind(*lists: list[Any]) -> type:
    """sliceElementType: the one JSON type of all elements (no lists of lists)."""
    found: type | None = None
    for items in lists:
        for v in items:
            kind = _kind(v)
            if found is None:
                if kind is list:
                    raise ApiError(422, ERR_NO_LIST_OF_LISTS)
                found = kind
            elif kind is not found:
                raise _server_error(
                    "list element types are not identical: " + go_format([list(x) for x in lists])
                )
    if found is None:
        raise _server_error("no elements in any of the given slices")
    return found


def _dedupe(items: list[Any]) -> list[Any]:
    seen: set[Any] = set()
    out = []
    for v in items:
        k = _sk(v)
        if k not in seen:
            seen.add(k)
            out.append(v)
    return out


def _is_delete(item: Any) -> bool:
    return isinstance(item, dict) and item.get(DIRECTIVE) == "delete"


# --- values -----------------------------------------------------------------------------------


def _kind(value: Any) -> type:
    """The Go type a JSON value decodes to (ints and floats differ, as int64 and float64)."""
    return type(value)


def _sk(value: Any) -> Any:
    """A hashable key for a scalar with Go's interface equality (1 != 1.0 != true)."""
    if isinstance(value, (dict, list)):
        return (type(value).__name__, repr(value))
    return (type(value).__name__, value)


def _strip_directives(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_directives(v) for k, v in value.items() if not k.startswith("$")}
    if isinstance(value, list):
        return [_strip_directives(v) for v in value]
    return value


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
