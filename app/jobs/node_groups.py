"""The recommender job's per node group side: DaemonSets sized per node group.

At the start of a run `begin` takes the nodes' labels and the way to find a workload's policy; the
job then asks `group_of` for each pod it feeds and gives a grouped pod's samples and OOM kills to
`groups` too (the DaemonSet-wide model takes them as always). `results` makes the run's rows: per
grouped DaemonSet whose policy still groups it by the same label, each group's recommendation
(with the policy's container policies and strategy) and histograms, and how many of its pods the
run saw with what requests. When no policy names a `nodeGroupLabel`, nothing here costs more than
one check per pod.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

from app.core.node_groups import GROUPED_KINDS, grouping_label, node_group
from app.core.nodes import NodeView
from app.core.pods import ContainerResources, PodView
from app.core.policy import Policy
from app.core.recommend.array_model import ArrayModel
from app.core.recommend.node_groups import GroupKey, NodeGroupModels
from app.core.recommend.samples import Usage
from app.core.recommend.settings import RecommenderSettings
from app.core.recommend.strategies import VPA, Strategy, chosen
from app.core.recommend.timeline import Sample
from app.core.savings import PodsSeen
from app.core.workload_key import WorkloadKey
from app.store.node_groups import NodeGroupResult

PolicyOf = Callable[[WorkloadKey], Policy | None]  # the governing policy, this run


class NodeGroupRecorder:
    def __init__(self, settings: RecommenderSettings, idle_after: float) -> None:
        self.settings, self.idle_after = settings, idle_after
        self.groups = NodeGroupModels(self._new_model)
        self._node_labels: dict[str, dict[str, str]] = {}
        self._policy_of: PolicyOf = lambda w: None
        self._labels: dict[WorkloadKey, str | None] = {}  # this run's grouping label per DaemonSet
        self._seen: dict[tuple[WorkloadKey, GroupKey], PodsSeen] = {}
        self._active = False

    def begin(
        self,
        policies: Iterable[Policy],
        nodes: Callable[[], Iterable[NodeView]],
        policy_of: PolicyOf,
    ) -> None:
        """A new run: whether any policy groups, and then the nodes' labels."""
        self._active = any(p.node_group_label for p in policies)
        self._node_labels = {n.name: dict(n.labels) for n in nodes()} if self._active else {}
        self._policy_of, self._labels, self._seen = policy_of, {}, {}
        for m in self.groups.models.values():  # a policy's vpa parameters, as for the DaemonSet
            m.strategy_of = self._strategy_of
            for w in list(m.rows):
                m.tune(w, self._strategy_of(w))

    def _strategy_of(self, w: WorkloadKey) -> Strategy:
        policy = self._policy_of(w)
        return chosen(policy.recommender) if policy else VPA

    def _new_model(self) -> ArrayModel:
        """A group's model: each workload's history taken as its policy's strategy says, as the
        DaemonSet-wide model takes it (ArrayModel.tune)."""
        m = ArrayModel(self.settings, self.idle_after)
        m.strategy_of = self._strategy_of
        return m

    @property
    def active(self) -> bool:
        """Some policy groups DaemonSets this run."""
        return self._active

    def label_of(self, w: WorkloadKey) -> str | None:
        """The node label that groups `w` this run (None: not grouped)."""
        if not self._active or w.kind not in GROUPED_KINDS:
            return None
        if w not in self._labels:
            self._labels[w] = grouping_label(self._policy_of(w), w)
        return self._labels[w]

    def group_of(self, w: WorkloadKey, pod: PodView) -> GroupKey | None:
        """The group a pod of `w` feeds: None when `w` is not grouped or the pod's node is not
        known (not bound yet, or not in the nodes' cache)."""
        label = self.label_of(w)
        if label is None or not pod.node_name:
            return None
        labels = self._node_labels.get(pod.node_name)
        return None if labels is None else (label, node_group(labels, label))

    def saw_pod(
        self, key: GroupKey, w: WorkloadKey, name: str, resources: Mapping[str, ContainerResources]
    ) -> None:
        self._seen.setdefault((w, key), PodsSeen()).add(name, resources)

    def add(self, key: GroupKey, w: WorkloadKey, u: Usage, request_cores: float) -> None:
        """A metrics sample of a grouped pod, into its group's model."""
        self.groups.add_usage(
            key, w, u.pod, u.container, u.time, u.cpu_cores, request_cores, u.memory_bytes
        )

    def add_sample(self, s: Sample, pod: PodView | None) -> None:
        """A history sample (app.jobs.history) of a live pod, into its group if it has one."""
        key = self.group_of(s.workload, pod) if pod is not None else None
        if key is None:
            return
        self.groups.add_usage(
            key,
            s.workload,
            s.pod,
            s.container,
            s.time,
            s.cpu_cores,
            s.request_cores,
            s.memory_bytes,
        )

    def results(self) -> Iterator[NodeGroupResult]:
        """This run's rows; the groups of DaemonSets their policy no longer groups (or groups by
        another label) are dropped first."""
        for w in sorted(self.groups.workloads()):
            policy = self._policy_of(w)
            if policy is None:
                continue  # none found this run: kept unfed (it expires when idle), not written
            label = self.label_of(w)
            self.groups.keep_label(w, label)
            if label is None:
                continue
            cps = list(policy.container_policies) if policy else []
            recs = self.groups.recommend(w, cps, chosen(policy.recommender) if policy else VPA)
            for key, container, checkpoint in self.groups.checkpoints(w):
                seen = self._seen.get((w, key))
                typical = seen.requests(container) if seen else None
                yield NodeGroupResult(
                    w,
                    container,
                    key[0],
                    key[1],
                    recs.get(key, {}).get(container),
                    checkpoint,
                    typical.pods if typical else None,
                    typical.typical_cpu if typical else None,
                    typical.typical_memory if typical else None,
                )
