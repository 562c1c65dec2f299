"""The recommender's keys and helpers shared by its model (array_model.py, ArrayModel) and its
readers: the workload a container's history belongs to (WorkloadKey), the order workloads are
walked in, the idle time after which a workload container's history is dropped (VPA's memory
aggregation window, 8 days), and the rounding of an estimate.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter
from typing import ClassVar

from app.core.recommend.capping import (
    ContainerPolicy,
)
from app.core.recommend.estimator import Estimate
from app.core.recommend.rounding import integer_cpu, rounded
from app.core.recommend.settings import RecommenderSettings

# The API group of the kinds rightsizer knows by name (a WorkloadKey's kind is written bare).
WELL_KNOWN_GROUPS = {
    "Deployment": "apps",
    "ReplicaSet": "apps",
    "StatefulSet": "apps",
    "DaemonSet": "apps",
    "Job": "batch",
    "CronJob": "batch",
}


@dataclass(frozen=True, order=True)
class WorkloadKey:
    """A workload: one of the well-known kinds by its bare name (`Deployment`), any other
    controller with a /scale subresource as its GroupKind, `Kind.group` (`Rollout.argoproj.io`,
    as apimachinery's GroupKind.String() writes it; a core-group kind stays bare)."""

    namespace: str
    kind: str
    name: str
    _hash: ClassVar[int]  # per instance, set once (not a field: not compared, not shown)

    def __post_init__(self) -> None:
        # The hash the dataclass would compute on every call, computed once: a key is hashed
        # several times for each of a run's samples (the model's and the job's dicts).
        object.__setattr__(self, "_hash", hash((self.namespace, self.kind, self.name)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[WorkloadKey], tuple[str, str, str]]:
        # rebuilt from its fields, so a copy in another process hashes as that process does
        return (WorkloadKey, (self.namespace, self.kind, self.name))

    def __str__(self) -> str:
        return f"{self.namespace}/{self.kind}/{self.name}"

    @property
    def group(self) -> str:
        """The kind's API group (`apps`, `argoproj.io`, "" for core)."""
        if "." in self.kind:
            return self.kind.split(".", 1)[1]
        return WELL_KNOWN_GROUPS.get(self.kind, "")

    @property
    def resource_kind(self) -> str:
        """The kind alone (`Rollout` of `Rollout.argoproj.io`)."""
        return self.kind.split(".", 1)[0]


_FIELDS = attrgetter("namespace", "kind", "name")


def sorted_keys(keys: Iterable[WorkloadKey]) -> list[WorkloadKey]:
    """sorted(keys): the order of WorkloadKey's own comparisons (its fields' tuple), with the
    tuples compared in C (sorting a run's 15,000 keys called the dataclass's `__lt__`, Python,
    about 200,000 times)."""
    return sorted(keys, key=_FIELDS)


def kind_key(group: str, kind: str) -> str:
    """What a WorkloadKey's kind is for a controller of `kind` in API group `group`: the
    well-known kinds go by their name whatever the group, as VPA's controller fetcher knows them."""
    if not group or kind in WELL_KNOWN_GROUPS:
        return kind
    return f"{kind}.{group}"


IDLE_AFTER_SECONDS = 8 * 86400.0


def _rounded(est: Estimate, policy: ContainerPolicy, s: RecommenderSettings) -> Estimate:
    est = rounded(est, int(s.round_cpu_millicores), int(s.round_memory_bytes))
    return integer_cpu(est) if policy.integer_cpu else est
