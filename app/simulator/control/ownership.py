"""Controller references: which object controls another, re-derived from kubernetes/kubernetes
`staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/controller_ref.go` (GetControllerOf,
IsControlledBy, NewControllerRef), and the objects of one kind a controller owns, found through
the store's "owner" index (the owner UIDs of every object, as the controllers' informers index
them)."""

from __future__ import annotations

from typing import Any

from app.simulator.apiserver import podutil
from app.simulator.apiserver.resources import ResourceType
from app.simulator.apiserver.store import Entry, Store


def is_controlled_by(obj: dict[str, Any], uid: str) -> bool:
    """IsControlledBy: the object's controller reference names the owner's UID."""
    ref = podutil.controller_of(obj)  # GetControllerOf
    return ref is not None and ref.get("uid") == uid


def controller_ref(owner: dict[str, Any]) -> dict[str, Any]:
    """NewControllerRef: the owner reference a controller sets on what it creates."""
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def controlled(store: Store, rt: ResourceType, owner: dict[str, Any]) -> list[Entry]:
    """The stored objects of `rt` that `owner` controls (not merely owns)."""
    uid = owner["metadata"]["uid"]
    return [e for e in store.by_index(rt, "owner", uid) if is_controlled_by(e.obj, uid)]
