"""The StatefulSet controller: ordinal pods `<name>-<n>` at the ControllerRevision their ordinal
calls for, created in order (OrderedReady: each waits for its predecessors to be Running and
Ready), scaled down from the highest ordinal, and rolling updates that replace the highest-ordinal
pod not at the update revision one at a time, down to the partition.

Re-derived from kubernetes/kubernetes `pkg/controller/statefulset/stateful_set_control.go`
(UpdateStatefulSet, getStatefulSetRevisions, updateStatefulSet, completeRollingUpdate,
truncateHistory) and `stateful_set_utils.go` (newVersionedStatefulSetPod, isRunningAndReady,
isHealthy, getOrdinal, the start ordinal of spec.ordinals). PersistentVolumeClaims and the
maxUnavailable of the MaxUnavailableStatefulSet feature are not modelled.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from app.simulator.apiserver.resources import POD, STATEFULSET
from app.simulator.control import history
from app.simulator.control.objects import pod_from_template
from app.simulator.control.ownership import controlled
from app.simulator.control.podcontrol import RevisionedPodController
from app.simulator.control.replicasets import is_available, ready_since
from app.simulator.control.statuswrite import write_status

Obj = dict[str, Any]
_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


def ordinal(sts: Obj, pod: Obj) -> int:
    """getOrdinal: the pod name's number if it is `<set>-<n>`, else -1."""
    m = _ORDINAL.match(pod["metadata"]["name"])
    return int(m.group(2)) if m and m.group(1) == sts["metadata"]["name"] else -1


