"""Which clusters of a fleet a policy targets: by name (or id), or by a label selector over the
clusters' labels (RIGHTSIZER_CLUSTER_LABELS); an empty selector selects every cluster, as an
empty LabelSelector selects everything in Kubernetes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.core.selectors import LabelSelector


@dataclass(frozen=True)
class ClusterTarget:
    names: frozenset[str] | None = None  # names or ids
    selector: LabelSelector | None = None

    def matches(self, name: str, uid: str | None, labels: Mapping[str, str]) -> bool:
        if self.names is not None:
            return name in self.names or (uid is not None and uid in self.names)
        return self.selector is not None and self.selector.matches(labels)
