"""The client half of strategic merge patch, for tests: a two-way patch from `original` to
`modified`, re-derived from apimachinery `pkg/util/strategicpatch/patch.go`
(`CreateTwoWayMergeMapPatch`: `diffMaps` with SetElementOrder, so with `$setElementOrder`,
`$deleteFromPrimitiveList`, `$retainKeys` and `$patch: delete` as kubectl sends them).

Applying its result with app.simulator.apiserver.strategic.apply must give back `modified`:
the property test of the server half.
"""

from __future__ import annotations

from typing import Any

from app.simulator.apiserver.gofmt import go_format
from app.simulator.apiserver.schema import PatchMeta
from app.simulator.apiserver.strategic import Lookup

Path = tuple[str, ...]


def two_way(original: dict[str, Any], modified: dict[str, Any], lookup: Lookup) -> dict[str, Any]:
    return _diff_maps(original, modified, (), lookup, retain=False)


def _split(meta: PatchMeta) -> tuple[bool, str]:
    parts = list(meta.strategy)
    retain = "retainKeys" in parts
    rest = [p for p in parts if p != "retainKeys"]
    return retain, rest[0] if rest else ""


def _diff_maps(
    original: dict[str, Any], modified: dict[str, Any], path: Path, lookup: Lookup, retain: bool
) -> dict[str, Any]:
    patch: dict[str, Any] = {}
    retained: list[str] = []
    for key, new in modified.items():
        if retain and new is not None:
            retained.append(key)
        if key not in original:
            patch[key] = new
            continue
        old = original[key]
        if type(old) is not type(new):
            patch[key] = new
        elif isinstance(new, dict):
            keep, strategy = _split(lookup((*path, key)))
            if strategy == "replace":
                patch[key] = new
            else:
                sub = _diff_maps(old, new, (*path, key), lookup, keep)
                if sub:
                    patch[key] = sub
        elif isinstance(new, list):
            _diff_list_field(key, old, new, (*path, key), lookup, patch)
        elif old != new:
            patch[key] = new
    for key in original:
        if key not in modified:
            patch[key] = None
    if retained and (
        patch or any(v is not None and k not in modified for k, v in original.items())
    ):
        patch["$retainKeys"] = sorted(retained, key=go_format)
    return patch


def _diff_list_field(
    key: str, old: list[Any], new: list[Any], path: Path, lookup: Lookup, patch: dict[str, Any]
) -> None:
    meta = lookup(path)
    retain, strategy = _split(meta)
    if strategy != "merge":
        if old != new:
            patch[key] = new
        return
    add, delete, order = _diff_lists(old, new, path, meta.merge_key or "", lookup, retain)
    if add:
        patch[key] = add
    if delete:
        patch[f"$deleteFromPrimitiveList/{key}"] = delete
    if order:
        patch[f"$setElementOrder/{key}"] = order


def _diff_lists(
    old: list[Any], new: list[Any], path: Path, merge_key: str, lookup: Lookup, retain: bool
) -> tuple[list[Any], list[Any], list[Any]]:
    if not old:
        return (list(new), [], [])
    if isinstance((old + new)[0], dict):
        changes, deletes = _diff_lists_of_maps(old, new, path, merge_key, lookup, retain)
        position = {go_format(v[merge_key]): i for i, v in enumerate(new)}
        changes.sort(key=lambda v: position.get(go_format(v[merge_key]), -1))
        same_order = len(old) == len(new) and all(
            a[merge_key] == b[merge_key] for a, b in zip(old, new, strict=True)
        )
        changes += deletes
        order = [{merge_key: v[merge_key]} for v in new] if changes or not same_order else []
        return changes, [], order
    added = [v for v in new if v not in old]
    removed = sorted({go_format(v): v for v in old if v not in new}.values(), key=go_format)
    order = list(new) if removed or old != new else []
    return added, removed, order


def _diff_lists_of_maps(
    old: list[Any], new: list[Any], path: Path, merge_key: str, lookup: Lookup, retain: bool
) -> tuple[list[Any], list[Any]]:
    before = {go_format(v[merge_key]): v for v in old}
    after = {go_format(v[merge_key]): v for v in new}
    changes: list[Any] = []
    deletes: list[Any] = []
    for k in sorted(set(before) | set(after)):
        if k in before and k in after:
            sub = _diff_maps(before[k], after[k], path, lookup, retain)
            if sub:
                sub[merge_key] = after[k][merge_key]
                changes.append(sub)
        elif k in after:
            changes.append(after[k])
        else:
            deletes.append({merge_key: before[k][merge_key], "$patch": "delete"})
    return changes, deletes
