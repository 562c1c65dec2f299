"""A test controller for an Argo-Rollouts-like custom resource: a workload rightsizer does not
know by name, reachable only through its `/scale` subresource and the owner chain.

It runs when the cluster serves the kind `Rollout` of group `argoproj.io` (a
CustomResourceDefinition such as `ROLLOUT_CRD`, as installing Argo Rollouts would create), and
owns ReplicaSets the way Argo Rollouts' controller does (argoproj/argo-rollouts
`rollout/replicaset.go`, `utils/replicaset`): one ReplicaSet per pod template, named
`<rollout>-<hash>`, whose selector and template carry the label `rollouts-pod-template-hash`, owned
by the Rollout (controller reference, blockOwnerDeletion); status `replicas`, `updatedReplicas`,
`readyReplicas`, `availableReplicas`, `currentPodHash`, `selector` (the Rollout's selector as a
string, the scale subresource's `labelSelectorPath`) and `observedGeneration` (a string, as Argo
writes it).

Simplified, knowingly: no canary steps, traffic routing, analysis or blue-green services. A new
template gets its ReplicaSet at the full replica count, and the older ones are scaled to 0 once it
is fully available (what a canary without steps ends at); `phase` is `Progressing` until then,
`Healthy` after.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.simulator.apiserver import kinds, selectors
from app.simulator.apiserver.errors import ApiError
from app.simulator.apiserver.resources import REPLICASET, Registry, ResourceType
from app.simulator.apiserver.store import Store, WatchEvent
from app.simulator.control.objects import template_hash
from app.simulator.control.ownership import controlled, controller_ref
from app.simulator.control.statuswrite import write_status

GROUP, KIND = "argoproj.io", "Rollout"
HASH_LABEL = "rollouts-pod-template-hash"
REVISION = "rollout.argoproj.io/revision"

# The definition Argo Rollouts installs, reduced to what this controller reads: v1alpha1,
# namespaced, status and scale subresources at Argo's paths.
ROLLOUT_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "rollouts.argoproj.io"},
    "spec": {
        "group": GROUP,
        "names": {
            "kind": KIND,
            "listKind": "RolloutList",
            "plural": "rollouts",
            "singular": "rollout",
            "shortNames": ["ro"],
        },
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1alpha1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                                "properties": {"replicas": {"type": "integer"}},
                            },
                            "status": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        },
                    }
                },
                "subresources": {
                    "status": {},
                    "scale": {
                        "specReplicasPath": ".spec.replicas",
                        "statusReplicasPath": ".status.replicas",
                        "labelSelectorPath": ".status.selector",
                    },
                },
            }
        ],
    },
}

Obj = dict[str, Any]


class RolloutController:
    def __init__(self, store: Store, resources: Registry, now_str: Callable[[], str]) -> None:
        self.store, self.resources, self.now_str = store, resources, now_str

    def rollout_type(self) -> ResourceType | None:
        return self.resources.by_group_kind(GROUP, KIND)

    def keys_for(self, event: WatchEvent) -> list[tuple[str, ...]]:
        """The Rollouts a change concerns: their own, and their ReplicaSets'."""
        meta = event.entry.obj["metadata"]
        ns = meta.get("namespace", "")
        if event.rt.custom and (event.rt.group, event.rt.kind) == (GROUP, KIND):
            return [(KIND, ns, meta["name"])]
        if event.rt is REPLICASET:
            return [
                (KIND, ns, ref["name"])
                for ref in meta.get("ownerReferences") or []
                if ref.get("controller")
                and ref.get("kind") == KIND
                and str(ref.get("apiVersion", "")).startswith(GROUP + "/")
            ]
        return []

    def sync(self, ns: str, name: str) -> bool:
        """Reconcile one Rollout; True while it progresses (look again later)."""
        rt = self.rollout_type()
        entry = None if rt is None else self.store.get(rt, ns, name)
        if rt is None or entry is None:
            return False
        ro = entry.copy()  # stored dicts are never mutated
        spec = ro.get("spec") or {}
        template, selector = spec.get("template"), spec.get("selector")
        if ro["metadata"].get("deletionTimestamp") or not isinstance(template, dict):
            return False
        if not isinstance(selector, dict):
            return False
        want = spec.get("replicas", 1)
        want = want if isinstance(want, int) and want >= 0 else 1
        pod_hash = template_hash(template)
        owned = self._owned(ro)
        new = next((rs for rs in owned if rs["metadata"]["name"] == f"{name}-{pod_hash}"), None)
        if new is None:
            rs = self._replica_set(ro, pod_hash, want, owned)
            kinds.prepare_create(REPLICASET, rs)
            try:
                self.store.create(REPLICASET, rs, self.now_str())
            except ApiError:
                return True  # another object has the name: tried again later
            return True
        if (new["spec"].get("replicas") or 0) != want:
            self._scale(ns, new["metadata"]["name"], want)
        available = (new.get("status") or {}).get("availableReplicas", 0)
        for old in owned:
            if old is not new and available >= want and old["spec"].get("replicas"):
                self._scale(ns, old["metadata"]["name"], 0)
        status = self._status(ro, pod_hash, self._owned(ro), want)
        write_status(self.store, rt, ns, name, status)
        return bool(status["phase"] != "Healthy")

    def _owned(self, ro: Obj) -> list[Obj]:
        return [e.obj for e in controlled(self.store, REPLICASET, ro)]

    @staticmethod
    def _replica_set(ro: Obj, pod_hash: str, replicas: int, owned: list[Obj]) -> Obj:
        meta, spec = ro["metadata"], ro["spec"]
        template = {**spec["template"]}
        tmeta = dict(template.get("metadata") or {})
        tmeta["labels"] = {**(tmeta.get("labels") or {}), HASH_LABEL: pod_hash}
        template["metadata"] = tmeta
        selector = dict(spec["selector"])
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: pod_hash}
        revision = 1 + max(
            (int(rs["metadata"].get("annotations", {}).get(REVISION, "0")) for rs in owned),
            default=0,
        )
        return {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{meta['name']}-{pod_hash}",
                "namespace": meta["namespace"],
                "labels": dict(tmeta["labels"]),
                "annotations": {REVISION: str(revision)},
                "ownerReferences": [controller_ref(ro)],
            },
            "spec": {"replicas": replicas, "selector": selector, "template": template},
        }

    def _scale(self, ns: str, name: str, replicas: int) -> None:
        def mutate(rs: Obj) -> bool:
            if rs["spec"].get("replicas") == replicas:
                return False
            rs["spec"]["replicas"] = replicas
            rs["metadata"]["generation"] = rs["metadata"].get("generation", 1) + 1
            return True

        self.store.update(REPLICASET, ns, name, mutate)

    @staticmethod
    def _status(ro: Obj, pod_hash: str, owned: list[Obj], want: int) -> Obj:
        def total(field: str, rss: list[Obj]) -> int:
            return sum(int((rs.get("status") or {}).get(field, 0)) for rs in rss)

        new = [rs for rs in owned if rs["metadata"]["name"].endswith(f"-{pod_hash}")]
        status: Obj = {
            "replicas": total("replicas", owned),
            "updatedReplicas": total("replicas", new),
            "readyReplicas": total("readyReplicas", owned),
            "availableReplicas": total("availableReplicas", owned),
            "currentPodHash": pod_hash,
            "selector": selectors.selector_string(ro["spec"]["selector"]),
            "observedGeneration": str(ro["metadata"].get("generation", 1)),
        }
        healthy = status["updatedReplicas"] == status["replicas"] == want and (
            status["availableReplicas"] >= want
        )
        status["phase"] = "Healthy" if healthy else "Progressing"
        return status
