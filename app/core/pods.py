"""A pod's JSON (as the API server or an informer serves it) read once into a frozen view, no I/O.

One reading for every part that looks at running pods: the updater (which containers are sized,
their requests and limits, which pods are live, running, ready, how a resize is going), the
recommender (CPU samples are weighted by the request; OOM kills come from the container statuses)
and the history loader. `PodView.parse` runs at the kube boundary: app.kube.cluster's pod cache
holds views, app.kube.actions returns the pod it reads as one; nothing above reads pod JSON.

Quantities are read with `app.core.quantity.amount_or_none` (kube-apiserver's grammar): a
malformed one reads as unset, and a field of the wrong type as absent (app.core.wire; the API
server sends neither, a hand-made object might). The view keeps the pod's `metadata` and `spec`
as they came (`wire`): the webhook's patch builder (app.core.sizing.patch) writes JSON Pointers
into that structure, owner resolution (app.core.owners) reads its ownerReferences, and the fit
check its scheduling constraints (app.core.sizing.fit.Placement).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from app.core.quantity import amount_or_none
from app.core.wire import entries, section, text

Obj = dict[str, Any]
CONTAINER, SIDECAR, INIT = "container", "sidecar", "init"  # PodContainer.kind


@dataclass(frozen=True, slots=True)
class ContainerResources:
    """Millicores and bytes; None where the pod does not set it."""

    cpu_request: int | None = None
    memory_request: int | None = None
    cpu_limit: int | None = None
    memory_limit: int | None = None

    def requests(self) -> dict[str, int]:
        """The requests that are set, by resource name."""
        pairs = (("cpu", self.cpu_request), ("memory", self.memory_request))
        return {k: v for k, v in pairs if v is not None}

    def limits(self) -> dict[str, int]:
        """The limits that are set, by resource name."""
        pairs = (("cpu", self.cpu_limit), ("memory", self.memory_limit))
        return {k: v for k, v in pairs if v is not None}


@dataclass(frozen=True, slots=True)
class PodContainer:
    """One entry of spec.containers or spec.initContainers."""

    name: str
    kind: str  # CONTAINER; SIDECAR: an init container with restartPolicy Always; INIT: the others
    resources: ContainerResources
    memory_resize_policy: str | None = None  # resizePolicy's restartPolicy for memory, if set
    restarts_on_resize: tuple[str, ...] = ()  # resources whose resizePolicy is RestartContainer

    @property
    def keeps_running(self) -> bool:
        """A container or a native sidecar: sized and resized. A plain init container runs to
        completion and is never resized, yet it counts for the QoS class and for LimitRanger."""
        return self.kind != INIT


@dataclass(frozen=True, slots=True)
class Condition:
    """A pod condition whose status is "True" (the only ones rightsizer reads)."""

    type: str
    reason: str | None = None
    message: str = ""
    since: float | None = None  # lastTransitionTime, unix seconds


@dataclass(frozen=True, slots=True)
class Termination:
    """A container's lastState.terminated: how its previous run ended."""

    reason: str | None
    started: float | None  # unix seconds
    finished: float | None


@dataclass(frozen=True, slots=True)
class ContainerStatus:
    """One entry of status.containerStatuses (init: status.initContainerStatuses)."""

    name: str
    init: bool
    restart_count: int
    last_termination: Termination | None = None