def running_and_ready(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and ready_since(pod) is not None


def is_terminating(pod: Obj) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def is_healthy(pod: Obj) -> bool:
    return running_and_ready(pod) and not is_terminating(pod)


def revision_of(pod: Obj) -> str:
    return str((pod["metadata"].get("labels") or {}).get(history.POD_REVISION_LABEL, ""))


class StatefulSetController(RevisionedPodController):
    def sync(self, ns: str, name: str) -> bool:
        """Reconcile one StatefulSet; True when time must pass for pods to become available."""
        entry = self.store.get(STATEFULSET, ns, name)
        if entry is None:
            return False
        sts = entry.copy()
        pods = self._pods(sts)
        revisions = self.revisions.of(sts)
        found = self._revisions(sts, revisions)
        if found is None:
            return False
        current, update, collisions = found
        status = self._update(sts, current, update, collisions, pods)
        if (sts["spec"].get("updateStrategy") or {}).get("type", "RollingUpdate") == (
            "RollingUpdate"
        ) and status["updatedReplicas"] == status["replicas"] == status["readyReplicas"]:
            status["currentReplicas"] = status["updatedReplicas"]  # completeRollingUpdate
            status["currentRevision"] = status["updateRevision"]
        self._write_status(sts, status)
        live = {status["currentRevision"], status["updateRevision"]}
        live |= {revision_of(p) for p in self._pods(sts)}
        limit = sts["spec"].get("revisionHistoryLimit", 10)
        self.revisions.truncate(self.revisions.of(sts), live, int(limit))
        return bool(status["readyReplicas"] != status["availableReplicas"])

    def _pods(self, sts: Obj) -> list[Obj]:
        return [e.obj for e in controlled(self.store, POD, sts)]

    # --- getStatefulSetRevisions -------------------------------------------------------------

    def _revisions(self, sts: Obj, revisions: list[Obj]) -> tuple[Obj, Obj, int] | None:
        collisions = int((sts.get("status") or {}).get("collisionCount") or 0)
        template = sts["spec"]["template"]
        digest = history.hash_revision(history.patch_of(template), collisions)
        update = history.new_revision(sts, template, history.next_revision(revisions), digest)
        equal = [r for r in revisions if history.equal_revision(r, update)]
        if equal and history.equal_revision(revisions[-1], equal[-1]):
            update = revisions[-1]  # unchanged
        elif equal:  # an earlier template again: that revision becomes the newest
            update = self.revisions.set_revision(equal[-1], int(update["revision"]))
        else:
            created = self.revisions.create(update)
            if created is None:
                self._write_status(
                    sts, {**(sts.get("status") or {}), "collisionCount": collisions + 1}
                )
                return None
            update = created
        wanted = (sts.get("status") or {}).get("currentRevision")
        current = next((r for r in revisions if r["metadata"]["name"] == wanted), update)
        return current, update, collisions

    # --- updateStatefulSet -------------------------------------------------------------------

    def _update(
        self, sts: Obj, current: Obj, update: Obj, collisions: int, pods: list[Obj]
    ) -> dict[str, Any]:
        spec = sts["spec"]
        start = int((spec.get("ordinals") or {}).get("start", 0))
        count = int(spec.get("replicas", 1))
        min_ready = int(spec.get("minReadySeconds") or 0)
        now = self.now()
        cur_name, upd_name = current["metadata"]["name"], update["metadata"]["name"]
        status: dict[str, Any] = {
            "observedGeneration": sts["metadata"].get("generation", 1),
            "replicas": 0,
            "readyReplicas": 0,
            "currentReplicas": 0,
            "updatedReplicas": 0,
            "availableReplicas": 0,
            "currentRevision": cur_name,
            "updateRevision": upd_name,
            "collisionCount": collisions,
        }
        replicas: list[Obj | None] = [None] * count
        condemned: list[Obj] = []
        for pod in pods:
            status["replicas"] += 1
            if running_and_ready(pod):
                status["readyReplicas"] += 1
                if is_available(pod, min_ready, now):
                    status["availableReplicas"] += 1
            if (pod.get("status") or {}).get("phase") and not is_terminating(pod):
                status["currentReplicas"] += revision_of(pod) == cur_name
                status["updatedReplicas"] += revision_of(pod) == upd_name
            ord_ = ordinal(sts, pod)
            if start <= ord_ < start + count:
                replicas[ord_ - start] = pod
            elif ord_ >= start + count or 0 <= ord_ < start:
                condemned.append(pod)
        if sts["metadata"].get("deletionTimestamp"):
            return status
        monotonic = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        if not self._replicas(sts, current, update, status, replicas, start, monotonic):
            return status
        if not self._condemned(sts, status, condemned, monotonic):
            return status
        self._rolling_update(sts, update, status, replicas)
        return status

    def _replicas(
        self,
        sts: Obj,
        current: Obj,
        update: Obj,
        status: dict[str, Any],
        replicas: list[Obj | None],
        start: int,
        monotonic: bool,
    ) -> bool:
        """Create missing (and replace failed) pods in ordinal order; False when the set must
        wait (a monotonic set goes one pod at a time, each Running and Ready first)."""
        for i, pod in enumerate(replicas):
            if pod is not None and (pod.get("status") or {}).get("phase") == "Failed":
                self.pods.delete(pod, sts)
                status["replicas"] -= 1
                pod = None
            if pod is None or not (pod.get("status") or {}).get("phase"):
                if pod is None:
                    new = self._new_pod(sts, current, update, status, start + i)
                    if self.pods.create(sts, new, "statefulset-controller") is None:
                        status["replicas"] += 1
                        status["currentReplicas"] += revision_of(new) == status["currentRevision"]
                        status["updatedReplicas"] += revision_of(new) == status["updateRevision"]
                if monotonic:
                    return False
                continue
            if monotonic and (is_terminating(pod) or not running_and_ready(pod)):
                return False
        return True

    def _condemned(
        self, sts: Obj, status: dict[str, Any], condemned: list[Obj], monotonic: bool
    ) -> bool:
        """Scale down from the highest ordinal, one at a time for a monotonic set."""
        condemned.sort(key=lambda p: ordinal(sts, p))
        for pod in reversed(condemned):
            if is_terminating(pod):
                if monotonic:
                    return False
                continue
            self.pods.delete(pod, sts)
            status["currentReplicas"] -= revision_of(pod) == status["currentRevision"]
            status["updatedReplicas"] -= revision_of(pod) == status["updateRevision"]
            if monotonic:
                return False
        return True

    def _rolling_update(
        self, sts: Obj, update: Obj, status: dict[str, Any], replicas: list[Obj | None]
    ) -> None:
        """Delete the highest-ordinal pod not at the update revision (it comes back at it), down
        to the partition; wait while a pod on the way is unhealthy. OnDelete does nothing."""
        strategy = sts["spec"].get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") == "OnDelete":
            return
        partition = int((strategy.get("rollingUpdate") or {}).get("partition", 0))
        for target in range(len(replicas) - 1, partition - 1, -1):
            pod = replicas[target]
            if pod is None:
                return
            if revision_of(pod) != update["metadata"]["name"] and not is_terminating(pod):
                self.pods.delete(pod, sts)
                status["currentReplicas"] -= 1
                return
            if not is_healthy(pod):
                return

    def _new_pod(
        self, sts: Obj, current: Obj, update: Obj, status: dict[str, Any], index: int
    ) -> Obj:
        """newVersionedStatefulSetPod: below the partition a pod keeps the current revision."""
        strategy = sts["spec"].get("updateStrategy") or {}
        rolling = strategy.get("rollingUpdate")
        start = int((sts["spec"].get("ordinals") or {}).get("start", 0))
        keep_current = strategy.get("type", "RollingUpdate") == "RollingUpdate" and (
            (rolling is None and index - start < int(status.get("currentReplicas", 0)))
            or (rolling is not None and index - start < int(rolling.get("partition", 0)))
        )
        revision = current if keep_current else update
        name = f"{sts['metadata']['name']}-{index}"
        pod = pod_from_template(
            history.template_of(revision),
            sts["metadata"]["namespace"],
            sts,
            name=name,
            extra_labels={
                "statefulset.kubernetes.io/pod-name": name,
                "apps.kubernetes.io/pod-index": str(index),
                history.POD_REVISION_LABEL: revision["metadata"]["name"],
            },
        )
        pod["spec"]["hostname"] = name
        pod["spec"]["subdomain"] = sts["spec"].get("serviceName", "")
        return pod

    def _write_status(self, sts: Obj, status: dict[str, Any]) -> None:
        """The status as the API returns it (omitempty: zero counts but replicas and
        availableReplicas left out)."""
        keep = ("replicas", "availableReplicas", "collisionCount")
        shown = {k: copy.deepcopy(v) for k, v in status.items() if v or k in keep}
        meta = sts["metadata"]
        write_status(
            self.store, STATEFULSET, meta["namespace"], meta["name"], shown, uid=meta["uid"]
        )
