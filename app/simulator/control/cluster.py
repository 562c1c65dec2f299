"""The simulated cluster: store, clock, kubelets, usage and the write paths clients trigger.

One SimCluster is one cluster. The HTTP server (server.py) only translates requests into calls
on it; tests and `rightsizer sim` drive its clock and nodes through the same object.
"""

from __future__ import annotations

import itertools
import logging
import random
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.simulator.apiserver import (
    admission,
    crd,
    kinds,
    limitranger,
    podutil,
    quantity,
    validation,
)
from app.simulator.apiserver.errors import ApiError, not_found
from app.simulator.apiserver.eventttl import EventExpiry
from app.simulator.apiserver.resources import (
    CRD,
    LIMITRANGE,
    NAMESPACE,
    NODE,
    POD,
    REPLICASET,
    RESOURCES,
    WEBHOOKS,
    Registry,
    ResourceType,
)
from app.simulator.apiserver.store import Entry, Store, WatchEvent
from app.simulator.apiserver.version import KubeVersion
from app.simulator.control.controllers import Controllers
from app.simulator.control.events import Source
from app.simulator.control.extenders import HTTPExtender
from app.simulator.control.kubelet_events import KubeletEvents
from app.simulator.control.objects import make_node, running_status
from app.simulator.control.recorder import NORMAL, WARNING, EventRecorder
from app.simulator.control.scheduler import NodeUsage, choose_node
from app.simulator.workload.clock import SimClock, rfc3339
from app.simulator.workload.usage import (
    ContainerLife,
    CpuProfile,
    Kill,
    MemoryProfile,
    UsageProfile,
    advance_life,
    container_key,
    on_node,
)

log = logging.getLogger(__name__)
# The scheduler records through the legacy core/v1 recorder (see recorder.py).
SCHEDULER = Source("default-scheduler")


@dataclass(slots=True)
class ContainerRuntime:
    name: str
    profile: UsageProfile
    key: int
    life: ContainerLife
    cpu_limit: float | None
    memory_limit: float | None


@dataclass(slots=True)
class PodRuntime:
    """What the simulated kubelet knows about a running pod: where, and each container's life."""

    uid: str
    namespace: str
    name: str
    node: str
    started: float
    host_ip: str
    pod_ip: str
    containers: list[ContainerRuntime]
    labels: dict[str, str] = field(default_factory=dict)
    # (restartCount, running) per container, as last written to the status
    shown: tuple[Any, ...] = ()

    def visible_state(self, now: float) -> tuple[Any, ...]:
        return tuple(
            (c.life.restart_count, c.life.start_for(now) is not None) for c in self.containers
        )


def default_profile(container: Mapping[str, Any]) -> UsageProfile:
    """Usage for a container no scenario describes: about half its requests, gently cycling."""
    req = (container.get("resources") or {}).get("requests") or {}
    cpu = quantity.cores(req["cpu"]) * 0.5 if "cpu" in req else 0.05
    mem = quantity.bytes_(req["memory"]) * 0.6 if "memory" in req else 64 << 20
    return UsageProfile(CpuProfile(cpu, daily=0.3, noise=0.1), MemoryProfile(mem, noise=0.02))


def _limits(container: Mapping[str, Any]) -> tuple[float | None, float | None]:
    lim = (container.get("resources") or {}).get("limits") or {}
    return (
        quantity.cores(lim["cpu"]) if "cpu" in lim else None,
        float(quantity.bytes_(lim["memory"])) if "memory" in lim else None,
    )


