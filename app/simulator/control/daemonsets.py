"""The DaemonSet controller: one pod per node that should run it, the template's history in
ControllerRevisions, and rolling updates within maxUnavailable (or maxSurge).

Re-derived from kubernetes/kubernetes `pkg/controller/daemon/daemon_controller.go` (manage,
podsShouldBeOnNode, updateDaemonSetStatus, NodeShouldRunDaemonPod as far as node selectors and
taints go) and `update.go` (constructHistory, rollingUpdate, findUpdatedPodsOnNode,
updatedDesiredNodeCounts). Daemon pods get the `unschedulable` toleration the controller adds,
so they also run on cordoned nodes. As since Kubernetes 1.12 (ScheduleDaemonSetPods), a daemon
pod is not bound by the controller: it is created with a required node affinity naming its node
(`matchFields: metadata.name In [node]`, `ReplaceDaemonSetPodNodeNameNodeAffinity`) and the
scheduler binds it there; the controller finds each pod's node with `GetTargetNodeName` (its
`spec.nodeName`, else that affinity; a pod with neither is skipped, as getNodesToDaemonPods does).
"""

from __future__ import annotations

import copy
from typing import Any

from app.simulator.apiserver import podutil
from app.simulator.apiserver.resources import DAEMONSET, NODE, POD
from app.simulator.control import history
from app.simulator.control.deployment_util import scaled_value
from app.simulator.control.nodeaffinity import matches_node, target_node_name, with_node_affinity
from app.simulator.control.objects import pod_from_template, template_hash
from app.simulator.control.ownership import controlled
from app.simulator.control.podcontrol import RevisionedPodController
from app.simulator.control.replicasets import is_available, ready_since
from app.simulator.control.statuswrite import write_status

Obj = dict[str, Any]
TEMPLATE_GENERATION = "pod-template-generation"  # extensions.DaemonSetTemplateGenerationKey
_DAEMON_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)


def daemon_tolerations(template: Obj) -> list[Obj]:
    """util.AddOrUpdateDaemonPodTolerations: the template's, plus the node-condition ones."""
    own = list((template.get("spec") or {}).get("tolerations") or [])
    keys = {(t.get("key"), t.get("effect")) for t in own}
    return own + [dict(t) for t in _DAEMON_TOLERATIONS if (t["key"], t["effect"]) not in keys]


def should_run(node: Obj, template: Obj) -> bool:
    """NodeShouldRunDaemonPod, for the template's nodeName, nodeSelector and required node
    affinity (`predicates`: GetRequiredNodeAffinity(pod).Match) and NoSchedule/NoExecute taints."""
    node_name = (template.get("spec") or {}).get("nodeName")
    if node_name and node_name != node["metadata"]["name"]:
        return False
    if not matches_node(template, node):
        return False
    tolerations = daemon_tolerations(template)
    return not any(
        t.get("effect") in ("NoSchedule", "NoExecute") and not podutil.tolerates(tolerations, t)
        for t in node["spec"].get("taints") or []
    )


def is_updated(pod: Obj, digest: str, generation: str) -> bool:
    """IsPodUpdated: the pod carries the template's hash (or its template generation)."""
    labels = pod["metadata"].get("labels") or {}
    return labels.get(history.POD_REVISION_LABEL) == digest or (
        labels.get(TEMPLATE_GENERATION) == generation
    )


