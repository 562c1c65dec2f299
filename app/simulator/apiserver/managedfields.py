"""Field ownership (`metadata.managedFields`) and server-side apply, as kube-apiserver's field
manager keeps them.

Re-derived from apimachinery `pkg/util/managedfields/internal` (fieldmanager.go: managed fields
of the request or else of the live object; structuredmerge.go: the apply version check and
"metadata.managedFields must be nil"; stripmeta.go; managedfieldsupdater.go: one entry per
manager, operation, apiVersion and subresource, its time set when it changed something;
skipnonapplied.go: "before-first-apply"; lastappliedmanager.go / lastappliedupdater.go: kubectl's
client-side apply annotation; conflict.go: the 409 message and causes; managedfields.go: the
entries' order) and structured-merge-diff `merge/update.go` (Update and Apply: conflicts with
the other managers, ownership moving on Update or force, pruning what an applier stopped
applying unless another manager owns it).

Simplified, knowingly: one API version per kind (no conversion of other versions' sets); the
status of a kind with a status subresource is ignored by writes to the main resource and only
it counts for `/status` (kube resets per-strategy field lists); on create, the object it is
compared with is a skeleton (metadata, spec, status, a template's metadata and spec, a
workload's strategy, a pod spec's containers) rather than the Go zero value of the type, so a
few `.` marks may differ; controllers' and kubelets' own writes record no manager; `null` in an
applied configuration is dropped rather than owned; the 10-updater cap (capmanagers.go) is not
applied.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from app.simulator.apiserver import fieldpaths
from app.simulator.apiserver.errors import ApiError, bad_request
from app.simulator.apiserver.fieldpaths import Comparison, FieldPath, FieldSet
from app.simulator.apiserver.kindmeta import Lookup

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
BEFORE_FIRST_APPLY = "before-first-apply"

# stripmeta.go: never owned. Nor are spec and status themselves, which every object has (the
# Go types' non-pointer structs), only what is in them.
_STRIPPED = {
    (("f", "apiVersion"),),
    (("f", "kind"),),
    (("f", "metadata"),),
    (("f", "spec"),),
    (("f", "status"),),
    *((("f", "metadata"), ("f", name)) for name in (
        "name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName",
        "generation", "managedFields", "resourceVersion",
    )),
}  # fmt: skip


@dataclass
class Entry:
    """One managedFields entry: who (manager, operation, apiVersion, subresource), when, what."""

    manager: str
    operation: str  # "Apply" or "Update"
    api_version: str
    fields: FieldSet = field(default_factory=set)
    subresource: str = ""
    time: str | None = None

    @property
    def identity(self) -> tuple[str, str, str, str]:
        """BuildManagerIdentifier: an applier is one manager whatever version it applied."""
        version = "" if self.operation == "Apply" else self.api_version
        return (self.manager, self.operation, version, self.subresource)

    def describe(self) -> str:
        """printManager, for conflict messages (identities carry no time)."""
        text = json.dumps(self.manager)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource)}"
        if self.operation == "Update":
            text += f" using {self.api_version}"
        return text

    def encoded(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
        }
        if self.time:
            out["time"] = self.time
        out["fieldsType"] = "FieldsV1"
        out["fieldsV1"] = fieldpaths.encode(self.fields)
        if self.subresource:
            out["subresource"] = self.subresource
        return out


Managers = dict[tuple[str, str, str, str], Entry]


@dataclass(frozen=True)
class Write:
    """What a write is: its manager, the version it is made in, the subresource it goes to,
    when, and whether the kind has a status its main resource does not write."""

    manager: str
    api_version: str
    now: str
    lookup: Lookup
    subresource: str = ""
    has_status: bool = True

    def scoped(self, paths: Iterable[FieldPath]) -> FieldSet:
        """The paths this write may own: not the stripped metadata; only the status on
        /status, everything but it on the main resource of a kind with a status."""
        out = set()
        for path in paths:
            if path in _STRIPPED or path[:2] == (("f", "metadata"), ("f", "managedFields")):
                continue
            in_status = path[:1] == (("f", "status"),)
            if self.subresource == "status" and not in_status:
                continue
            if self.subresource != "status" and self.has_status and in_status:
                continue
            out.add(path)
        return out

    def compare(self, old: dict[str, Any], new: dict[str, Any]) -> Comparison:
        c = fieldpaths.compare(_without_managed(old), _without_managed(new), self.lookup)
        return Comparison(self.scoped(c.added), self.scoped(c.modified), self.scoped(c.removed))


# --- decoding and encoding -------------------------------------------------------------------


def decode(obj: dict[str, Any] | None) -> Managers | None:
    """The entries of an object's managedFields; None when there are none or they do not
    decode (the caller then falls back to the live object's, as fieldmanager.go does)."""
    raw = ((obj or {}).get("metadata") or {}).get("managedFields")
    if not isinstance(raw, list) or not raw:
        return None
    out: Managers = {}
    try:
        for item in raw:
            if not isinstance(item, dict) or not item.get("manager"):
                continue
            entry = Entry(
                manager=str(item["manager"]),
                operation=str(item.get("operation") or "Update"),
                api_version=str(item.get("apiVersion") or ""),
                fields=fieldpaths.decode(item.get("fieldsV1") or {}),
                subresource=str(item.get("subresource") or ""),
                time=item.get("time"),
            )
            out[entry.identity] = entry
    except (ValueError, TypeError, KeyError):
        return None
    return out


def encode_into(obj: dict[str, Any], managers: Managers) -> None:
    """Set the object's managedFields (sortEncodedManagedFields: operation, time, manager,
    apiVersion, subresource), or drop the field when nobody owns anything."""
    entries = sorted(
        (e for e in managers.values() if e.fields),
        key=lambda e: (e.operation, e.time or "", e.manager, e.api_version, e.subresource),
    )
    meta = obj.setdefault("metadata", {})
    if entries:
        meta["managedFields"] = [e.encoded() for e in entries]
    else:
        meta.pop("managedFields", None)


def _without_managed(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or "managedFields" not in meta:
        return obj
    return {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}


def skeleton(obj: dict[str, Any]) -> dict[str, Any]:
    """What a create is compared with: the parts of an empty object of the kind that are there
    even when empty (see the module docstring)."""
    kind = obj.get("kind")
    spec = obj.get("spec")
    out: dict[str, Any] = {"metadata": {}, "spec": {}, "status": {}}
    if kind == "Pod":
        out["spec"]["containers"] = []
    if isinstance(spec, dict) and isinstance(spec.get("template"), dict):
        out["spec"]["template"] = {"metadata": {}, "spec": {"containers": []}}
    if kind == "Deployment":
        out["spec"]["strategy"] = {}
    elif kind in ("StatefulSet", "DaemonSet"):
        out["spec"]["updateStrategy"] = {}
    return out


# --- update (create, PUT, PATCH) -------------------------------------------------------------


def record_update(live: dict[str, Any] | None, new: dict[str, Any], write: Write) -> None:
    """Set `new`'s managedFields after a create (`live` None), update or non-apply patch:
    the writer owns what it changed, the others lose it (managedfieldsupdater.go, Update)."""
    managers = None if write.subresource else decode(new)
    if managers is None:
        managers = decode(live) or {}
    comparison = write.compare(live if live is not None else skeleton(new), new)
    _take_over(managers, comparison, skip=None)
    changed = (comparison.added | comparison.modified) - comparison.removed
    mine = Entry(write.manager, "Update", write.api_version, changed, write.subresource)
    _own(managers, mine, write.now)
    encode_into(new, managers)


def _own(managers: Managers, entry: Entry, now: str) -> None:
    entry.fields = entry.fields - _STRIPPED
    if not entry.fields:
        return
    previous = managers.get(entry.identity)
    if previous is not None:
        entry.fields |= previous.fields
    entry.time = now
    managers[entry.identity] = entry


def _take_over(
    managers: Managers, comparison: Comparison, skip: tuple[str, str, str, str] | None
) -> list[tuple[Entry, FieldSet]]:
    """merge.Updater.update with force: each other manager loses the fields this write changed
    (returned, as conflicts) and those it removed; managers left with nothing go."""
    changed = comparison.changed()
    conflicts: list[tuple[Entry, FieldSet]] = []
    for key, entry in list(managers.items()):
        if key == skip:
            continue
        lost = entry.fields & changed
        if lost:
            conflicts.append((_copy_entry(entry), lost))
        entry.fields = entry.fields - lost - comparison.removed
        if not entry.fields:
            del managers[key]
    return conflicts


# --- apply -----------------------------------------------------------------------------------


class _Conflicts(Exception):
    def __init__(self, found: list[tuple[Entry, FieldSet]]) -> None:
        super().__init__("apply conflicts")
        self.found = found


def apply(
    live: dict[str, Any] | None, config: dict[str, Any], write: Write, *, force: bool
) -> dict[str, Any]:
    """The object after applying `config` as `write.manager` (a create when `live` is None),
    with its managedFields; 409 with kube's message when fields others own would change and
    `force` is not set (kubectl may take over what its client-side apply annotation shows)."""
    check_config(config, write.api_version)
    config = _drop_nulls(config)
    if write.has_status and not write.subresource:
        config.pop("status", None)
    base = json.loads(json.dumps(_without_managed(live))) if live is not None else {}
    managers = decode(live) or {}
    if live is not None and not managers:  # skipnonapplied.go
        managers = _before_first_apply(base, write)
    try:
        return _apply(base, config, managers, write, force)
    except _Conflicts as e:
        allowed = _allowed_by_last_applied(live, write) if write.manager == "kubectl" else set()
        if allowed and all(paths <= allowed for _, paths in e.found):  # lastappliedmanager.go
            return _apply(base, config, managers, write, True)
        raise conflict_error(e.found) from None


def check_config(config: dict[str, Any], api_version: str) -> None:
    """structuredmerge.go's checks of an applied configuration (400)."""
    sent = config.get("apiVersion") or ""
    if sent != api_version:
        raise bad_request(
            "Incorrect version specified in apply patch. "
            f"Specified patch version: {sent}, expected: {api_version}"
        )
    meta = config.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise bad_request("metadata: must be an object")
    if (meta or {}).get("managedFields") is not None:
        raise bad_request("metadata.managedFields must be nil")


def _apply(
    base: dict[str, Any], config: dict[str, Any], managers: Managers, write: Write, force: bool
) -> dict[str, Any]:
    managers = {k: _copy_entry(e) for k, e in managers.items()}
    me = Entry(write.manager, "Apply", write.api_version, subresource=write.subresource)
    last = managers.get(me.identity)
    me.fields = write.scoped(fieldpaths.to_field_set(config, write.lookup)) - _STRIPPED
    managers[me.identity] = me
    merged: dict[str, Any] = fieldpaths.merge(base, config, write.lookup)
    if last is not None:
        merged = fieldpaths.remove(merged, _prunable(last.fields, managers), write.lookup)
    comparison = write.compare(base, merged)
    conflicts = _take_over(managers, comparison, skip=me.identity)
    if conflicts and not force:
        raise _Conflicts(conflicts)
    changed = _canonical(base) != _canonical(merged)
    me.time = write.now if changed or last is None or not last.time else last.time
    if not me.fields:
        managers.pop(me.identity, None)
    annotations = (merged.get("metadata") or {}).get("annotations")
    if write.manager == "kubectl" and isinstance(annotations, dict) and LAST_APPLIED in annotations:
        annotations[LAST_APPLIED] = last_applied(config)  # lastappliedupdater.go
    encode_into(merged, managers)
    return merged


def _prunable(last: FieldSet, managers: Managers) -> FieldSet:
    """Updater.prune: what the applier applied last time and applies no more, unless some
    manager (the applier's new set included) owns it or anything below it (the named fields
    above owned ones count as owned, EnsureNamedFieldsAreMembers); the key fields of an item
    that stays are part of its identity and stay with it."""
    kept: FieldSet = set()
    for entry in managers.values():
        for path in entry.fields:
            kept.update(path[:n] for n in range(1, len(path) + 1))
    out = set()
    for path in last - kept:
        parent = path[:-1]
        if parent and parent[-1][0] == "k" and parent in kept:
            keys = json.loads(parent[-1][1])
            if path[-1][0] == "f" and path[-1][1] in keys:
                continue
        out.add(path)
    return out


def _before_first_apply(obj: dict[str, Any], write: Write) -> Managers:
    """An object nobody manages yet: its fields are owned by "before-first-apply" (Update)."""
    managers: Managers = {}
    comparison = write.compare(skeleton(obj), obj)
    changed = (comparison.added | comparison.modified) - comparison.removed
    _own(managers, Entry(BEFORE_FIRST_APPLY, "Update", write.api_version, changed), write.now)
    return managers


def _allowed_by_last_applied(live: dict[str, Any] | None, write: Write) -> FieldSet:
    """The fields kubectl's client-side apply annotation sets to the live values."""
    annotations = ((live or {}).get("metadata") or {}).get("annotations") or {}
    try:
        last = json.loads(annotations.get(LAST_APPLIED) or "")
    except ValueError:
        return set()
    if not isinstance(last, dict) or last.get("apiVersion") != write.api_version:
        return set()
    leaves = write.scoped(fieldpaths.to_field_set(last, write.lookup))
    c = fieldpaths.compare(last, _without_managed(live or {}), write.lookup)
    return leaves - c.added - c.modified - c.removed


def conflict_error(found: list[tuple[Entry, FieldSet]]) -> ApiError:
    """conflict.go NewConflictError: 409 Conflict, a FieldManagerConflict cause per field."""
    pairs = [
        (entry, path)
        for entry, paths in sorted(found, key=lambda c: _manager_order(c[0]))
        for path in sorted(paths, key=_path_order)
    ]
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {entry.describe()}",
            "field": fieldpaths.path_string(path),
        }
        for entry, path in pairs
    ]
    if len(pairs) == 1:
        entry, path = pairs[0]
        message = (
            f"Apply failed with 1 conflict: conflict with {entry.describe()}: "
            f"{fieldpaths.path_string(path)}"
        )
    else:
        lines = []
        for entry, paths in sorted(found, key=lambda c: _manager_order(c[0])):
            lines.append(f"conflicts with {entry.describe()}:")
            lines += [f"- {fieldpaths.path_string(p)}" for p in sorted(paths, key=_path_order)]
        message = f"Apply failed with {len(pairs)} conflicts: " + "\n".join(lines)
    return ApiError(409, message, "Conflict", {"causes": causes})


def _manager_order(entry: Entry) -> tuple[str, ...]:
    return (entry.manager, entry.operation, entry.api_version, entry.subresource)


_RANK = {"f": 0, "k": 1, "v": 2, "i": 3}


def _path_order(path: FieldPath) -> list[tuple[int, int, str]]:
    """Set.Iterate's order: at each level a set's members, then its children's subtrees."""
    last = len(path) - 1
    return [(0 if i == last else 1, _RANK[kind], text) for i, (kind, text) in enumerate(path)]


def last_applied(config: dict[str, Any]) -> str:
    """buildLastApplied: the applied configuration without that annotation, as Go's JSON
    encoder writes it (sorted keys, HTML characters escaped, a final newline)."""
    body = json.loads(json.dumps(config))
    annotations = (body.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict):
        annotations.pop(LAST_APPLIED, None)
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") + "\n"


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _copy_entry(e: Entry) -> Entry:
    return Entry(e.manager, e.operation, e.api_version, set(e.fields), e.subresource, e.time)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))
