"""The recommender's state per node group: one ArrayModel per (node label, value), no I/O.

A grouped DaemonSet's samples (app.core.node_groups) go into the DaemonSet-wide model as any
workload's do, and also into the model of the pod's node group, keyed by the grouping label and
its value: a policy that changes its `nodeGroupLabel` starts its groups afresh (`keep_label`)
instead of mixing values of two labels. Each group's model is a plain ArrayModel (the same
histograms, memory windows per pod, OOM bumps, expiry and strategies), so a group's
recommendation is exactly what the DaemonSet would get if only that group's pods existed.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterator

from app.core.recommend.array_model import ArrayModel
from app.core.recommend.checkpoint import AggregateCheckpoint
from app.core.recommend.strategies import VPA, Strategy
from app.core.recommendation import ContainerPolicy, Recommendation
from app.core.workload_key import WorkloadKey

GroupKey = tuple[str, str]  # (node label, its value or NO_GROUP)


class NodeGroupModels:
    """`models[(label, group)]`: the usage of the grouped DaemonSets' pods in that group."""

    def __init__(self, new_model: Callable[[], ArrayModel]) -> None:
        self.new_model = new_model
        self.models: dict[GroupKey, ArrayModel] = {}

    def model(self, key: GroupKey) -> ArrayModel:
        found = self.models.get(key)
        if found is None:
            found = self.models[key] = self.new_model()
        return found

    # Feeding -----------------------------------------------------------------------------------
    def add_usage(
        self,
        key: GroupKey,
        w: WorkloadKey,
        pod: str,
        container: str,
        t: float,
        cores: float | None,
        request_cores: float,
        bytes_: float | None,
    ) -> None:
        """One PodMetrics container's CPU then memory (either may be absent)."""
        self.model(key).add_usages([(w, pod, container, t, cores, request_cores, bytes_)])

    def record_oom(
        self, key: GroupKey, w: WorkloadKey, pod: str, container: str, t: float, bytes_: float
    ) -> bool:
        return self.model(key).record_oom(w, pod, container, t, bytes_)

    def restore(
        self, key: GroupKey, w: WorkloadKey, container: str, cp: AggregateCheckpoint
    ) -> None:
        """Raises ValueError for a checkpoint ArrayModel.restore refuses (nothing kept of it)."""
        model = self.model(key)
        try:
            model.restore(w, container, cp)
        finally:
            self._prune()

    # Reading -----------------------------------------------------------------------------------
    def groups(self, w: WorkloadKey) -> list[GroupKey]:
        """The groups holding usage of `w`, sorted."""
        return sorted(k for k, m in self.models.items() if w in m.rows)

    def workloads(self) -> set[WorkloadKey]:
        return {w for m in self.models.values() for w in m.rows}

    def checkpoints(self, w: WorkloadKey) -> Iterator[tuple[GroupKey, str, AggregateCheckpoint]]:
        """(group, container, its checkpoint) of `w`, by group then container."""
        for key in self.groups(w):
            model = self.models[key]
            for container in sorted(model.rows[w]):
                yield key, container, model.save(w, container)

    def recommend(
        self,
        w: WorkloadKey,
        policies: list[ContainerPolicy] | None = None,
        strategy: Strategy = VPA,
    ) -> dict[GroupKey, dict[str, Recommendation]]:
        """Per group, its recommendation per container (ArrayModel.recommend over its pods)."""
        return {key: self.models[key].recommend(w, policies, strategy) for key in self.groups(w)}

    # Forgetting --------------------------------------------------------------------------------
    def keep_label(self, w: WorkloadKey, label: str | None) -> int:
        """Drops the groups of `w` made with another label than `label` (all of them for None:
        its policy no longer groups it); the number of groups dropped."""
        dropped = 0
        for key in [k for k in self.groups(w) if k[0] != label]:
            self._drop(key, w)
            dropped += 1
        return dropped

    def drop(self, w: WorkloadKey) -> None:
        """Forgets every group of `w` (the workload is gone)."""
        for key in self.groups(w):
            self._drop(key, w)

    def expire_idle(self, now: float) -> int:
        """ArrayModel.expire_idle in every group; groups left empty go. The number dropped."""
        dropped = sum(m.expire_idle(now) for m in self.models.values())
        self._prune()
        return dropped

    def forget_deleted_pods(self, live: Container[tuple[str, str]]) -> None:
        """Memory windows of pods (namespace, name) that are gone; history stays."""
        for m in self.models.values():
            m.forget_pods(live)

    def _drop(self, key: GroupKey, w: WorkloadKey) -> None:
        self.models[key].drop_workload(w)
        self._prune()

    def _prune(self) -> None:
        for key in [k for k, m in self.models.items() if not m.rows]:
            del self.models[key]
