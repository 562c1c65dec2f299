"""kube-controller-manager's share: Deployment, ReplicaSet, StatefulSet, DaemonSet, disruption
budgets and garbage collection, plus the scheduler pass, on one work queue.

Store events only enqueue keys (cheap, under the store lock); one worker thread reconciles them,
creating pods through the same admission path as an API client, with no lock held during webhook
calls. `settle()` waits until the queue is drained, so tests need no sleeps.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import deque
from collections.abc import Mapping
from typing import Any, Protocol

from app.simulator.apiserver import admission, crd, deletion, podutil, selectors
from app.simulator.apiserver.errors import ApiError
from app.simulator.apiserver.resources import (
    CRD,
    DAEMONSET,
    DEPLOYMENT,
    NAMESPACE,
    NODE,
    PDB,
    POD,
    REPLICASET,
    STATEFULSET,
    Registry,
    ResourceType,
)
from app.simulator.apiserver.store import Entry, Store, WatchEvent
from app.simulator.control import disruption
from app.simulator.control.daemonsets import DaemonSetController
from app.simulator.control.deployments import DeploymentController
from app.simulator.control.events import Source
from app.simulator.control.garbagecollector import GarbageCollector, work_for
from app.simulator.control.objects import pod_from_template
from app.simulator.control.recorder import EventRecorder
from app.simulator.control.replicasets import replicaset_status
from app.simulator.control.rollouts import RolloutController
from app.simulator.control.statefulsets import StatefulSetController
from app.simulator.control.statuswrite import write_status

log = logging.getLogger(__name__)

_OWNER_KINDS = {
    "ReplicaSet": REPLICASET,
    "StatefulSet": STATEFULSET,
    "DaemonSet": DAEMONSET,
    "Deployment": DEPLOYMENT,
}
_WORKLOAD_TYPES = (DEPLOYMENT, REPLICASET, STATEFULSET, DAEMONSET)
# The event source of each controller (its NewRecorder's EventSource.Component).
_SOURCES = {
    "ReplicaSet": "replicaset-controller",
    "StatefulSet": "statefulset-controller",
    "DaemonSet": "daemonset-controller",
    "Deployment": "deployment-controller",
}
Key = tuple[str, ...]


class ClusterOps(Protocol):
    """What the controllers use of the cluster (SimCluster in cluster.py, which owns them): they
    are its clients, as kube-controller-manager is kube-apiserver's, plus the scheduler pass."""

    @property
    def store(self) -> Store: ...

    @property
    def resources(self) -> Registry: ...

    def now(self) -> float: ...

    def now_str(self) -> str: ...

    @property
    def recorder(self) -> EventRecorder: ...

    def create_pod(
        self, namespace: str, pod: dict[str, Any], user: Mapping[str, Any] = ...
    ) -> Entry | dict[str, Any]: ...

    def pods_of_node(self, node: str) -> list[Entry]: ...

    def schedule_pending(self) -> None: ...


