"""A controller's status write: the `/status` update a controller sends after it reconciles,
sent only when the status changed (client-go controllers compare before UpdateStatus, e.g.
`pkg/controller/replicaset` updateReplicaSetStatus, `pkg/controller/statefulset`
updateStatefulSetStatus, `pkg/controller/daemon` storeDaemonSetStatus), and, given the UID the
controller read, never onto a newer object of the same name."""

from __future__ import annotations

from typing import Any

from app.simulator.apiserver.resources import ResourceType
from app.simulator.apiserver.store import Store


def write_status(
    store: Store,
    rt: ResourceType,
    ns: str,
    name: str,
    status: dict[str, Any],
    *,
    uid: str | None = None,
) -> None:
    def mutate(obj: dict[str, Any]) -> bool:
        if uid is not None and obj["metadata"]["uid"] != uid:
            return False
        if obj.get("status") == status:
            return False
        obj["status"] = status
        return True

    store.update(rt, ns, name, mutate)
