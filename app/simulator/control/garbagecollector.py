"""The garbage collector: dependents follow their owners through ownerReferences.

Re-derived from kubernetes/kubernetes `pkg/controller/garbagecollector/garbagecollector.go`
(attemptToDeleteItem, classifyReferences, processDeletingDependentsItem, orphanDependents) and
`graph_builder.go` (what it enqueues on which change):

- an object whose owners are all gone (absent, or another uid under the name) is deleted, in the
  background, or as its own `orphan`/`foregroundDeletion` finalizer says; one that still has an
  owner only loses the references to the gone ones;
- an owner deleted in the foreground (`foregroundDeletion` finalizer) has its dependents deleted
  (those that have dependents themselves in the foreground too) and keeps its finalizer until no
  dependent with `blockOwnerDeletion` is left;
- an owner deleted with `orphan` loses its references from every dependent, then the finalizer.

It sees the store's changes as `Work` keys that the controllers' queue runs one at a time.
"""

from __future__ import annotations

from typing import Any

from app.simulator.apiserver import deletion
from app.simulator.apiserver.errors import ApiError
from app.simulator.apiserver.resources import Registry, ResourceType
from app.simulator.apiserver.store import Store, WatchEvent

Work = tuple[str, ...]


def owner_index(obj: dict[str, Any]) -> list[str]:
    return [r["uid"] for r in obj.get("metadata", {}).get("ownerReferences") or [] if "uid" in r]


def work_for(event: WatchEvent) -> list[Work]:
    """graph_builder: the checks a change calls for (cheap: under the store's lock)."""
    meta = event.entry.obj["metadata"]
    ns, kind = meta.get("namespace", ""), event.rt.kind
    refs = meta.get("ownerReferences") or []
    work: list[Work] = []
    if event.type == "DELETED":
        work.append(("gc-dependents", meta["uid"]))
        work += [_owner_work(r, ns) for r in refs]
        return work
    finalizers = meta.get("finalizers") or []
    api_version = event.rt.api_version
    if meta.get("deletionTimestamp") and (
        deletion.FOREGROUND in finalizers or deletion.ORPHAN in finalizers
    ):
        work.append(("gc-owner", kind, ns, meta["name"], api_version))
    before = (event.prev.obj["metadata"].get("ownerReferences") or []) if event.prev else []
    if refs and (event.type == "ADDED" or refs != before):
        work.append(("gc-item", kind, ns, meta["name"], api_version))
    if before and refs != before:  # a dependent let go: its owners may be waiting for that
        work += [_owner_work(r, ns) for r in before]
    return work


def _owner_work(ref: dict[str, Any], ns: str) -> Work:
    return ("gc-owner", ref.get("kind", ""), ns, ref.get("name", ""), ref.get("apiVersion", ""))


