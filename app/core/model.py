"""The recommender's in-memory state: aggregates per workload container, windows per pod container.

The recommender job and `rightsizer recommend --from-csv` both feed samples through this class, so
a trace replay gives exactly the numbers the running service would.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from app.core.aggregate import AggregateState, PodContainerState
from app.core.capping import ContainerPolicy, Recommendation, apply_policy, policy_for_container
from app.core.estimator import estimate
from app.core.settings import RecommenderSettings


@dataclass(frozen=True, order=True)
class WorkloadKey:
    namespace: str
    kind: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.kind}/{self.name}"


class UsageModel:
    def __init__(self, settings: RecommenderSettings | None = None) -> None:
        self.settings = settings or RecommenderSettings()
        self.aggregates: dict[WorkloadKey, dict[str, AggregateState]] = {}
        self.pods: dict[tuple[WorkloadKey, str, str], PodContainerState] = {}

    def aggregate(self, workload: WorkloadKey, container: str) -> AggregateState:
        containers = self.aggregates.setdefault(workload, {})
        if container not in containers:
            containers[container] = AggregateState.empty(self.settings)
        return containers[container]

    def restore(self, workload: WorkloadKey, container: str, agg: AggregateState) -> None:
        """Puts back an aggregate loaded from a checkpoint (before any pod of it is seen)."""
        self.aggregates.setdefault(workload, {})[container] = agg

    def pod_container(self, workload: WorkloadKey, pod: str, container: str) -> PodContainerState:
        key = (workload, pod, container)
        state = self.pods.get(key)
        if state is None:
            state = PodContainerState(self.aggregate(workload, container), self.settings)
            self.pods[key] = state
        return state

    def add_cpu(
        self, w: WorkloadKey, pod: str, container: str, t: float, cores: float, request_cores: float
    ) -> bool:
        return self.pod_container(w, pod, container).add_cpu_sample(t, cores, request_cores)

    def add_memory(self, w: WorkloadKey, pod: str, container: str, t: float, bytes_: float) -> bool:
        return self.pod_container(w, pod, container).add_memory_sample(t, bytes_)

    def record_oom(self, w: WorkloadKey, pod: str, container: str, t: float, bytes_: float) -> bool:
        return self.pod_container(w, pod, container).record_oom(t, bytes_)

    def workloads(self) -> Iterator[WorkloadKey]:
        return iter(sorted(self.aggregates))

    def recommend(
        self, workload: WorkloadKey, policies: list[ContainerPolicy] | None = None
    ) -> dict[str, Recommendation]:
        """Recommendations per container, sorted; containers a policy turns off are absent."""
        containers = self.aggregates.get(workload, {})
        out: dict[str, Recommendation] = {}
        for name in sorted(containers):
            agg = containers[name]
            if agg.is_empty():
                continue
            rec = apply_policy(
                estimate(agg, len(containers), self.settings),
                policy_for_container(policies or [], name),
            )
            if rec is not None:
                out[name] = rec
        return out

    def forget_pods(self, workload: WorkloadKey, live_pods: set[str]) -> int:
        """Drops the windows of pods that no longer exist; their history stays in the aggregate."""
        gone = [k for k in self.pods if k[0] == workload and k[1] not in live_pods]
        for k in gone:
            del self.pods[k]
        return len(gone)