@dataclass(frozen=True, slots=True)
class PodView:
    namespace: str
    name: str
    uid: str
    resource_version: str
    node_name: str | None
    phase: str | None
    deleting: bool  # metadata.deletionTimestamp is set
    start_time: float | None  # status.startTime, unix seconds
    containers: tuple[PodContainer, ...]  # spec.containers, then spec.initContainers
    pod_resources: ContainerResources | None  # pod-level spec.resources; None when unset
    conditions: tuple[Condition, ...]
    statuses: tuple[ContainerStatus, ...]
    wire: Mapping[str, Any]  # {"metadata": ..., "spec": ...} as the API server sent them
    # some container has restarted (a restartCount above 0): only such a pod can show an OOM
    # kill, so the recommender passes the others over without reading their statuses
    restarted: bool = False
    # a true Ready condition (of `conditions`), found once: is_ready is read for every pod of
    # every updater run (its disruption budgets), and the search took 3 us a pod
    ready_condition: bool = False
    # resources(), built once with the view: the informer parses a pod once per event, and the
    # recommender read each pod's resources every run (15,000 dicts per run at 15,000 pods)
    _app_resources: dict[str, ContainerResources] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        by_name = {c.name: c.resources for c in self.containers if c.keeps_running}
        object.__setattr__(self, "_app_resources", by_name)

    @classmethod
    def parse(cls, pod: Mapping[str, Any]) -> PodView:
        meta, spec, status = section(pod, "metadata"), section(pod, "spec"), section(pod, "status")
        pod_level = spec.get("resources")
        conditions = tuple(
            Condition(
                text(c.get("type")),
                text(c.get("reason")) or None,
                text(c.get("message")),
                parse_time(c.get("lastTransitionTime")),
            )
            for c in entries(status, "conditions")
            if c.get("status") == "True"
        )
        statuses = (
            *(_status(s, False) for s in entries(status, "containerStatuses")),
            *(_status(s, True) for s in entries(status, "initContainerStatuses")),
        )
        return cls(
            namespace=text(meta.get("namespace")),
            name=text(meta.get("name")),
            uid=text(meta.get("uid")),
            resource_version=text(meta.get("resourceVersion")),
            node_name=text(spec.get("nodeName")) or None,
            phase=text(status.get("phase")) or None,
            deleting=bool(meta.get("deletionTimestamp")),
            start_time=parse_time(status.get("startTime")),
            containers=(
                *(_container(c, CONTAINER) for c in entries(spec, "containers")),
                *(
                    _container(c, SIDECAR if is_sidecar(c) else INIT)
                    for c in entries(spec, "initContainers")
                ),
            ),
            pod_resources=resources_of(pod_level) if pod_level else None,
            conditions=conditions,
            statuses=statuses,
            wire={"metadata": meta, "spec": spec},
            restarted=any(s.restart_count > 0 for s in statuses),
            ready_condition=any(c.type == "Ready" for c in conditions),
        )

    @property
    def labels(self) -> Mapping[str, str]:
        """metadata.labels as sent (what selector policies match, app.core.policy)."""
        # plain dicts as parsed go without the ABC checks (read for every pod of every run)
        meta = self.wire.get("metadata")
        labels = (meta if type(meta) is dict else section(self.wire, "metadata")).get("labels")
        if type(labels) is dict:
            return labels
        return labels if isinstance(labels, Mapping) else {}

    @property
    def ref(self) -> str:
        """namespace/name, for logs and the audit trail."""
        return f"{self.namespace}/{self.name}"

    @property
    def spec(self) -> Mapping[str, Any]:
        """spec as sent: what is read as Kubernetes' own structures (scheduling constraints)."""
        spec: Mapping[str, Any] = self.wire["spec"]
        return spec

    def app_containers(self) -> list[PodContainer]:
        """Regular containers and native sidecars: the ones that keep running."""
        return [c for c in self.containers if c.keeps_running]

    def plain_init_containers(self) -> list[PodContainer]:
        """Init containers that run to completion (not sidecars)."""
        return [c for c in self.containers if not c.keeps_running]

    def resources(self) -> dict[str, ContainerResources]:
        """Requests and limits of the app containers (`app_containers`), by container name.
        Built once with the view (which is immutable) and shared: read it, never change it."""
        return self._app_resources

    def condition(self, type_: str) -> Condition | None:
        """The pod's condition of this type when its status is "True", else None."""
        return next((c for c in self.conditions if c.type == type_), None)

    @property
    def is_running(self) -> bool:
        """Phase Running and not being deleted."""
        return self.phase == "Running" and not self.deleting

    @property
    def is_live(self) -> bool:
        """Scheduled, not terminal, not being deleted: the pods VPA's updater lists
        (spec.nodeName!=, status.phase!=Succeeded,Failed). Only these are counted or touched."""
        return (
            bool(self.node_name) and self.phase not in ("Succeeded", "Failed") and not self.deleting
        )

    @property
    def restarts_on_resize(self) -> bool:
        """A container restarts when resized (a resizePolicy of RestartContainer): VPA's
        IsNonDisruptiveResize is false for it."""
        return any(c.restarts_on_resize for c in self.app_containers())

    @property
    def is_ready(self) -> bool:
        """Running with a true Ready condition: available, as PodDisruptionBudgets count it."""
        return self.ready_condition and self.is_running


def parse_time(text: Any) -> float | None:
    """An RFC 3339 timestamp as unix seconds; None when absent or malformed."""
    if not text or not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def is_sidecar(init_container: Any) -> bool:
    """An init container with restartPolicy Always: a native sidecar, which keeps running."""
    return isinstance(init_container, Mapping) and init_container.get("restartPolicy") == "Always"


def resources_of(resources: Any) -> ContainerResources:
    """One `resources` block (a container's or the pod-level spec.resources)."""
    res = resources if isinstance(resources, Mapping) else {}
    req, lim = section(res, "requests"), section(res, "limits")
    return ContainerResources(
        amount_or_none("cpu", req.get("cpu")),
        amount_or_none("memory", req.get("memory")),
        amount_or_none("cpu", lim.get("cpu")),
        amount_or_none("memory", lim.get("memory")),
    )


def _container(c: Mapping[str, Any], kind: str) -> PodContainer:
    restarts = tuple(
        text(p.get("resourceName"))
        for p in entries(c, "resizePolicy")
        if p.get("restartPolicy") == "RestartContainer"
    )
    return PodContainer(
        text(c.get("name")), kind, resources_of(c.get("resources")), _memory_policy(c), restarts
    )


def _memory_policy(container: Mapping[str, Any]) -> str | None:
    """The container's memory resizePolicy restartPolicy, None when unset."""
    for p in entries(container, "resizePolicy"):
        if p.get("resourceName") == "memory":
            value = p.get("restartPolicy")
            return str(value) if value is not None else None
    return None


def _status(s: Mapping[str, Any], init: bool) -> ContainerStatus:
    try:
        restarts = int(s.get("restartCount") or 0)
    except (TypeError, ValueError):
        restarts = 0
    term = section(section(s, "lastState"), "terminated")
    last = None
    if term:
        last = Termination(
            text(term.get("reason")) or None,
            parse_time(term.get("startedAt")),
            parse_time(term.get("finishedAt")),
        )
    return ContainerStatus(text(s.get("name")), init, restarts, last)