class SimCluster:
    def __init__(
        self,
        *,
        seed: int = 0,
        clock: SimClock | None = None,
        watch_window: int = 20_000,
        service_urls: Mapping[str, str] | None = None,
        kubelet_events: bool = True,
        version: KubeVersion | None = None,
    ) -> None:
        self.seed = seed
        self.version = version or KubeVersion.parse(None)  # whose schemas decode webhook patches
        self.clock = clock or SimClock()
        self.store = Store(watch_window)
        self.service_urls: dict[str, str] = dict(service_urls or {})
        self.extenders: list[HTTPExtender] = []  # the scheduler's (extenders.py)
        # (namespace, workload name) -> container name -> profile, from the scenario.
        self.profiles: dict[tuple[str, str], dict[str, UsageProfile]] = {}
        self.runtime: dict[str, PodRuntime] = {}
        self.runtime_lock = threading.Lock()
        self._rand = random.Random(seed)
        self._rand_lock = threading.Lock()
        self._ips = itertools.count(1)
        self.resources = Registry()  # the built-in kinds and those CRDs add
        for rt in RESOURCES:  # the garbage collector finds dependents of any kind
            if not rt.computed:
                self.store.add_index(rt, "owner", podutil.owner_uids)
        self.store.add_listener(self._definitions)
        self.store.add_index(POD, "phase", lambda o: [(o.get("status") or {}).get("phase", "")])
        self.store.add_index(POD, "node", lambda o: [o.get("spec", {}).get("nodeName") or ""])
        self.node_usage = NodeUsage(self.store)
        # Events: the components' recorders, kube-apiserver's --event-ttl, the kubelets' share.
        self.recorder = EventRecorder(self.store, self.clock.now)
        self.event_expiry = EventExpiry(self.store, self.clock.now)
        self.kubelet_events = KubeletEvents(self.recorder, enabled=kubelet_events)
        self.store.add_listener(self._forget_deleted_pods)
        self.store.add_listener(self._node_schedulability)
        self.controllers = Controllers(self)

    def _definitions(self, event: WatchEvent) -> None:
        """A CustomResourceDefinition written or deleted: the resources it serves follow at once
        (apiserver/crd.py); the objects of a resource no longer served are deleted."""
        if event.rt != CRD:
            return
        obj = event.entry.obj
        spec = obj.get("spec") or {}
        group, plural = spec.get("group", ""), (spec.get("names") or {}).get("plural", "")
        served = [] if event.type == "DELETED" else crd.served_types(obj)
        for rt in served:
            self.store.add_index(rt, "owner", podutil.owner_uids)
        schemas = {rt.version: crd.schema_of(obj, rt.version) for rt in served}
        for rt in self.resources.define(group, plural, served, schemas):
            self.controllers.enqueue("crd-gone", rt.group, rt.version, rt.plural)
        if event.type != "DELETED":
            self.controllers.enqueue("crd", obj["metadata"]["name"])

    # --- time -----------------------------------------------------------------------------

    def now(self) -> float:
        return self.clock.now()

    def now_str(self) -> str:
        return rfc3339(self.clock.now())

    def advance(self, seconds: float) -> None:
        """Move simulated time forward, let kubelets report OOM kills, and settle controllers."""
        self.clock.advance(seconds)
        self.tick()
        self.settle()

    def settle(self, timeout: float = 30.0) -> None:
        self.controllers.settle(timeout)

    def tick(self) -> None:
        """The kubelets' periodic work: run container lives to now and report what changed."""
        now = self.clock.now()
        with self.runtime_lock:
            pods = list(self.runtime.values())
        for prt in pods:
            restarts = []
            for c in prt.containers:
                c.life, kills = advance_life(c.profile.memory, c.key, c.memory_limit, c.life, now)
                restarts += [(c.name, k) for k in kills]
            shown = prt.visible_state(now)
            if shown != prt.shown:
                self._write_pod_status(prt, now)
                prt.shown = shown
            if restarts:
                self._report_restarts(prt, restarts, now)
        self.event_expiry.expire()
        self.controllers.retry_failed()

    def _report_restarts(
        self, prt: PodRuntime, restarts: list[tuple[str, Kill]], now: float
    ) -> None:
        """The kubelet's Events for OOM-killed containers (those still within the event TTL: older
        ones would have expired by now)."""
        entry = self.store.get(POD, prt.namespace, prt.name)
        if entry is None or entry.obj["metadata"]["uid"] != prt.uid:
            return
        pod = entry.obj
        specs = {c["name"]: c for c in pod["spec"]["containers"]}
        for name, kill in restarts:
            if kill.at >= now - self.event_expiry.ttl and name in specs:
                restart = kill.restart_at if kill.restart_at <= now else None
                self.kubelet_events.container_restarted(
                    pod, prt.node, specs[name], kill.at, restart
                )

    def _write_pod_status(self, prt: PodRuntime, now: float) -> None:
        lives = {c.name: c.life for c in prt.containers}

        def mutate(pod: dict[str, Any]) -> bool:
            if pod["metadata"]["uid"] != prt.uid:
                return False
            status = running_status(
                pod, lives, host_ip=prt.host_ip, pod_ip=prt.pod_ip, started=prt.started, now=now
            )
            # A pending in-place resize is the kubelet's to report too: keep it.
            status["conditions"] += [
                c
                for c in pod["status"].get("conditions") or []
                if c["type"].startswith("PodResize")
            ]
            if status == pod.get("status"):
                return False
            pod["status"] = status
            return True

        self.store.update(POD, prt.namespace, prt.name, mutate)

    # --- nodes ----------------------------------------------------------------------------

    def add_node(
        self,
        name: str,
        *,
        cpu: str = "8",
        memory: str = "32Gi",
        pods: int = 110,
        labels: Mapping[str, str] | None = None,
    ) -> Entry:
        node = make_node(
            name,
            cpu=cpu,
            memory=memory,
            pods=pods,
            labels=dict(labels or {}),
            created=self.now(),
            declared_features=self.version.declared_features(),
        )
        return self.store.create(NODE, node, self.now_str())

    def set_unschedulable(self, name: str, unschedulable: bool = True) -> None:
        """`kubectl cordon` / `uncordon`: the flag and the taint the node controller adds."""
        taint = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}

        def mutate(node: dict[str, Any]) -> None:
            spec = node.setdefault("spec", {})
            taints = [t for t in spec.get("taints") or [] if t.get("key") != taint["key"]]
            if unschedulable:
                spec["unschedulable"] = True
                taints.append({**taint, "timeAdded": self.now_str()})
            else:
                spec.pop("unschedulable", None)
            if taints:
                spec["taints"] = taints
            else:
                spec.pop("taints", None)

        if self.store.update(NODE, "", name, mutate) is None:
            raise not_found(NODE, name)

    def remove_node(self, name: str) -> None:
        self.store.delete(NODE, "", name)
        self.settle()

    # --- pods -----------------------------------------------------------------------------

    def generate_name(self, prefix: str) -> str:
        with self._rand_lock:
            return prefix + "".join(
                self._rand.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5)
            )

    def create_pod(
        self,
        namespace: str,
        pod: dict[str, Any],
        user: Mapping[str, Any] = admission.ADMIN_USER,
        *,
        dry_run: bool = False,
        admit: bool = True,
    ) -> Entry | dict[str, Any]:
        """The pod CREATE path in kube-apiserver's order: API defaults, LimitRanger's defaults,
        mutating webhooks, name generation, validation (422), LimitRanger's limits (403)."""
        ns = self.store.get(NAMESPACE, "", namespace)
        if ns is None:
            raise not_found(NAMESPACE, namespace)
        meta = pod.setdefault("metadata", {})
        meta["namespace"] = namespace
        kinds.default_pod(pod)
        podutil.default_resource_requests(pod)
        limit_ranges = [e.obj for _, e in self.store.scan(LIMITRANGE, namespace)[0]]
        if admit:
            limitranger.apply_defaults(pod, limit_ranges)
            configs = [e.obj for _, e in self.store.scan(WEBHOOKS)[0]]
            if configs:
                pod = admission.admit_pod(
                    configs,
                    pod,
                    namespace,
                    ns.obj["metadata"].get("labels") or {},
                    user,
                    self.service_urls,
                    minor=self.version.minor,
                )
        pod.setdefault("apiVersion", "v1")
        pod.setdefault("kind", "Pod")
        before_create(self, pod["metadata"])
        validation.validate_pod(pod)
        if admit:
            limitranger.validate(pod, limit_ranges)
        if not pod["spec"].get("nodeName"):
            pod["spec"].pop("nodeName", None)
        pod["status"] = {"phase": "Pending", "qosClass": podutil.qos_class(pod)}
        pod["metadata"]["generation"] = 1  # KEP-5067: kubelets report observedGeneration
        if dry_run:
            return pod
        for _ in range(5):
            try:
                return self.store.create(POD, pod, self.now_str())
            except ApiError as e:
                if e.code != 409 or not meta.get("generateName"):
                    raise
                meta["name"] = self.generate_name(meta["generateName"])
        raise ApiError(500, "failed to generate a unique pod name", "InternalError")

    def schedule_pending(self) -> None:
        """Bind pending pods to nodes (or record why they can't be) and start bound ones."""
        for entry in self.store.by_index(POD, "phase", "Pending"):
            pod = entry.obj
            node = pod["spec"].get("nodeName")
            scheduled = not node
            if not node:
                node, message = choose_node(self.store, self.node_usage, pod, self.extenders)
                if node is None:
                    self._mark_unschedulable(pod, message)
                    # pkg/scheduler/schedule_one.go handleSchedulingFailure: every failed attempt.
                    self.recorder.event(pod, WARNING, "FailedScheduling", message, SCHEDULER)
                    continue
            meta = pod["metadata"]
            bound = self.start_pod(meta["namespace"], meta["name"], node, self.now())
            if bound is None:
                continue
            if scheduled:  # schedule_one.go handleBindingCycle, once bound
                msg = f"Successfully assigned {meta['namespace']}/{meta['name']} to {node}"
                self.recorder.event(bound, NORMAL, "Scheduled", msg, SCHEDULER)
            self.kubelet_events.pod_started(bound, node, bound["spec"]["containers"], self.now())

    def _mark_unschedulable(self, pod: dict[str, Any], message: str) -> None:
        def mutate(p: dict[str, Any]) -> bool:
            conds = p["status"].get("conditions") or []
            if any(c.get("message") == message for c in conds):
                return False
            p["status"]["conditions"] = [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": message,
                    "lastProbeTime": None,
                    "lastTransitionTime": self.now_str(),
                }
            ]
            return True

        self.store.update(POD, pod["metadata"]["namespace"], pod["metadata"]["name"], mutate)

    def profile_for(self, pod: dict[str, Any], container: Mapping[str, Any]) -> UsageProfile:
        ns = pod["metadata"]["namespace"]
        workload = pod["metadata"]["name"]
        ref = podutil.controller_of(pod)
        if ref is not None:
            workload = ref["name"]
            if ref["kind"] == "ReplicaSet":
                rs = self.store.get(REPLICASET, ns, ref["name"])
                owner = podutil.controller_of(rs.obj) if rs else None
                if owner is not None:
                    workload = owner["name"]
        found = self.profiles.get((ns, workload), {}).get(container["name"])
        return found or default_profile(container)

    def start_pod(
        self, namespace: str, name: str, node: str, started: float
    ) -> dict[str, Any] | None:
        """Bind and start: what kube-scheduler and the node's kubelet do between them. Returns
        the bound pod, None if it could not be bound (gone, or bound meanwhile)."""
        entry = self.store.get(POD, namespace, name)
        if entry is None:
            return None
        pod = entry.obj
        n = next(self._ips)
        pod_ip = f"10.244.{(n >> 8) & 255}.{n & 255}"
        node_entry = self.store.get(NODE, "", node)
        host_ip = (
            next(
                (
                    a["address"]
                    for a in (node_entry.obj["status"].get("addresses") or [])
                    if a["type"] == "InternalIP"
                ),
                "",
            )
            if node_entry
            else ""
        )
        node_labels = (node_entry.obj["metadata"].get("labels") or {}) if node_entry else {}
        containers = []
        for c in pod["spec"]["containers"]:
            cpu_lim, mem_lim = _limits(c)
            containers.append(
                ContainerRuntime(
                    c["name"],
                    on_node(self.profile_for(pod, c), node_labels),
                    container_key(self.seed, namespace, name, c["name"]),
                    ContainerLife(started_at=started, checked_until=started),
                    cpu_lim,
                    mem_lim,
                )
            )
        prt = PodRuntime(
            pod["metadata"]["uid"],
            namespace,
            name,
            node,
            started,
            host_ip,
            pod_ip,
            containers,
            dict(pod["metadata"].get("labels") or {}),
        )
        lives = {c.name: c.life for c in containers}

        def mutate(p: dict[str, Any]) -> bool:
            if p["metadata"]["uid"] != prt.uid or (p.get("status") or {}).get("phase") != "Pending":
                return False
            p["spec"]["nodeName"] = node
            p["status"] = running_status(
                p, lives, host_ip=host_ip, pod_ip=pod_ip, started=started, now=started
            )
            return True

        bound = None
        with self.store.lock:
            after = self.store.update(POD, namespace, name, mutate)
            if (
                after is not None
                and after.obj["spec"].get("nodeName") == node
                and after.obj["metadata"]["uid"] == prt.uid
            ):
                prt.shown = prt.visible_state(started)
                with self.runtime_lock:
                    self.runtime.setdefault(prt.uid, prt)
                bound = after.obj
        return bound

    def _forget_deleted_pods(self, event: WatchEvent) -> None:
        if event.rt is POD and event.type == "DELETED":
            with self.runtime_lock:
                prt = self.runtime.pop(event.entry.obj["metadata"]["uid"], None)
            if prt is not None and self.store.get(NODE, "", prt.node) is not None:
                now = self.now()
                running = [c.name for c in prt.containers if c.life.start_for(now) is not None]
                self.kubelet_events.pod_killed(event.entry.obj, prt.node, running, now)

    def _node_schedulability(self, event: WatchEvent) -> None:
        """The node's kubelet reports spec.unschedulable changes (cordon, uncordon)."""
        if event.rt is not NODE or event.type == "DELETED":
            return
        was = bool(event.prev and event.prev.obj.get("spec", {}).get("unschedulable"))
        now = bool(event.entry.obj.get("spec", {}).get("unschedulable"))
        if was != now:
            name = event.entry.obj["metadata"]["name"]
            self.kubelet_events.node_schedulable(name, now, self.now())

    def pods_of_node(self, node: str) -> list[Entry]:
        return self.store.by_index(POD, "node", node)

    def close(self) -> None:
        self.controllers.stop()
        self.store.close()