class GarbageCollector:
    def __init__(self, store: Store, now_str: Any, resources: Registry) -> None:
        self.store = store
        self.now_str = now_str
        self.resources = resources  # owners and dependents of any kind served, CRDs' too

    def run(self, work: Work) -> None:
        if work[0] == "gc-dependents":
            for rt, dep in self._dependents(work[1]):
                self._attempt_to_delete(rt, dep)
        elif work[0] == "gc-item":
            kind = self.resources.by_kind(work[1], work[4] or None)
            entry = None if kind is None else self.store.get(kind, work[2], work[3])
            if kind is not None and entry is not None:
                self._attempt_to_delete(kind, entry.obj)
        elif work[0] == "gc-owner":
            self._deleting_owner(work[1], work[2], work[3], work[4] or None)

    # --- attemptToDeleteItem -----------------------------------------------------------------

    def _attempt_to_delete(self, rt: ResourceType, item: dict[str, Any]) -> None:
        meta = item["metadata"]
        if meta.get("deletionTimestamp"):
            if deletion.FOREGROUND in (meta.get("finalizers") or []):
                self._deleting_dependents(rt, item)
            return
        refs = meta.get("ownerReferences") or []
        if not refs:
            return
        solid, dangling, waiting = self._classify(item, refs)
        if solid:
            if dangling or waiting:
                gone = {r["uid"] for r in dangling + waiting}
                self._set_owner_refs(rt, item, [r for r in refs if r.get("uid") not in gone])
            return
        if waiting and self._dependents(meta["uid"]):
            if any(self._deleting_dependents_of(dep) for _, dep in self._dependents(meta["uid"])):
                # a possible cycle: stop blocking the owners, then delete in the foreground
                uids = {r["uid"] for r in waiting}
                self._set_owner_refs(
                    rt,
                    item,
                    [
                        {**r, "blockOwnerDeletion": False} if r.get("uid") in uids else r
                        for r in refs
                    ],
                )
            self._delete(rt, item, "Foreground")
            return
        finalizers = meta.get("finalizers") or []
        if deletion.ORPHAN in finalizers:
            policy = "Orphan"
        elif deletion.FOREGROUND in finalizers:
            policy = "Foreground"
        else:
            policy = "Background"
        self._delete(rt, item, policy)

    def _classify(
        self, item: dict[str, Any], refs: list[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        """classifyReferences: owners that hold (solid), are gone (dangling), or are being
        deleted in the foreground (waitingForDependentsDeletion). An owner of a kind the
        simulator does not serve cannot be looked up and counts as solid."""
        solid, dangling, waiting = [], [], []
        for ref in refs:
            found, owner = self._owner(item, ref)
            if not found:
                solid.append(ref)
            elif owner is None or owner["metadata"].get("uid") != ref.get("uid"):
                dangling.append(ref)
            elif self._deleting_dependents_of(owner):
                waiting.append(ref)
            else:
                solid.append(ref)
        return solid, dangling, waiting

    def _owner(
        self, item: dict[str, Any], ref: dict[str, Any]
    ) -> tuple[bool, dict[str, Any] | None]:
        """(could it be looked up, the owner's object or None if it does not exist)."""
        api_version = ref.get("apiVersion")
        rt = self.resources.by_kind(ref.get("kind", ""), api_version) if api_version else None
        if rt is None:
            return False, None
        ns = item["metadata"].get("namespace", "") if rt.namespaced else ""
        entry = self.store.get(rt, ns, ref.get("name", ""))
        return True, None if entry is None else entry.obj

    @staticmethod
    def _deleting_dependents_of(obj: dict[str, Any]) -> bool:
        meta = obj["metadata"]
        return bool(meta.get("deletionTimestamp")) and deletion.FOREGROUND in (
            meta.get("finalizers") or []
        )

    # --- owners being deleted ----------------------------------------------------------------

    def _deleting_owner(self, kind: str, ns: str, name: str, api_version: str | None) -> None:
        rt = self.resources.by_kind(kind, api_version)
        if rt is None:
            return
        entry = self.store.get(rt, ns if rt.namespaced else "", name)
        if entry is None or not entry.obj["metadata"].get("deletionTimestamp"):
            return
        finalizers = entry.obj["metadata"].get("finalizers") or []
        if deletion.ORPHAN in finalizers:
            self._orphan_dependents(rt, entry.obj)
        elif deletion.FOREGROUND in finalizers:
            self._deleting_dependents(rt, entry.obj)

    def _deleting_dependents(self, rt: ResourceType, owner: dict[str, Any]) -> None:
        """processDeletingDependentsItem: delete the dependents; drop the finalizer once none
        with blockOwnerDeletion is left."""
        uid = owner["metadata"]["uid"]
        blocking = 0
        for dep_rt, dep in self._dependents(uid):
            if any(
                r.get("uid") == uid and r.get("blockOwnerDeletion")
                for r in dep["metadata"].get("ownerReferences") or []
            ):
                blocking += 1
            if not self._deleting_dependents_of(dep):
                self._attempt_to_delete(dep_rt, dep)
        if blocking == 0:
            meta = owner["metadata"]
            deletion.remove_finalizer(
                self.store, rt, meta.get("namespace", ""), meta["name"], uid, deletion.FOREGROUND
            )

    def _orphan_dependents(self, rt: ResourceType, owner: dict[str, Any]) -> None:
        uid = owner["metadata"]["uid"]
        for dep_rt, dep in self._dependents(uid):
            refs = dep["metadata"].get("ownerReferences") or []
            self._set_owner_refs(dep_rt, dep, [r for r in refs if r.get("uid") != uid])
        meta = owner["metadata"]
        deletion.remove_finalizer(
            self.store, rt, meta.get("namespace", ""), meta["name"], uid, deletion.ORPHAN
        )

    # --- reads and writes --------------------------------------------------------------------

    def _dependents(self, owner_uid: str) -> list[tuple[ResourceType, dict[str, Any]]]:
        return [
            (rt, entry.obj)
            for rt in self.resources.stored()
            for entry in self.store.by_index(rt, "owner", owner_uid)
        ]

    def _set_owner_refs(
        self, rt: ResourceType, item: dict[str, Any], refs: list[dict[str, Any]]
    ) -> None:
        meta = item["metadata"]

        def mutate(obj: dict[str, Any]) -> bool:
            if obj["metadata"]["uid"] != meta["uid"]:
                return False
            if refs:
                obj["metadata"]["ownerReferences"] = refs
            else:
                obj["metadata"].pop("ownerReferences", None)
            return True

        self.store.update(rt, meta.get("namespace", ""), meta["name"], mutate)

    def _delete(self, rt: ResourceType, item: dict[str, Any], policy: str) -> None:
        meta = item["metadata"]
        options = {"propagationPolicy": policy, "preconditions": {"uid": meta["uid"]}}
        try:
            deletion.delete(
                self.store, rt, meta.get("namespace", ""), meta["name"], options, self.now_str()
            )
        except ApiError as e:
            if e.code not in (404, 409):  # gone already, or another object took the name
                raise
