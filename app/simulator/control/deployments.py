"""The Deployment controller: ReplicaSets per template with revisions, rolling updates within
maxSurge/maxUnavailable, Recreate, proportional scaling mid-rollout, pause, revision history
cleanup, and the status `kubectl rollout status` reads.

Re-derived from kubernetes/kubernetes `pkg/controller/deployment`: `deployment_controller.go`
(syncDeployment), `sync.go` (getNewReplicaSet, scale, cleanupDeployment, isScalingEvent,
checkPausedConditions), `rolling.go`, `recreate.go` and `progress.go`; the arithmetic is in
deployment_util.py. It talks to the store as the real one talks to kube-apiserver: one write per
step, and the watch events of its writes bring it back for the next step.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Protocol

from app.simulator.apiserver import kinds
from app.simulator.apiserver.errors import ApiError
from app.simulator.apiserver.resources import DEPLOYMENT, POD, REPLICASET
from app.simulator.apiserver.store import Store
from app.simulator.control import deployment_util as du
from app.simulator.control.objects import template_hash
from app.simulator.control.ownership import controlled, controller_ref
from app.simulator.workload.clock import rfc3339

COMPONENT = "deployment-controller"
RS = dict[str, Any]


class Recorder(Protocol):
    def __call__(
        self, obj: dict[str, Any], type_: str, reason: str, message: str, component: str
    ) -> None: ...


class DeploymentController:
    def __init__(self, store: Store, now: Callable[[], float], record: Recorder) -> None:
        self.store = store
        self.now = now
        self.record = record

    # --- syncDeployment ---------------------------------------------------------------------

    def sync(self, ns: str, name: str) -> bool:
        """Reconcile one Deployment; True when it should be looked at again as time passes (a
        rollout in progress may run past its progress deadline)."""
        entry = self.store.get(DEPLOYMENT, ns, name)
        if entry is None:
            return False
        d = entry.copy()
        rss = self._replica_sets(d)
        if d["metadata"].get("deletionTimestamp"):
            new_rs, old = self._all_replica_sets(d, rss, create=False)
            self._sync_status(d, [*old, new_rs], new_rs)
            return False
        self._check_paused_conditions(d)
        if d["spec"].get("paused"):
            self._sync(d, rss)
            return False
        if self._is_scaling_event(d, rss):
            self._sync(d, rss)
        elif du.is_rolling_update(d):
            self._rollout_rolling(d, rss)
        else:
            self._rollout_recreate(d, rss)
        return self._may_time_out(d)

    def _may_time_out(self, d: dict[str, Any]) -> bool:
        """requeueStuckDeployment: a rollout with a deadline that is neither complete nor timed
        out is looked at again later."""
        latest = self.store.get(DEPLOYMENT, d["metadata"]["namespace"], d["metadata"]["name"])
        if latest is None or not du.has_progress_deadline(latest.obj):
            return False
        cond = du.condition(latest.obj.get("status") or {}, "Progressing")
        return cond is not None and cond.get("reason") not in (du.NEW_RS_AVAILABLE, du.TIMED_OUT)

    def _replica_sets(self, d: dict[str, Any]) -> list[RS]:
        return [e.copy() for e in controlled(self.store, REPLICASET, d)]

    # --- getAllReplicaSetsAndSyncRevision / getNewReplicaSet ---------------------------------

    def _all_replica_sets(
        self, d: dict[str, Any], rss: list[RS], *, create: bool
    ) -> tuple[RS | None, list[RS]]:
        new_rs = du.find_new_replica_set(d, rss)
        old = [
            rs for rs in rss if new_rs is None or rs["metadata"]["uid"] != new_rs["metadata"]["uid"]
        ]
        return self._new_replica_set(d, new_rs, old, create=create), old

    def _new_replica_set(
        self, d: dict[str, Any], existing: RS | None, old: list[RS], *, create: bool
    ) -> RS | None:
        new_revision = du.max_revision(old) + 1
        if existing is not None:
            rs = copy.deepcopy(existing)
            changed = du.set_new_replica_set_annotations(d, rs, new_revision, exists=True)
            min_ready = d["spec"].get("minReadySeconds", 0)
            if changed or rs["spec"].get("minReadySeconds", 0) != min_ready:
                rs["spec"]["minReadySeconds"] = min_ready
                return self._write_replica_set(rs)
            needs_update = _set_revision(
                d, (rs["metadata"].get("annotations") or {}).get(du.REVISION)
            )
            status = d.setdefault("status", {})
            if du.has_progress_deadline(d) and du.condition(status, "Progressing") is None:
                du.set_condition(
                    status,
                    du.new_condition(
                        "Progressing",
                        "True",
                        du.FOUND_NEW_RS,
                        f'Found new replica set "{rs["metadata"]["name"]}"',
                        self.now(),
                    ),
                )
                needs_update = True
            if needs_update:
                self._write_status(d)
            return rs
        if not create:
            return None
        return self._create_replica_set(d, old, new_revision)

    def _create_replica_set(self, d: dict[str, Any], old: list[RS], new_revision: int) -> RS | None:
        meta, spec = d["metadata"], d["spec"]
        template = copy.deepcopy(spec["template"])
        collisions = (d.get("status") or {}).get("collisionCount")
        hashed = template if collisions is None else {**template, "collisionCount": collisions}
        pod_hash = template_hash(hashed)
        template.setdefault("metadata", {})
        template["metadata"]["labels"] = {
            **(template["metadata"].get("labels") or {}),
            du.HASH_LABEL: pod_hash,
        }
        selector = copy.deepcopy(spec["selector"])
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), du.HASH_LABEL: pod_hash}
        rs: RS = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{meta['name']}-{pod_hash}",
                "namespace": meta["namespace"],
                "labels": dict(template["metadata"]["labels"]),
                "ownerReferences": [controller_ref(d)],
            },
            "spec": {
                "replicas": 0,
                "minReadySeconds": spec.get("minReadySeconds", 0),
                "selector": selector,
                "template": template,
            },
        }
        want = du.new_rs_new_replicas(d, [*old, rs], rs)
        rs["spec"]["replicas"] = want
        du.set_new_replica_set_annotations(d, rs, new_revision, exists=False)
        status = d.setdefault("status", {})
        try:
            kinds.prepare_create(REPLICASET, rs)
            created = self.store.create(REPLICASET, rs, rfc3339(self.now())).copy()
        except ApiError as e:
            if e.code == 409:
                return self._existing_or_collision(d, rs["metadata"]["name"])
            message = f'Failed to create new replica set "{rs["metadata"]["name"]}": {e.message}'
            if du.has_progress_deadline(d):
                du.set_condition(
                    status,
                    du.new_condition(
                        "Progressing", "False", du.FAILED_RS_CREATE, message, self.now()
                    ),
                )
                self._write_status(d)
            self.record(d, "Warning", du.FAILED_RS_CREATE, message, COMPONENT)
            return None
        if want > 0:
            self.record(
                d,
                "Normal",
                "ScalingReplicaSet",
                f"Scaled up replica set {created['metadata']['name']} from 0 to {want}",
                COMPONENT,
            )
        _set_revision(d, str(new_revision))
        if du.has_progress_deadline(d):
            du.set_condition(
                status,
                du.new_condition(
                    "Progressing",
                    "True",
                    du.NEW_RS_CREATED,
                    f'Created new replica set "{created["metadata"]["name"]}"',
                    self.now(),
                ),
            )
        self._write_status(d)
        return created

    def _existing_or_collision(self, d: dict[str, Any], name: str) -> RS | None:
        """The ReplicaSet's name is taken: it is ours if we own it and its template is ours,
        else a hash collision, counted in status.collisionCount for the next try."""
        found = self.store.get(REPLICASET, d["metadata"]["namespace"], name)
        if found is not None:
            rs = found.copy()
            ref = next(
                (r for r in rs["metadata"].get("ownerReferences") or [] if r.get("controller")),
                None,
            )
            if (
                ref is not None
                and ref.get("uid") == d["metadata"]["uid"]
                and du.equal_ignore_hash(d["spec"]["template"], rs["spec"]["template"])
            ):
                return rs
        status = d.setdefault("status", {})
        status["collisionCount"] = int(status.get("collisionCount", 0)) + 1
        self._write_status(d)
        return None

    # --- sync: scaling and paused deployments ------------------------------------------------

    def _sync(self, d: dict[str, Any], rss: list[RS]) -> None:
        new_rs, old = self._all_replica_sets(d, rss, create=False)
        self._scale(d, new_rs, old)
        if d["spec"].get("paused"):
            self._cleanup(d, old)
        self._sync_status(d, [*old, new_rs], new_rs)

    def _is_scaling_event(self, d: dict[str, Any], rss: list[RS]) -> bool:
        new_rs, old = self._all_replica_sets(d, rss, create=False)
        for rs in du.active([*old, new_rs]):
            desired = (rs["metadata"].get("annotations") or {}).get(du.DESIRED_REPLICAS, "")
            if desired.isdigit() and int(desired) != du.replicas(d):
                return True
        return False

    def _scale(self, d: dict[str, Any], new_rs: RS | None, old: list[RS]) -> None:
        """scale (sync.go): the one active ReplicaSet takes the new size; a saturated new one
        leaves none to the old; in a rolling update the difference is shared by size."""
        want = du.replicas(d)
        only = du.find_active_or_latest(new_rs, old)
        if only is not None:
            if du.rs_replicas(only) != want:
                self._scale_replica_set(only, want, d)
            return
        if du.is_saturated(d, new_rs):
            for rs in du.active(old):
                self._scale_replica_set(rs, 0, d)
            return
        if not du.is_rolling_update(d):
            return
        running = du.active([*old, new_rs])
        allowed = want + du.max_surge(d) if want > 0 else 0
        to_add = allowed - du.replica_count(running)
        if to_add > 0:  # ReplicaSetsBySizeNewer
            running.sort(key=du.by_creation, reverse=True)
            running.sort(key=du.rs_replicas, reverse=True)
        elif to_add < 0:  # ReplicaSetsBySizeOlder
            running.sort(key=du.by_creation)
            running.sort(key=du.rs_replicas, reverse=True)
        sizes, added = [], 0
        for rs in running:
            share = du.replica_set_proportion(rs, d, to_add, added) if to_add else 0
            sizes.append(du.rs_replicas(rs) + share)
            added += share
        for i, rs in enumerate(running):
            if i == 0 and to_add:
                sizes[0] = max(sizes[0] + to_add - added, 0)
            self._scale_replica_set(rs, sizes[i], d)

    # --- rolloutRolling ----------------------------------------------------------------------

    def _rollout_rolling(self, d: dict[str, Any], rss: list[RS]) -> None:
        new_rs, old = self._all_replica_sets(d, rss, create=True)
        if new_rs is None:
            return
        all_rss: list[RS | None] = [*old, new_rs]
        if self._reconcile_new(d, all_rss, new_rs):
            self._sync_rollout_status(d, all_rss, new_rs)
            return
        if self._reconcile_old(d, all_rss, du.active(old), new_rs):
            self._sync_rollout_status(d, all_rss, new_rs)
            return
        if du.deployment_complete(d, d.get("status") or {}):
            self._cleanup(d, old)
        self._sync_rollout_status(d, all_rss, new_rs)

    def _reconcile_new(self, d: dict[str, Any], all_rss: list[RS | None], new_rs: RS) -> bool:
        want = du.replicas(d)
        if du.rs_replicas(new_rs) == want:
            return False
        if du.rs_replicas(new_rs) > want:
            return self._scale_replica_set(new_rs, want, d)
        return self._scale_replica_set(new_rs, du.new_rs_new_replicas(d, all_rss, new_rs), d)

    def _reconcile_old(
        self, d: dict[str, Any], all_rss: list[RS | None], old: list[RS], new_rs: RS
    ) -> bool:
        """reconcileOldReplicaSets: scale old ReplicaSets down as far as maxUnavailable allows,
        their unhealthy pods first, counting the new ReplicaSet's unavailable pods against it."""
        if du.replica_count(old) == 0:
            return False
        min_available = du.replicas(d) - du.max_unavailable(d)
        new_unavailable = du.rs_replicas(new_rs) - du.rs_status(new_rs, "availableReplicas")
        max_scaled_down = du.replica_count(all_rss) - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        cleaned = self._cleanup_unhealthy(d, old, max_scaled_down)
        scaled = self._scale_down_old_for_rolling(d, [*old, new_rs], old)
        return cleaned + scaled > 0

    def _cleanup_unhealthy(self, d: dict[str, Any], old: list[RS], max_cleanup: int) -> int:
        old.sort(key=du.by_creation)
        total = 0
        for i, rs in enumerate(old):
            if total >= max_cleanup:
                break
            unhealthy = du.rs_replicas(rs) - du.rs_status(rs, "availableReplicas")
            if du.rs_replicas(rs) == 0 or unhealthy == 0:
                continue
            count = min(max_cleanup - total, unhealthy)
            self._scale_replica_set(rs, du.rs_replicas(rs) - count, d)
            old[i] = self._latest(rs)
            total += count
        return total

    def _scale_down_old_for_rolling(
        self, d: dict[str, Any], all_rss: list[RS | None], old: list[RS]
    ) -> int:
        min_available = du.replicas(d) - du.max_unavailable(d)
        available = du.available_count(all_rss)
        if available <= min_available:
            return 0
        total, budget = 0, available - min_available
        for rs in sorted(old, key=du.by_creation):
            if total >= budget:
                break
            if du.rs_replicas(rs) == 0:
                continue
            count = min(du.rs_replicas(rs), budget - total)
            self._scale_replica_set(rs, du.rs_replicas(rs) - count, d)
            total += count
        return total

    # --- rolloutRecreate ---------------------------------------------------------------------

    def _rollout_recreate(self, d: dict[str, Any], rss: list[RS]) -> None:
        """Scale every old ReplicaSet to 0, wait until their pods are gone, then create and
        scale up the new one (recreate.go)."""
        new_rs, old = self._all_replica_sets(d, rss, create=False)
        all_rss: list[RS | None] = [*old, new_rs]
        scaled_down = False
        for rs in du.active(old):
            scaled_down |= self._scale_replica_set(rs, 0, d)
        if scaled_down or self._old_pods_running(new_rs, old):
            self._sync_rollout_status(d, all_rss, new_rs)
            return
        if new_rs is None:
            new_rs, old = self._all_replica_sets(d, rss, create=True)
            if new_rs is None:
                return
            all_rss = [*old, new_rs]
        if du.rs_replicas(new_rs) != du.replicas(d):
            self._scale_replica_set(new_rs, du.replicas(d), d)
        if du.deployment_complete(d, d.get("status") or {}):
            self._cleanup(d, old)
        self._sync_rollout_status(d, all_rss, new_rs)

    def _old_pods_running(self, new_rs: RS | None, old: list[RS]) -> bool:
        if du.actual_count(old) > 0:
            return True
        for rs in old:
            for pod in self.store.by_index(POD, "owner", rs["metadata"]["uid"]):
                phase = (pod.obj.get("status") or {}).get("phase")
                if phase not in ("Failed", "Succeeded"):
                    return True
        return False

    # --- cleanupDeployment -------------------------------------------------------------------

    def _cleanup(self, d: dict[str, Any], old: list[RS]) -> None:
        """Delete the oldest revisions beyond revisionHistoryLimit that run nothing."""
        limit = d["spec"].get("revisionHistoryLimit")
        if not isinstance(limit, int):
            return
        alive = [rs for rs in old if not rs["metadata"].get("deletionTimestamp")]
        diff = len(alive) - limit
        if diff <= 0:
            return
        alive.sort(key=lambda rs: (du.revision(rs), *du.by_creation(rs)))
        for rs in alive[:diff]:
            status = rs.get("status") or {}
            if (
                status.get("replicas", 0)
                or du.rs_replicas(rs)
                or rs["metadata"].get("generation", 1) > status.get("observedGeneration", 0)
            ):
                continue
            try:
                self.store.delete(REPLICASET, rs["metadata"]["namespace"], rs["metadata"]["name"])
            except ApiError as e:
                if e.code != 404:
                    raise

    # --- status ------------------------------------------------------------------------------

    def _check_paused_conditions(self, d: dict[str, Any]) -> None:
        if not du.has_progress_deadline(d):
            return
        status = d.setdefault("status", {})
        cond = du.condition(status, "Progressing")
        if cond is not None and cond.get("reason") == du.TIMED_OUT:
            return
        paused_before = cond is not None and cond.get("reason") == du.PAUSED
        if d["spec"].get("paused") and not paused_before:
            reason, message = du.PAUSED, "Deployment is paused"
        elif not d["spec"].get("paused") and paused_before:
            reason, message = du.RESUMED, "Deployment is resumed"
        else:
            return
        du.set_condition(
            status, du.new_condition("Progressing", "Unknown", reason, message, self.now())
        )
        self._write_status(d)

    def _sync_status(self, d: dict[str, Any], all_rss: list[RS | None], new_rs: RS | None) -> None:
        status = du.calculate_status(all_rss, new_rs, d, self.now())
        if status != d.get("status"):
            d["status"] = status
            self._write_status(d)

    def _sync_rollout_status(
        self, d: dict[str, Any], all_rss: list[RS | None], new_rs: RS | None
    ) -> None:
        fresh = [None if rs is None else self._latest(rs) for rs in all_rss]
        fresh_new = None if new_rs is None else self._latest(new_rs)
        status = du.rollout_status(d, fresh, fresh_new, self.now())
        if status != d.get("status"):
            d["status"] = status
            self._write_status(d)

    # --- writes ------------------------------------------------------------------------------

    def _scale_replica_set(self, rs: RS, new_scale: int, d: dict[str, Any]) -> bool:
        """scaleReplicaSet: set the size and the replicas annotations; a ScalingReplicaSet
        Event when the size changed. True if it did."""
        old_scale = du.rs_replicas(rs)
        resize = old_scale != new_scale
        if not resize and not du.replicas_annotations_need_update(rs, d):
            return False
        rs["spec"]["replicas"] = new_scale
        rs["metadata"].setdefault("annotations", {}).update(du.replicas_annotations(d))
        written = self._write_replica_set(rs)
        if written is None or not resize:
            return False
        rs.update(written)
        op = "up" if old_scale < new_scale else "down"
        self.record(
            d,
            "Normal",
            "ScalingReplicaSet",
            f"Scaled {op} replica set {rs['metadata']['name']} from {old_scale} to {new_scale}",
            COMPONENT,
        )
        return True

    def _write_replica_set(self, rs: RS) -> RS | None:
        """An update of the ReplicaSet's spec and annotations, as the controller's PUT; the
        API server raises metadata.generation when the spec changed."""
        meta = rs["metadata"]

        def mutate(obj: dict[str, Any]) -> bool:
            if obj["metadata"]["uid"] != meta["uid"]:
                return False
            changed_spec = obj["spec"] != rs["spec"]
            annotations = meta.get("annotations") or {}
            if not changed_spec and (obj["metadata"].get("annotations") or {}) == annotations:
                return False
            obj["spec"] = copy.deepcopy(rs["spec"])
            obj["metadata"]["annotations"] = dict(annotations)
            if changed_spec:
                obj["metadata"]["generation"] = obj["metadata"].get("generation", 1) + 1
            return True

        entry = self.store.update(REPLICASET, meta["namespace"], meta["name"], mutate)
        return None if entry is None else entry.copy()

    def _write_status(self, d: dict[str, Any]) -> None:
        """UpdateStatus with the revision annotation, as the controller writes both."""
        meta = d["metadata"]
        rev = (meta.get("annotations") or {}).get(du.REVISION)

        def mutate(obj: dict[str, Any]) -> bool:
            if obj["metadata"]["uid"] != meta["uid"]:
                return False
            ann = obj["metadata"].get("annotations") or {}
            if obj.get("status") == d.get("status") and (
                rev is None or ann.get(du.REVISION) == rev
            ):
                return False
            obj["status"] = copy.deepcopy(d.get("status") or {})
            if rev is not None:
                obj["metadata"]["annotations"] = {**ann, du.REVISION: rev}
            return True

        self.store.update(DEPLOYMENT, meta["namespace"], meta["name"], mutate)

    def _latest(self, rs: RS) -> RS:
        entry = self.store.get(REPLICASET, rs["metadata"]["namespace"], rs["metadata"]["name"])
        if entry is None or entry.obj["metadata"]["uid"] != rs["metadata"]["uid"]:
            return rs
        return entry.copy()


def _set_revision(d: dict[str, Any], rev: str | None) -> bool:
    """SetDeploymentRevision: the Deployment carries its new ReplicaSet's revision."""
    if rev is None:
        return False
    ann = d["metadata"].setdefault("annotations", {})
    if ann.get(du.REVISION) == rev:
        return False
    ann[du.REVISION] = rev
    return True
