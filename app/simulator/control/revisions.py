"""The ControllerRevisions of one owner in the store: client-go's view that the StatefulSet and
DaemonSet controllers use (kubernetes/kubernetes `pkg/controller/history/controller_history.go`
realHistory: list, create with collision counting, raise a revision number, delete)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.simulator.apiserver import deletion
from app.simulator.apiserver.errors import ApiError
from app.simulator.apiserver.resources import CONTROLLERREVISION
from app.simulator.apiserver.store import Store
from app.simulator.control import history
from app.simulator.control.ownership import controlled


class Revisions:
    def __init__(self, store: Store, now_str: Callable[[], str]) -> None:
        self.store = store
        self.now_str = now_str

    def of(self, owner: dict[str, Any]) -> list[dict[str, Any]]:
        """The owner's revisions, oldest revision first."""
        owned = controlled(self.store, CONTROLLERREVISION, owner)
        return history.sort_revisions([e.copy() for e in owned])

    def create(self, revision: dict[str, Any]) -> dict[str, Any] | None:
        """CreateControllerRevision: the stored revision, or an equal one already stored under
        its name; None when another revision holds the name (a hash collision: the caller counts
        it in status.collisionCount and tries again)."""
        meta = revision["metadata"]
        try:
            return self.store.create(CONTROLLERREVISION, revision, self.now_str()).copy()
        except ApiError as e:
            if e.code != 409:
                raise
        found = self.store.get(CONTROLLERREVISION, meta["namespace"], meta["name"])
        if found is not None and history.equal_revision(found.obj, revision):
            return found.copy()
        return None

    def set_revision(self, revision: dict[str, Any], number: int) -> dict[str, Any]:
        """UpdateControllerRevision: the revision number of a template that comes back."""
        meta = revision["metadata"]

        def mutate(obj: dict[str, Any]) -> bool:
            if obj.get("revision") == number:
                return False
            obj["revision"] = number
            return True

        entry = self.store.update(CONTROLLERREVISION, meta["namespace"], meta["name"], mutate)
        return revision if entry is None else entry.copy()

    def delete(self, revision: dict[str, Any]) -> None:
        meta = revision["metadata"]
        try:
            deletion.delete(
                self.store, CONTROLLERREVISION, meta["namespace"], meta["name"], {}, self.now_str()
            )
        except ApiError as e:
            if e.code != 404:
                raise

    def truncate(self, revisions: list[dict[str, Any]], live: set[str], limit: int) -> None:
        """truncateHistory: delete the oldest revisions that neither the owner's status nor any
        pod uses, until `limit` such are left."""
        old = [r for r in revisions if r["metadata"]["name"] not in live]
        for revision in old[: max(len(old) - limit, 0)]:
            self.delete(revision)
