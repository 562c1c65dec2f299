"""Who owns a pod's controller, from in-memory caches: the webhook's owner lookup.

A pod names only its direct controller. A ReplicaSet named `<deployment>-<pod-template-hash>`
resolves without any cache (app.core.owners), but a ReplicaSet without that label, one an Argo
Rollout owns, a Job (whose CronJob is named nowhere in the pod) or a Deployment an operator's
custom resource owns needs the controllers' own ownerReferences, followed up the chain as the
recommender follows them. The webhook must not call the API server per admission, so each process
watches the six well-known kinds (ReplicaSets, Deployments, StatefulSets, DaemonSets, Jobs,
CronJobs) and keeps only their names and controller reference: about 200 bytes per object, a few
MB even at 150000 pods.

A Job created a moment ago may reach the pod's admission before its watch event reaches us. The
CronJob controller names its Jobs `<cronjob>-<scheduled time in minutes>`, so a Job missing from
the cache whose name is that of a known CronJob plus a number is resolved to that CronJob.
"""

from __future__ import annotations

import re
from typing import Any

from kubernetes import client

from app.kube.informer import Informer, Obj

CRONJOB_SUFFIX = re.compile(r"(?P<cronjob>.+)-(?P<minutes>[0-9]+)")  # with fullmatch()


def trim_owned(obj: Obj) -> Obj:
    """Name, namespace and the controller reference only."""
    meta = obj.get("metadata") or {}
    out: dict[str, Any] = {k: meta[k] for k in ("name", "namespace") if k in meta}
    refs = meta.get("ownerReferences")
    if isinstance(refs, list):
        ctl = [
            {
                "apiVersion": r.get("apiVersion"),
                "kind": r.get("kind"),
                "name": r.get("name"),
                "controller": True,
            }
            for r in refs
            if isinstance(r, dict) and r.get("controller")
        ]
        if ctl:
            out["ownerReferences"] = ctl[:1]
    return {"metadata": out}


class OwnerCache:
    """`cache(namespace, kind, name)` -> the trimmed ReplicaSet or Job, or None (app.core.owners'
    `Lookup`)."""

    def __init__(self, api: client.ApiClient, watch_timeout: int = 300) -> None:
        apps, batch = client.AppsV1Api(api), client.BatchV1Api(api)
        self.informers: dict[str, Informer[Obj]] = {
            "ReplicaSet": Informer(
                "webhook-replicasets",
                apps.list_replica_set_for_all_namespaces,
                watch_timeout=watch_timeout,
                transform=trim_owned,
            ),
            "Deployment": Informer(
                "webhook-deployments",
                apps.list_deployment_for_all_namespaces,
                watch_timeout=watch_timeout,
                transform=trim_owned,
            ),
            "StatefulSet": Informer(
                "webhook-statefulsets",
                apps.list_stateful_set_for_all_namespaces,
                watch_timeout=watch_timeout,
                transform=trim_owned,
            ),
            "DaemonSet": Informer(
                "webhook-daemonsets",
                apps.list_daemon_set_for_all_namespaces,
                watch_timeout=watch_timeout,
                transform=trim_owned,
            ),
            "Job": Informer(
                "webhook-jobs",
                batch.list_job_for_all_namespaces,
                watch_timeout=watch_timeout,
                transform=trim_owned,
            ),
            "CronJob": Informer(
                "webhook-cronjobs",
                batch.list_cron_job_for_all_namespaces,
                watch_timeout=watch_timeout,
                transform=trim_owned,
            ),
        }

    def __call__(self, namespace: str, kind: str, name: str) -> dict[str, Any] | None:
        informer = self.informers.get(kind)
        if informer is None:
            return None
        found = informer.get(namespace, name)
        if found is not None or kind != "Job":
            return found
        m = CRONJOB_SUFFIX.fullmatch(name)
        if m and self.informers["CronJob"].get(namespace, m["cronjob"]) is not None:
            owner = {"kind": "CronJob", "name": m["cronjob"], "controller": True}
            return {"metadata": {"name": name, "namespace": namespace, "ownerReferences": [owner]}}
        return None

    @property
    def synced(self) -> bool:
        return all(i.synced.is_set() for i in self.informers.values())

    def start(self) -> OwnerCache:
        for i in self.informers.values():
            i.start()
        return self

    def wait_synced(self, timeout: float) -> bool:
        return all(i.wait_synced(timeout) for i in self.informers.values())

    def stop(self) -> None:
        for i in self.informers.values():
            i.stop(join=False)
        for i in self.informers.values():
            i.join(2)
