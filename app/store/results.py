"""What the recommender computed for one workload container, ready to be saved."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from app.core.recommend.aggregate import AggregateState
from app.core.recommend.array_model import ArrayModel
from app.core.recommend.checkpoint import AggregateCheckpoint
from app.core.recommend.timeline import UsagePercentiles, UsageWindow
from app.core.recommendation import ContainerPolicy, Recommendation
from app.core.savings import PodRequests
from app.core.workload_key import WorkloadKey


@dataclass(frozen=True)
class CurrentRequests:
    cpu: int | None = None  # millicores: a pod's (the most common when pods differ)
    memory: int | None = None  # bytes
    replicas: int | None = None  # live pods running the container seen in the run
    cpu_total: int | None = None  # the sum over those pods (app.core.savings.pod_requests)
    memory_total: int | None = None

    @classmethod
    def of(cls, r: PodRequests) -> CurrentRequests:
        return cls(r.typical_cpu, r.typical_memory, r.pods, r.cpu, r.memory)


@dataclass(frozen=True)
class SampleSpan:
    """The history behind a recommendation: its CPU samples, the first and the last one's time."""

    total: int
    first: float | None
    last: float | None

    @classmethod
    def of(cls, agg: AggregateState | AggregateCheckpoint) -> SampleSpan:
        return cls(agg.total_samples, agg.first_sample, agg.last_sample)


@dataclass(frozen=True)
class ContainerResult:
    workload: WorkloadKey
    container: str
    recommendation: Recommendation | None  # None: no recommendation (e.g. turned off by policy)
    # None: the checkpoint is not rewritten this run (app.core.recommend.checkpoint: written
    # longest ago first); `samples` then says what the recommendation row needs of the history
    checkpoint: AggregateCheckpoint | None
    current: CurrentRequests | None = None  # None: no pod seen in this run; keep what is stored
    conflicts: dict[str, str] = field(default_factory=dict)
    # the samples since the last history point; its percentiles are read only for a point
    # written (`usage`: one container in sixty each run, as a point is due hourly)
    window: UsageWindow | None = None
    samples: SampleSpan | None = None  # None: the checkpoint's

    @property
    def usage(self) -> UsagePercentiles | None:
        """The usage percentiles of the samples since the last history point (None: none)."""
        return self.window.percentiles() if self.window is not None else None

    @property
    def span(self) -> SampleSpan:
        if self.samples is not None:
            return self.samples
        if self.checkpoint is None:
            raise ValueError(f"{self.workload} {self.container}: neither samples nor checkpoint")
        return SampleSpan.of(self.checkpoint)


def results_from_model(
    model: ArrayModel,
    policies_for: Callable[[WorkloadKey], list[ContainerPolicy]] | None = None,
) -> Iterator[ContainerResult]:
    """A result per row of the model: its recommendation (if any) and its checkpoint."""
    recommended = model.recommend_all(policies_of=policies_for)
    for w in model.workloads():
        for container in sorted(model.rows[w]):
            rec = recommended[w].get(container)
            yield ContainerResult(w, container, rec, model.save(w, container))
