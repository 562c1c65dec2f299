"""Which workloads the recommender learns (RIGHTSIZER_TRACK): every one outside the excluded
namespaces (`all`, the default), or only

- `policies`: those a policy covers (one naming it, a selector or namespace policy, a cluster
  default), VPA's `--memory-saver` ("only track pods which have an associated VPA"), and/or
- `labelled`: those of namespaces labelled RIGHTSIZER_TRACK_LABEL=true, Goldilocks' habit
  (`goldilocks.fairwinds.com/enabled`, read as Goldilocks reads it, FairwindsOps/goldilocks
  pkg/vpa/vpa.go namespaceIsManaged: the key compared in lower case, the value as Go's
  strconv.ParseBool reads it: 1, t, T, TRUE, true, True; anything else is not enabled).

With both, a workload either covers is learned. Untracked workloads get no samples, no OOM kills
and no Prometheus history; what the model held of them is dropped, and their stored
recommendations are deleted after the garbage-collection grace, as a vanished workload's.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from app.core.policy import Policy, PolicyIndex
from app.core.recommend.array_model import ArrayModel
from app.core.workload_key import WorkloadKey
from app.kube.namespaces import NamespacesUnknown, namespace_labels

log = logging.getLogger(__name__)
TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})  # strconv.ParseBool's true


def namespace_enabled(labels: Mapping[str, str], key: str) -> bool:
    """Goldilocks' namespaceIsManaged for the label `key` (without its include/exclude lists)."""
    return any(k.lower() == key.lower() and v in TRUE for k, v in labels.items())


class Tracker:
    def __init__(self, modes: frozenset[str], label: str, api: Any) -> None:
        self.modes, self.label, self.api = modes, label, api
        self.policies = PolicyIndex(())
        self.enabled: set[str] | None = None  # labelled namespaces; None: cannot tell (keep all)
        self._failing = False

    @property
    def everything(self) -> bool:
        return "all" in self.modes

    def refresh(self, policies: Iterable[Policy]) -> None:
        """At the start of a run: the policies and the labelled namespaces of now."""
        self.policies = policies if isinstance(policies, PolicyIndex) else PolicyIndex(policies)
        if "labelled" in self.modes and self.api is not None:
            self.enabled = self._labelled()

    def _labelled(self) -> set[str] | None:
        try:
            namespaces = namespace_labels(self.api)
        except NamespacesUnknown as e:
            if not self._failing:
                log.warning("cannot list namespaces (%s): tracking what was tracked before", e)
            self._failing = True
            return self.enabled
        self._failing = False
        return {
            name for name, labels in namespaces.items() if namespace_enabled(labels, self.label)
        }

    def tracks(self, w: WorkloadKey, labels: Mapping[str, str] | None) -> bool:
        if self.everything:
            return True
        if "labelled" in self.modes and (self.enabled is None or w.namespace in self.enabled):
            return True
        return "policies" in self.modes and self.policies.governing(w, labels) is not None

    def forget_untracked(
        self, model: ArrayModel, labels: Mapping[WorkloadKey, Mapping[str, str]]
    ) -> int:
        """Drops from the model every workload no longer tracked; how many."""
        if self.everything:
            return 0
        gone = [w for w in model.rows if not self.tracks(w, labels.get(w))]
        for w in gone:
            model.drop_workload(w)
        return len(gone)
