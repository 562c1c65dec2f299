"""DELETE as kube-apiserver's generic registry performs it: DeleteOptions, preconditions,
finalizers, and the garbage collector's propagation policies turned into finalizers.

Re-derived from kubernetes/kubernetes `staging/src/k8s.io/apiserver/pkg/registry/generic/registry/
store.go` (Delete, updateForGracefulDeletionAndFinalizers, deletionFinalizersForGarbageCollection,
shouldOrphanDependents, shouldDeleteDependents, markAsDeleting, shouldDeleteDuringUpdate),
`pkg/registry/rest/update.go` (BeforeUpdate keeps the deletion fields), `pkg/endpoints/handlers/
delete.go` (options from the body or the query; 202 for orphanDependents=false) and apimachinery's
`ValidateDeleteOptions` and `ValidateObjectMetaUpdate` (no new finalizers while deleting).

An object without finalizers is removed at once (the simulator has no graceful deletion: pods go
at once too). With finalizers, or with a policy that needs the garbage collector (Orphan: the
`orphan` finalizer; Foreground: `foregroundDeletion`), it gets a deletionTimestamp and stays until
the last finalizer is removed by an update, which then removes it.
"""

from __future__ import annotations

import re
from typing import Any

from app.simulator.apiserver.errors import ApiError, FieldError, bad_request, invalid
from app.simulator.apiserver.resources import ResourceType
from app.simulator.apiserver.store import Entry, Store

ORPHAN = "orphan"  # metav1.FinalizerOrphanDependents
FOREGROUND = "foregroundDeletion"  # metav1.FinalizerDeleteDependents
POLICIES = ("Foreground", "Background", "Orphan")


def parse_options(body: Any, query: dict[str, str]) -> dict[str, Any]:
    """DeleteOptions from the decoded body, or from the query when the body is empty, validated
    as ValidateDeleteOptions does (422 on kind DeleteOptions.meta.k8s.io)."""
    if body is None:
        options: dict[str, Any] = {}
        if "propagationPolicy" in query:
            options["propagationPolicy"] = query["propagationPolicy"]
        if "orphanDependents" in query:
            options["orphanDependents"] = query["orphanDependents"] == "true"
        if "dryRun" in query:
            options["dryRun"] = [query["dryRun"]]
    elif isinstance(body, dict):
        options = body
    else:
        raise bad_request("error decoding DeleteOptions: the body must be a JSON object")
    errs: list[FieldError] = []
    policy = options.get("propagationPolicy")
    if options.get("orphanDependents") is not None and policy is not None:
        errs.append(
            FieldError(
                "propagationPolicy",
                "FieldValueInvalid",
                "orphanDependents and deletionPropagation cannot be both set",
                policy,
            )
        )
    if policy is not None and policy not in POLICIES:
        errs.append(
            FieldError(
                "propagationPolicy",
                "FieldValueNotSupported",
                'supported values: "Foreground", "Background", "Orphan", "nil"',
                policy,
            )
        )
    if errs:
        raise invalid("DeleteOptions", "meta.k8s.io", "", errs)
    return options


def is_dry_run(options: dict[str, Any], query: dict[str, str]) -> bool:
    return "All" in (options.get("dryRun") or []) or query.get("dryRun") == "All"


def gc_finalizers(meta: dict[str, Any], options: dict[str, Any]) -> list[str]:
    """deletionFinalizersForGarbageCollection: the object's finalizers with `orphan` and
    `foregroundDeletion` set as the options (else the object's own) ask. Every kind the
    simulator serves defaults to background deletion (rest.DeleteDependents)."""
    finalizers = list(meta.get("finalizers") or [])
    orphan, foreground = ORPHAN in finalizers, FOREGROUND in finalizers
    if options.get("orphanDependents") is not None:
        orphan, foreground = bool(options["orphanDependents"]), False
    elif options.get("propagationPolicy") is not None:
        policy = options["propagationPolicy"]
        orphan, foreground = policy == "Orphan", policy == "Foreground"
    kept = [f for f in finalizers if f not in (ORPHAN, FOREGROUND)]
    return kept + ([ORPHAN] if orphan else []) + ([FOREGROUND] if foreground else [])


def check_preconditions(rt: ResourceType, entry: Entry, options: dict[str, Any]) -> None:
    """DeleteOptions.preconditions: 409 Conflict when the uid or resourceVersion moved on."""
    pre = options.get("preconditions") or {}
    if not isinstance(pre, dict):
        return
    meta = entry.obj["metadata"]
    for field, label, have in (
        ("uid", "UID", meta.get("uid")),
        ("resourceVersion", "ResourceVersion", str(entry.rv)),
    ):
        want = pre.get(field)
        if want and want != have:
            raise ApiError(
                409,
                f'Operation cannot be fulfilled on {rt.group_resource} "{meta["name"]}": '
                f"Precondition failed: {label} in precondition: {want}, "
                f"{label} in object meta: {have}",
                "Conflict",
                {"name": meta["name"], "group": rt.group, "kind": rt.plural},
            )