class Controllers:
    def __init__(self, cluster: ClusterOps) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self._queue: deque[Key] = deque()
        self._queued: set[Key] = set()
        self._failed: set[Key] = set()
        self._busy = False
        self._cond = threading.Condition()
        self._stopped = False
        self.deployments = DeploymentController(self.store, cluster.now, self._record_event)
        self.gc = GarbageCollector(self.store, cluster.now_str, cluster.resources)
        self.rollouts = RolloutController(self.store, cluster.resources, cluster.now_str)
        pods = _PodControl(self)
        self.statefulsets = StatefulSetController(self.store, cluster.now, cluster.now_str, pods)
        self.daemonsets = DaemonSetController(self.store, cluster.now, cluster.now_str, pods)
        self.store.add_listener(self._on_event)
        self._thread = threading.Thread(target=self._run, name="sim-controllers", daemon=True)
        self._thread.start()

    # --- queue ----------------------------------------------------------------------------

    def enqueue(self, *key: str) -> None:
        with self._cond:
            if key not in self._queued:
                self._queued.add(key)
                self._queue.append(key)
                self._cond.notify_all()

    def settle(self, timeout: float = 30.0) -> None:
        """Block until every queued reconcile has run (failed ones wait for the next tick)."""
        with self._cond:
            if not self._cond.wait_for(
                lambda: (not self._queue and not self._busy) or self._stopped, timeout
            ):
                raise TimeoutError(f"controllers did not settle within {timeout}s")

    def _later(self, key: Key) -> None:
        """Look at `key` again on the next tick (client-go's AddAfter: a deadline or
        minReadySeconds is a matter of time passing)."""
        with self._cond:
            self._failed.add(key)

    def retry_failed(self) -> None:
        with self._cond:
            failed, self._failed = self._failed, set()
        for key in failed:
            self.enqueue(*key)

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                self._busy = False
                self._cond.notify_all()
                self._cond.wait_for(lambda: self._queue or self._stopped)
                if self._stopped:
                    return
                key = self._queue.popleft()
                self._queued.discard(key)
                self._busy = True
            try:
                self._reconcile(key)
            except Exception:
                log.exception("reconciling %s failed", key)
                with self._cond:
                    self._failed.add(key)

    # --- what to reconcile on which event -------------------------------------------------

    def _on_event(self, event: WatchEvent) -> None:
        obj = event.entry.obj
        meta = obj["metadata"]
        ns = meta.get("namespace", "")
        rt = event.rt
        for work in work_for(event):
            self.enqueue(*work)
        for key in self.rollouts.keys_for(event):
            self.enqueue(*key)
        if event.type == "DELETED":
            if rt is NAMESPACE:
                self.enqueue("namespace", meta["name"])
            if rt is NODE:
                self.enqueue("node-gone", meta["name"])
        if rt is POD:
            ref = podutil.controller_of(obj)
            if ref is not None and ref["kind"] in _OWNER_KINDS:
                self.enqueue(ref["kind"], ns, ref["name"])
            self.enqueue("pdb", ns)
            phase = (obj.get("status") or {}).get("phase")
            if (event.type == "ADDED" and phase == "Pending") or (
                event.type == "DELETED"
                and obj["spec"].get("nodeName")
                and self.store.by_index(POD, "phase", "Pending")
            ):
                self.enqueue("schedule")
        elif rt in _WORKLOAD_TYPES:
            self.enqueue(rt.kind, ns, meta["name"])
            ref = podutil.controller_of(obj)
            if ref is not None and ref["kind"] == "Deployment":
                self.enqueue("Deployment", ns, ref["name"])
        elif rt is NODE:
            self.enqueue("schedule")
            for _, ds in self.store.scan(DAEMONSET)[0]:
                self.enqueue(
                    "DaemonSet", ds.obj["metadata"]["namespace"], ds.obj["metadata"]["name"]
                )
        elif rt is PDB and event.type != "DELETED":
            self.enqueue("pdb", ns)

    def _reconcile(self, key: Key) -> None:
        kind = key[0]
        # The workload controllers whose sync says when to look again (as time passes).
        timed = {
            "Deployment": self.deployments.sync,
            "StatefulSet": self.statefulsets.sync,
            "DaemonSet": self.daemonsets.sync,
            "Rollout": self.rollouts.sync,  # a custom resource's (rollouts.py)
        }
        if kind == "schedule":
            self.cluster.schedule_pending()
        elif kind in timed:
            if timed[kind](key[1], key[2]):
                self._later(key)
        elif kind == "ReplicaSet":
            self._replicaset(key[1], key[2])
        elif kind in ("crd", "crd-gone"):
            self._definition(key)
        elif kind == "pdb":
            self._pdbs(key[1])
        elif kind.startswith("gc-"):
            self.gc.run(key)
        elif kind == "namespace":
            self._empty_namespace(key[1])
        elif kind == "node-gone":
            for entry in self.cluster.pods_of_node(key[1]):
                self._delete_pod(entry.obj)

    # --- helpers --------------------------------------------------------------------------

    def _create_pod(
        self, owner: dict[str, Any], pod: dict[str, Any], controller: str
    ) -> str | None:
        """Create a pod for `owner`; the error's message if admission refused it."""
        ns = owner["metadata"]["namespace"]
        try:
            created = self.cluster.create_pod(ns, pod, admission.controller_user(controller))
            name = created.obj["metadata"]["name"] if isinstance(created, Entry) else ""
            self._pod_event(owner, "create", name)
            return None
        except ApiError as e:
            self._pod_event(owner, "create", pod["metadata"].get("name", ""), e.message)
            with self._cond:
                self._failed.add((owner["kind"], ns, owner["metadata"]["name"]))
            return e.message

    def _delete_pod(self, pod: dict[str, Any], owner: dict[str, Any] | None = None) -> None:
        """Delete the pod; a controller (`owner`) records it on its object."""
        meta = pod["metadata"]
        try:
            deletion.delete(
                self.store, POD, meta["namespace"], meta["name"], {}, self.cluster.now_str()
            )
        except ApiError:
            return  # already gone
        if owner is not None:
            self._pod_event(owner, "delete", meta["name"])

    def _pod_event(
        self, owner: dict[str, Any], verb: str, pod: str, error: str | None = None
    ) -> None:
        """What a controller's pod control records about a pod it created or deleted:
        statefulset/stateful_pod_control.go recordPodEvent for StatefulSets, else
        controller_utils.go RealPodControl.CreatePods/DeletePod."""
        kind = owner["kind"]
        reason = ("Successful" if error is None else "Failed") + verb.title()
        if kind == "StatefulSet":
            outcome = "successful" if error is None else f"failed error: {error}"
            message = f"{verb} Pod {pod} in StatefulSet {owner['metadata']['name']} {outcome}"
        elif error is not None:
            message = f"Error {verb.removesuffix('e')}ing: {error}"  # Error creating: ...
        else:
            message = f"{verb.title()}d pod: {pod}"  # Created pod: x / Deleted pod: x
        self._record_event(
            owner, "Normal" if error is None else "Warning", reason, message, _SOURCES[kind]
        )

    def _delete(self, rt: ResourceType, ns: str, name: str) -> None:
        """DELETE as a client sends it (finalizers hold the object; background propagation)."""
        with contextlib.suppress(ApiError):  # already gone
            deletion.delete(self.store, rt, ns, name, {}, self.cluster.now_str())

    def _record_event(
        self, obj: dict[str, Any], type_: str, reason: str, message: str, component: str
    ) -> None:
        """The controller's event recorder (source: the controller's name)."""
        self.cluster.recorder.event(obj, type_, reason, message, Source(component))

    def _owned_pods(self, uid: str) -> list[dict[str, Any]]:
        """controller.FilterActivePods: neither terminal nor being deleted."""
        return [
            e.obj
            for e in self.store.by_index(POD, "owner", uid)
            if not podutil.is_terminal(e.obj) and not e.obj["metadata"].get("deletionTimestamp")
        ]

    # --- workloads ------------------------------------------------------------------------

    def _replicaset(self, ns: str, name: str) -> None:
        """syncReplicaSet (pkg/controller/replicaset/replica_set.go): create or delete pods
        towards spec.replicas unless the ReplicaSet is being deleted, then the status, with a
        ReplicaFailure condition while pods cannot be created."""
        entry = self.store.get(REPLICASET, ns, name)
        if entry is None:
            return
        rs = entry.obj
        error = None
        if not rs["metadata"].get("deletionTimestamp"):
            error = self._manage_replicas(rs)
        pods = self._owned_pods(rs["metadata"]["uid"])
        status = replicaset_status(rs, pods, self.cluster.now(), error)
        write_status(self.store, REPLICASET, ns, name, status)
        want = rs["spec"].get("replicas", 1)
        if rs["spec"].get("minReadySeconds") and status.get("readyReplicas", 0) == want != (
            status.get("availableReplicas", 0)
        ):
            self._later(("ReplicaSet", ns, name))  # available once minReadySeconds have passed

    def _manage_replicas(self, rs: dict[str, Any]) -> str | None:
        ns = rs["metadata"]["namespace"]
        pods = self._owned_pods(rs["metadata"]["uid"])
        want = rs["spec"].get("replicas", 1)
        for _ in range(want - len(pods)):
            pod = pod_from_template(rs["spec"]["template"], ns, rs)
            error = self._create_pod(rs, pod, "replicaset-controller")
            if error is not None:
                return error
        if len(pods) > want:
            # Like the ReplicaSet controller: unscheduled, then not ready, then newest go first.
            pods.sort(key=lambda p: p["metadata"].get("creationTimestamp", ""), reverse=True)
            pods.sort(key=lambda p: (bool(p["spec"].get("nodeName")), podutil.is_ready(p)))
            for pod in pods[: len(pods) - want]:
                self._delete_pod(pod, rs)
        return None

    # --- disruption budgets, garbage collection -------------------------------------------

    def _pdbs(self, ns: str) -> None:
        for _, entry in self.store.scan(PDB, ns)[0]:
            pdb = entry.obj
            status = pdb_status(self.cluster, pdb)
            write_status(self.store, PDB, ns, pdb["metadata"]["name"], status)

    def _definition(self, key: Key) -> None:
        """The API server's own controllers for CustomResourceDefinitions: a new one's names
        accepted and its resource established (apiserver/crd.py); the objects of a resource no
        longer served deleted (the customresourcecleanup finalizer's work, done at once)."""
        if key[0] == "crd":
            now = self.cluster.now_str()

            def mutate(obj: dict[str, Any]) -> bool:
                status = crd.established(obj, now)
                if obj.get("status") == status:
                    return False
                obj["status"] = status
                return True

            self.store.update(CRD, "", key[1], mutate)
            return
        gone = ResourceType(key[1], key[2], key[3], "", True)  # found by (group, version, plural)
        for _, entry in self.store.scan(gone)[0]:
            meta = entry.obj["metadata"]
            with contextlib.suppress(ApiError):
                self.store.delete(gone, meta.get("namespace", ""), meta["name"])

    def _empty_namespace(self, ns: str) -> None:
        for rt in self.cluster.resources.all():
            if rt.namespaced and not rt.computed:
                for _, entry in self.store.scan(rt, ns)[0]:
                    self._delete(rt, ns, entry.obj["metadata"]["name"])


