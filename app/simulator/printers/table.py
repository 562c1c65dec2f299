"""The conversions a client can ask for in place of an object or a list: a meta.k8s.io Table,
a PartialObjectMetadata or a PartialObjectMetadataList, re-derived from
staging/src/k8s.io/apiserver/pkg/endpoints/handlers/response.go (doTransformObject, asTable,
asPartialObjectMetadata, asPartialObjectMetadataList) and pkg/printers/tablegenerator.go
(GenerateTable: the list metadata, and no column definitions when headers are off).

Each row embeds, per `includeObject`, the object's metadata as a PartialObjectMetadata
(`Metadata`, the default), the whole object (`Object`) or nothing (`None`: `object: null`).
A `Status` (an error, a watch's ERROR event) passes through unchanged. Pure: `now` is passed in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.simulator.printers.common import Obj, Printer, meta
from app.simulator.printers.negotiation import NotAcceptable, Target
from app.simulator.printers.registry import printer_for


def _group_kind(obj: Obj) -> tuple[str, str, bool]:
    """(API group, item kind, is a list) of an object or a list as the server returns them."""
    api_version = str(obj.get("apiVersion") or "")
    group = api_version.rpartition("/")[0]
    kind = str(obj.get("kind") or "")
    is_list = isinstance(obj.get("items"), list) and kind.endswith("List")
    return group, kind.removesuffix("List") if is_list else kind, is_list


def _go_type(group: str, kind: str, is_list: bool) -> str:
    """The `%T` of the internal type in the server's messages: `*core.PodList`,
    `*apps.Deployment`."""
    package = group.split(".")[0] if group else "core"
    return f"*{package}.{kind}{'List' if is_list else ''}"


def partial(obj: Obj, api_version: str) -> dict[str, Any]:
    """meta.AsPartialObjectMetadata: the object's whole metadata under a PartialObjectMetadata."""
    return {"kind": "PartialObjectMetadata", "apiVersion": api_version, "metadata": dict(meta(obj))}


def list_meta(obj: Obj) -> dict[str, Any]:
    """The ListMeta a converted list keeps: resourceVersion, continue, remainingItemCount (an
    object's own resourceVersion for a single object)."""
    src = meta(obj)
    out: dict[str, Any] = {}
    for key in ("resourceVersion", "continue", "remainingItemCount"):
        if src.get(key) not in (None, ""):
            out[key] = src[key]
    return out


def _embedded(
    obj: Obj, include: str, api_version: str, defaults: tuple[str, str]
) -> dict[str, Any] | None:
    if include == "None":
        return None
    if include == "Object":
        return {"apiVersion": defaults[0], "kind": defaults[1], **obj}
    return partial(obj, api_version)


def _rows(printer: Printer, objs: list[Obj], now: float) -> tuple[Any, list[list[Any]]]:
    if printer.table is not None:
        columns, cells = printer.table(objs, now)
        return (None if columns is None else [c.to_json() for c in columns]), cells
    return [c.to_json() for c in printer.columns], [printer.cells(o, now) for o in objs]


def as_table(
    obj: Obj, target: Target, include: str, now: float, *, no_headers: bool = False
) -> dict[str, Any]:
    """asTable: the Table of an object or a list, wide (every column, priority 1 included)."""
    group, kind, is_list = _group_kind(obj)
    printer = printer_for(group, kind)
    objs = [o for o in obj["items"] if isinstance(o, Mapping)] if is_list else [obj]
    columns, cells = _rows(printer, objs, now)
    defaults = (str(obj.get("apiVersion") or ""), kind)
    rows: list[dict[str, Any]] = []
    for o, row_cells in zip(objs, cells, strict=True):
        row: dict[str, Any] = {"cells": row_cells}
        conditions = printer.conditions(o) if printer.conditions is not None else []
        if conditions:
            row["conditions"] = conditions
        row["object"] = _embedded(o, include, target.api_version, defaults)
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": target.api_version,
        "metadata": list_meta(obj),
        "columnDefinitions": None if no_headers else columns,
        "rows": None if (not rows and printer.null_rows) else rows,
    }


def transform(
    obj: Obj, target: Target, include: str, now: float, *, no_headers: bool = False
) -> Obj:
    """doTransformObject: `obj` in the representation `target` names. NotAcceptable when a list
    is asked for as one object's metadata or an object as a list's."""
    if obj.get("kind") == "Status":
        return obj
    if target.kind == "Table":
        return as_table(obj, target, include, now, no_headers=no_headers)
    group, kind, is_list = _group_kind(obj)
    if target.kind == "PartialObjectMetadata":
        if is_list:
            raise NotAcceptable(
                "you requested PartialObjectMetadata, but the requested object is a list "
                f"({_go_type(group, kind, is_list)})"
            )
        return partial(obj, target.api_version)
    if not is_list:
        raise NotAcceptable(
            "you requested PartialObjectMetadataList, but the requested object is not a list "
            f"({_go_type(group, kind, is_list)})"
        )
    return {
        "kind": "PartialObjectMetadataList",
        "apiVersion": target.api_version,
        "metadata": list_meta(obj),
        # A list built item by item: none is `items: null`, as the Go slice is nil.
        "items": [partial(o, target.api_version) for o in obj["items"] if isinstance(o, Mapping)]
        or None,
    }