class DaemonSetController(RevisionedPodController):
    def sync(self, ns: str, name: str) -> bool:
        """Reconcile one DaemonSet; True when time must pass for pods to become available."""
        entry = self.store.get(DAEMONSET, ns, name)
        if entry is None:
            return False
        ds = entry.copy()
        nodes = [e.obj for _, e in self.store.scan(NODE)[0]]
        digest = self._history(ds)
        if digest is None:
            return False
        if not ds["metadata"].get("deletionTimestamp"):
            self._manage(ds, nodes, digest)
            strategy = ds["spec"].get("updateStrategy") or {}
            if strategy.get("type", "RollingUpdate") == "RollingUpdate":
                self._rolling_update(ds, nodes, digest)
        status = self._status(ds, nodes, digest)
        self._write_status(ds, status)
        return bool(status["numberReady"] != status.get("numberAvailable", 0))

    # --- constructHistory --------------------------------------------------------------------

    def _history(self, ds: Obj) -> str | None:
        """The template's hash, its ControllerRevision made the newest (created, or an earlier
        one raised when the template comes back); the others are trimmed to the history limit."""
        collisions = (ds.get("status") or {}).get("collisionCount")
        template = ds["spec"]["template"]
        hashed = template if collisions is None else {**template, "collisionCount": collisions}
        digest = template_hash(hashed)
        revisions = self.revisions.of(ds)
        wanted = history.new_revision(
            ds, template, history.next_revision(revisions), digest, history.POD_REVISION_LABEL
        )
        equal = [r for r in revisions if history.equal_revision(r, wanted)]
        if equal:
            newest = max(int(r.get("revision", 0)) for r in revisions)
            if int(equal[-1].get("revision", 0)) < newest:
                self.revisions.set_revision(equal[-1], newest + 1)
            current = equal[-1]["metadata"]["name"]
        else:
            created = self.revisions.create(wanted)
            if created is None:
                status = {**(ds.get("status") or {}), "collisionCount": int(collisions or 0) + 1}
                self._write_status(ds, status)
                return None
            current = created["metadata"]["name"]
        name = ds["metadata"]["name"]
        live = {current} | {
            f"{name}-{(p['metadata'].get('labels') or {}).get(history.POD_REVISION_LABEL)}"
            for p in self._pods(ds)
        }
        limit = int(ds["spec"].get("revisionHistoryLimit", 10))
        self.revisions.truncate(self.revisions.of(ds), live, limit)
        return digest

    # --- manage ------------------------------------------------------------------------------

    def _pods(self, ds: Obj) -> list[Obj]:
        return [e.obj for e in controlled(self.store, POD, ds)]

    def _by_node(self, ds: Obj) -> dict[str, list[Obj]]:
        """getNodesToDaemonPods: the daemon's live pods per node (GetTargetNodeName: bound or
        not yet), oldest first; a pod naming no node is left out."""
        out: dict[str, list[Obj]] = {}
        for pod in self._pods(ds):
            if podutil.is_terminal(pod) and pod["metadata"].get("deletionTimestamp"):
                continue
            node = target_node_name(pod)
            if node is not None:
                out.setdefault(node, []).append(pod)
        for pods in out.values():
            pods.sort(
                key=lambda p: (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"])
            )
        return out

    def _manage(self, ds: Obj, nodes: list[Obj], digest: str) -> None:
        """Create the missing daemon pods, delete those on nodes that should not run one, failed
        ones and extras (with maxSurge, one old and one new pod may share a node)."""
        template = ds["spec"]["template"]
        by_node = self._by_node(ds)
        surging = self._fenceposts(ds, nodes)[0] > 0
        for node in sorted(nodes, key=lambda n: n["metadata"]["name"]):
            name = node["metadata"]["name"]
            pods = [p for p in by_node.pop(name, []) if not p["metadata"].get("deletionTimestamp")]
            if not should_run(node, template):
                for pod in pods:
                    self.pods.delete(pod, ds)
                continue
            for pod in [p for p in pods if (p.get("status") or {}).get("phase") == "Failed"]:
                self.pods.delete(pod, ds)
                pods.remove(pod)
            if not pods:
                self._create(ds, name, digest)
                continue
            keep = self._keep(pods, digest, surging)
            for pod in pods:
                if pod not in keep:
                    self.pods.delete(pod, ds)
        for pods in by_node.values():  # nodes that are gone
            for pod in pods:
                if not pod["metadata"].get("deletionTimestamp"):
                    self.pods.delete(pod, ds)

    @staticmethod
    def _keep(pods: list[Obj], digest: str, surging: bool) -> list[Obj]:
        """podsShouldBeOnNode: the oldest pod; surging, the oldest new and the oldest old."""
        if not surging:
            return pods[:1]
        new = [p for p in pods if is_updated(p, digest, "")]
        old = [p for p in pods if not is_updated(p, digest, "")]
        return new[:1] + old[:1]

    def _create(self, ds: Obj, node: str, digest: str) -> None:
        template = ds["spec"]["template"]
        pod = pod_from_template(
            template,
            ds["metadata"]["namespace"],
            ds,
            extra_labels={
                history.POD_REVISION_LABEL: digest,
                TEMPLATE_GENERATION: str(ds["metadata"].get("generation", 1)),
            },
        )
        pod["spec"] = with_node_affinity(pod["spec"], node)  # the scheduler binds it there
        pod["spec"]["tolerations"] = daemon_tolerations(template)
        self.pods.create(ds, pod, "daemonset-controller")

    # --- rollingUpdate -----------------------------------------------------------------------

    def _fenceposts(self, ds: Obj, nodes: list[Obj]) -> tuple[int, int]:
        """updatedDesiredNodeCounts: (maxSurge, maxUnavailable) of the desired pods, rounded up;
        both 0 makes maxUnavailable 1."""
        desired = sum(1 for n in nodes if should_run(n, ds["spec"]["template"]))
        rolling = (ds["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {}
        surge = scaled_value(rolling.get("maxSurge", 0), desired, round_up=True)
        unavailable = scaled_value(rolling.get("maxUnavailable", 1), desired, round_up=True)
        if surge == 0 and unavailable == 0:
            unavailable = 1
        return surge, unavailable

    def _rolling_update(self, ds: Obj, nodes: list[Obj], digest: str) -> None:
        surge, max_unavailable = self._fenceposts(ds, nodes)
        min_ready, now = int(ds["spec"].get("minReadySeconds") or 0), self.now()
        by_node = {
            n: [p for p in pods if not p["metadata"].get("deletionTimestamp")]
            for n, pods in self._by_node(ds).items()
        }
        if surge > 0:
            self._surge(ds, by_node, digest, surge, min_ready, now)
            return
        unavailable, replace, candidates = 0, [], []
        for node in sorted(by_node):
            new, old, ok = _updated_on_node(by_node[node], digest)
            if not ok or (new is None) == (old is None):
                unavailable += 1
            elif new is not None:
                unavailable += not is_available(new, min_ready, now)
            elif old is not None and not is_available(old, min_ready, now):
                replace.append(old)
            elif old is not None and unavailable < max_unavailable:
                candidates.append(old)
        room = min(max(max_unavailable - unavailable, 0), len(candidates))
        for pod in replace + candidates[:room]:
            self.pods.delete(pod, ds)

    def _surge(
        self,
        ds: Obj,
        by_node: dict[str, list[Obj]],
        digest: str,
        surge: int,
        min_ready: int,
        now: float,
    ) -> None:
        """With maxSurge, a new pod starts beside the old one (at most maxSurge at a time, at
        once where the old one is unavailable), and the old one goes when the new one is
        available."""
        surging, to_delete, allowed, candidates = 0, [], [], []
        for node in sorted(by_node):
            new, old, ok = _updated_on_node(by_node[node], digest)
            if not ok:
                surging += 1
            elif old is None:
                continue
            elif new is None:
                if not is_available(old, min_ready, now):
                    allowed.append(node)
                elif surging < surge:
                    candidates.append(node)
            elif not is_available(new, min_ready, now):
                surging += 1
            else:
                to_delete.append(old)
        room = min(max(surge - surging, 0), len(candidates))
        for pod in to_delete:
            self.pods.delete(pod, ds)
        for node in allowed + candidates[:room]:
            self._create(ds, node, digest)

    # --- status ------------------------------------------------------------------------------

    def _status(self, ds: Obj, nodes: list[Obj], digest: str) -> dict[str, Any]:
        """updateDaemonSetStatus: per node that should run the daemon, its oldest pod counts."""
        template = ds["spec"]["template"]
        by_node = self._by_node(ds)
        min_ready, now = int(ds["spec"].get("minReadySeconds") or 0), self.now()
        desired = current = misscheduled = ready = available = updated = 0
        for node in nodes:
            pods = by_node.get(node["metadata"]["name"]) or []
            if not should_run(node, template):
                misscheduled += bool(pods)
                continue
            desired += 1
            if not pods:
                continue
            current += 1
            pod = pods[0]
            if ready_since(pod) is not None:
                ready += 1
                available += is_available(pod, min_ready, now)
            updated += is_updated(pod, digest, "")
        status: dict[str, Any] = {
            "currentNumberScheduled": current,
            "numberMisscheduled": misscheduled,
            "desiredNumberScheduled": desired,
            "numberReady": ready,
            "observedGeneration": ds["metadata"].get("generation", 1),
            "updatedNumberScheduled": updated,
            "numberAvailable": available,
            "numberUnavailable": desired - available,
        }
        if (ds.get("status") or {}).get("collisionCount") is not None:
            status["collisionCount"] = ds["status"]["collisionCount"]
        return status

    def _write_status(self, ds: Obj, status: dict[str, Any]) -> None:
        required = (
            "currentNumberScheduled",
            "numberMisscheduled",
            "desiredNumberScheduled",
            "numberReady",
        )
        shown = {k: copy.deepcopy(v) for k, v in status.items() if v or k in required}
        meta = ds["metadata"]
        write_status(self.store, DAEMONSET, meta["namespace"], meta["name"], shown, uid=meta["uid"])


def _updated_on_node(pods: list[Obj], digest: str) -> tuple[Obj | None, Obj | None, bool]:
    """findUpdatedPodsOnNode: (the new pod, the old pod, False if either is doubled)."""
    new = [p for p in pods if is_updated(p, digest, "")]
    old = [p for p in pods if not is_updated(p, digest, "")]
    if len(new) > 1 or len(old) > 1:
        return None, None, False
    return (new[0] if new else None), (old[0] if old else None), True
