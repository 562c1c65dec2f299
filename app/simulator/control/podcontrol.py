"""What the StatefulSet and DaemonSet controllers share: both own their pods directly (no
ReplicaSet between) and keep their template's history in ControllerRevisions, so both are built
from the store, the clock, a pod control and a revision history, as kubernetes/kubernetes builds
them (`NewStatefulSetController` and `NewDaemonSetsController`: a `controller.PodControlInterface`
and a `history.Interface` each)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from app.simulator.apiserver.store import Store
from app.simulator.control.revisions import Revisions

Obj = dict[str, Any]


class PodControl(Protocol):
    """How a controller creates (through admission) and deletes its pods, recording Events."""

    def create(self, owner: Obj, pod: Obj, controller: str) -> str | None: ...

    def delete(self, pod: Obj, owner: Obj) -> None: ...


class RevisionedPodController:
    def __init__(
        self,
        store: Store,
        now: Callable[[], float],
        now_str: Callable[[], str],
        pods: PodControl,
    ) -> None:
        self.store = store
        self.now = now
        self.pods = pods
        self.revisions = Revisions(store, now_str)