def _int_or_percent(value: Any, total: int, *, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        frac = int(value[:-1]) * total
        return -(-frac // 100) if round_up else frac // 100
    return int(value)


def pdb_status(cluster: ClusterOps, pdb: dict[str, Any]) -> dict[str, Any]:
    """The disruption controller's arithmetic: who is healthy and how many may go."""
    ns = pdb["metadata"]["namespace"]
    sel = selectors.from_label_selector_object(pdb["spec"].get("selector"))
    pods = [
        e.obj
        for _, e in cluster.store.scan(POD, ns)[0]
        if not podutil.is_terminal(e.obj)
        and selectors.matches(sel, e.obj["metadata"].get("labels"))
    ]
    spec = pdb["spec"]
    expected = disruption.expected_pods(cluster.store, spec, pods)
    healthy = sum(1 for p in pods if podutil.is_ready(p))
    if "maxUnavailable" in spec:
        desired = max(
            expected - _int_or_percent(spec["maxUnavailable"], expected, round_up=True), 0
        )
    else:
        desired = _int_or_percent(spec.get("minAvailable", 1), expected, round_up=True)
    allowed = max(healthy - desired, 0) if expected > 0 else 0
    old = {c["type"]: c for c in (pdb.get("status") or {}).get("conditions") or []}
    ok = allowed > 0
    prev = old.get("DisruptionAllowed")
    cond = (
        prev
        if prev and prev["status"] == ("True" if ok else "False")
        else {
            "type": "DisruptionAllowed",
            "status": "True" if ok else "False",
            "reason": "SufficientPods" if ok else "InsufficientPods",
            "message": "",  # the disruption controller leaves it empty (updatePdbStatus)
            "lastTransitionTime": cluster.now_str(),
            "observedGeneration": pdb["metadata"].get("generation", 1),
        }
    )
    return {
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "disruptionsAllowed": allowed,
        "expectedPods": expected,
        "observedGeneration": pdb["metadata"].get("generation", 1),
        "conditions": [cond],
    }


class _PodControl:
    """The controllers' pod control (admission on create, Events on both) for the StatefulSet
    and DaemonSet controllers."""

    def __init__(self, controllers: Controllers) -> None:
        self._controllers = controllers

    def create(self, owner: dict[str, Any], pod: dict[str, Any], controller: str) -> str | None:
        return self._controllers._create_pod(owner, pod, controller)

    def delete(self, pod: dict[str, Any], owner: dict[str, Any]) -> None:
        self._controllers._delete_pod(pod, owner)
