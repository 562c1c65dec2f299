"""The DaemonSets' pod templates, kept in memory for the webhook by a list+watch informer: what
their pods request and where they may run, so that a pod is never sized beyond what a node has
left once its DaemonSets run there (app.core.sizing.node_fit). Only that part of each template is
kept."""

from __future__ import annotations

import time

from kubernetes import client

from app.core.sizing.node_fit import DaemonTemplate, daemon_template
from app.kube.informer import Informer, Obj

PLACEMENT = ("nodeSelector", "affinity", "tolerations")
STARTUP = 30.0  # seconds after its start in which a review may wait for the first listing


def _container(c: Obj) -> Obj:
    resources = c.get("resources") or {}
    return {
        "name": c.get("name"),
        "restartPolicy": c.get("restartPolicy"),
        "resources": {"requests": resources.get("requests") or {}},
    }


def trim_daemonset(obj: Obj) -> Obj:
    meta = obj.get("metadata") or {}
    pod = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    kept: Obj = {k: pod[k] for k in PLACEMENT if k in pod}
    for key in ("containers", "initContainers"):
        items = pod.get(key)
        if isinstance(items, list):
            kept[key] = [_container(c) for c in items if isinstance(c, dict)]
    return {
        "metadata": {k: meta.get(k) for k in ("namespace", "name", "resourceVersion")},
        "spec": {"template": {"spec": kept}},
    }


class DaemonSetCache:
    """`templates()`: every DaemonSet's DaemonTemplate, as last listed and watched."""

    def __init__(self, api: client.ApiClient, watch_timeout: int = 300) -> None:
        apps = client.AppsV1Api(api)
        self._started = time.monotonic()
        self.informer = Informer(
            "webhook-daemonsets",
            apps.list_daemon_set_for_all_namespaces,
            watch_timeout=watch_timeout,
            transform=trim_daemonset,
        )

    @property
    def version(self) -> str:
        return self.informer.resource_version

    @property
    def synced(self) -> bool:
        return self.informer.synced.is_set()

    def templates(self) -> list[DaemonTemplate]:
        return [t for obj in self.informer.items() if (t := daemon_template(obj)) is not None]

    def start(self) -> DaemonSetCache:
        self._started = time.monotonic()
        self.informer.start()
        return self

    def wait_listed(self, timeout: float) -> bool:
        """Waits up to `timeout` for the first listing, only in the cache's first STARTUP
        seconds (as app.kube.nodelabels.NodeLabelCache.wait_listed)."""
        if self.synced:
            return True
        left = self._started + STARTUP - time.monotonic()
        return left > 0 and self.informer.wait_synced(min(timeout, left))

    def stop(self) -> None:
        self.informer.stop()