# What a client may not set on create: the store fills uid, resourceVersion and
# creationTimestamp; BeforeCreate clears the deletion fields.
_SYSTEM_FIELDS = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)


def before_create(cluster: SimCluster, meta: dict[str, Any]) -> None:
    """The metadata of every CREATE, re-derived from kubernetes/kubernetes
    `staging/src/k8s.io/apiserver/pkg/registry/rest/create.go` (BeforeCreate: a name generated
    from generateName, no deletion timestamp or grace period) and `rest/meta.go`
    (FillObjectMetaSystemFields: the server's uid and creationTimestamp, never the client's;
    the store sets resourceVersion)."""
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = cluster.generate_name(meta["generateName"])
    for field_ in _SYSTEM_FIELDS:
        meta.pop(field_, None)


def generic_create(
    cluster: SimCluster,
    rt: ResourceType,
    namespace: str,
    obj: dict[str, Any],
    *,
    dry_run: bool = False,
) -> Entry | dict[str, Any]:
    """CREATE for every kind but pods: defaults and validation, then the store."""
    meta = obj.setdefault("metadata", {})
    if rt.namespaced:
        if cluster.store.get(NAMESPACE, "", namespace) is None:
            raise not_found(NAMESPACE, namespace)
        meta["namespace"] = namespace
    else:
        meta.pop("namespace", None)
    before_create(cluster, meta)
    obj["apiVersion"], obj["kind"] = rt.api_version, rt.kind
    kinds.prepare_create(rt, obj, cluster.resources.schema(rt))
    if dry_run:
        return obj
    return cluster.store.create(rt, obj, cluster.now_str())