def delete(
    store: Store,
    rt: ResourceType,
    ns: str,
    name: str,
    options: dict[str, Any],
    now: str,
    *,
    dry_run: bool = False,
) -> tuple[Entry, bool]:
    """(the object, True if it is gone) after a DELETE: removed at once, or marked as being
    deleted (deletionTimestamp, deletionGracePeriodSeconds 0, generation + 1) while finalizers
    remain."""
    with store.lock:
        current = store.require(rt, ns, name)
        check_preconditions(rt, current, options)
        meta = current.obj["metadata"]
        finalizers = gc_finalizers(meta, options)
        if not finalizers:
            return (current, True) if dry_run else (store.delete(rt, ns, name), True)
        obj = current.copy()
        obj["metadata"]["finalizers"] = finalizers
        _mark_as_deleting(obj["metadata"], now)
        if obj == current.obj or dry_run:
            return current, False
        return store.replace(rt, obj), False


def _mark_as_deleting(meta: dict[str, Any], now: str) -> None:
    if not meta.get("deletionTimestamp"):
        if meta.get("generation", 0) > 0:
            meta["generation"] += 1
        meta["deletionTimestamp"] = now
    meta["deletionGracePeriodSeconds"] = 0


def prepare_update(rt: ResourceType, old: dict[str, Any], new: dict[str, Any]) -> None:
    """BeforeUpdate: an update can neither remove nor change the deletion fields, nor add
    finalizers to an object being deleted (422)."""
    old_meta, meta = old["metadata"], new["metadata"]
    for field in ("deletionTimestamp", "deletionGracePeriodSeconds"):
        if old_meta.get(field) is not None:
            meta[field] = old_meta[field]
        elif meta.get(field) is not None:
            raise invalid(
                rt.kind,
                rt.group,
                meta.get("name", ""),
                [
                    FieldError(
                        f"metadata.{field}", "FieldValueInvalid", "field is immutable", meta[field]
                    )
                ],
            )
    if old_meta.get("deletionTimestamp"):
        added = [
            f for f in meta.get("finalizers") or [] if f not in (old_meta.get("finalizers") or [])
        ]
        if added:
            go_list = "[]string{" + ", ".join(f'"{f}"' for f in added) + "}"
            raise invalid(
                rt.kind,
                rt.group,
                meta.get("name", ""),
                [
                    FieldError(
                        "metadata.finalizers",
                        "FieldValueForbidden",
                        "no new finalizers can be added if the object is being deleted, "
                        f"found new finalizers {go_list}",
                    )
                ],
            )


def after_update(store: Store, rt: ResourceType, old: dict[str, Any], entry: Entry) -> Entry:
    """shouldDeleteDuringUpdate: the update that removed the last finalizer of an object being
    deleted removes it; the answer is then the deleted object."""
    meta = entry.obj["metadata"]
    if (
        meta.get("finalizers")
        or not old["metadata"].get("finalizers")
        or not old["metadata"].get("deletionTimestamp")
    ):
        return entry
    with store.lock:
        latest = store.get(rt, meta.get("namespace", ""), meta["name"])
        if latest is None or latest.rv != entry.rv:
            return entry
        return store.delete(rt, meta.get("namespace", ""), meta["name"])


def remove_finalizer(
    store: Store, rt: ResourceType, ns: str, name: str, uid: str, finalizer: str
) -> None:
    """What a controller does when its finalizer's work is done: an update without it (which
    removes an object being deleted once no finalizer is left)."""
    with store.lock:
        entry = store.get(rt, ns, name)
        if entry is None or entry.obj["metadata"].get("uid") != uid:
            return
        if finalizer not in (entry.obj["metadata"].get("finalizers") or []):
            return
        obj = entry.copy()
        kept = [f for f in obj["metadata"]["finalizers"] if f != finalizer]
        if kept:
            obj["metadata"]["finalizers"] = kept
        else:
            del obj["metadata"]["finalizers"]
        after_update(store, rt, entry.obj, store.replace(rt, obj))


_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_QUALIFIED_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def validate_finalizers(finalizers: Any) -> list[FieldError]:
    """ValidateFinalizers (apimachinery api/validation/objectmeta.go): qualified names, and not
    both `orphan` and `foregroundDeletion`."""
    if not isinstance(finalizers, list):
        return []
    errs: list[FieldError] = []
    for f in finalizers:
        for msg in _qualified_name_errors(str(f)):
            errs.append(FieldError("metadata.finalizers", "FieldValueInvalid", msg, f))
    if ORPHAN in finalizers and FOREGROUND in finalizers:
        go_list = "[]string{" + ", ".join(f'"{f}"' for f in finalizers) + "}"
        errs.append(
            FieldError(
                "metadata.finalizers",
                "FieldValueInvalid",
                f"finalizer {ORPHAN} and {FOREGROUND} cannot be both set",
                _Raw(go_list),
            )
        )
    return errs


def _qualified_name_errors(value: str) -> list[str]:
    """IsQualifiedName: an optional DNS-subdomain prefix and '/', then a name of 63 at most."""
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
            "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') "
            "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    errs: list[str] = []
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        elif len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix):
            errs.append(
                "prefix part a lowercase RFC 1123 subdomain must consist of lower case "
                "alphanumeric characters, '-' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            )
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _QUALIFIED_NAME.match(name):
        errs.append(_QUALIFIED_NAME_MSG)
    return errs


class _Raw:
    """A value printed as is (a Go %#v of a []string), not quoted."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text
