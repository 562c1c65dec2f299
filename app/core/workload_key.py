"""A workload, the key everything about one is filed under: the recommender's model, the store's
rows, the webhook's and the updater's caches, the API's paths. Shared by every part, so it lives
at the top of app/core rather than in the recommender."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter
from typing import ClassVar

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
