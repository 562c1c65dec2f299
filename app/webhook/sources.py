"""The webhook's view of the cluster: LimitRanges, controller owners, nodes and DaemonSets, watched
in the background.

Each server process (gunicorn worker) starts its own informers on its first review, like the
database cache: threads do not survive a fork. Until they have listed, and whenever the cluster
cannot be reached, the webhook goes on without them: no LimitRange capping, no cap to fit a node,
and pods resolved to workloads from their own ownerReferences only.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from app.kube.client import api_client
from app.kube.daemonsets import DaemonSetCache
from app.kube.limitranges import LimitRangeCache
from app.kube.nodelabels import NodeLabelCache
from app.kube.owners import OwnerCache
from app.kube.scalable import ScalableKinds
from app.kube.version import server_minor

log = logging.getLogger(__name__)


def should_watch(setting: bool | str, kubeconfig: str) -> bool:
    """`auto` watches when running in a pod or when a kubeconfig is configured."""
    if setting == "auto":
        return bool(os.environ.get("KUBERNETES_SERVICE_HOST") or kubeconfig)
    return bool(setting)


class ClusterSources:
    """Builds the informers in the process that first needs them; the Webhook reads
    `limit_ranges` and `owners` once they run (both None until then, or when they cannot)."""

    def __init__(self, kubeconfig: str = "", api_client: Any = None) -> None:
        self.kubeconfig = kubeconfig
        self.api_client = api_client  # tests pass one; a server builds its own per process
        self.limit_ranges: LimitRangeCache | None = None
        self.owners: OwnerCache | None = None
        self.nodes: NodeLabelCache | None = None  # node labels: DaemonSets per node group
        self.daemonsets: DaemonSetCache | None = None  # their templates: what fits a node
        self.scalable: ScalableKinds | None = None  # listed in the background, never per review
        self.release: int | None = None  # the API server's minor version: rules that differ
        self._pid = 0
        self._lock = threading.Lock()

    def start(self, wait: float = 0.0) -> bool:
        """Starts the informers of this process unless they run; True when this call did."""
        if self._pid == os.getpid():
            return False
        with self._lock:
            if self._pid == os.getpid():
                return False
            self._pid = os.getpid()
            try:
                api = self.api_client or api_client(self.kubeconfig or None)
                self.limit_ranges = LimitRangeCache(api).start()
                self.owners = OwnerCache(api).start()
                self.nodes = NodeLabelCache(api).start()
                self.daemonsets = DaemonSetCache(api).start()
                self.scalable = ScalableKinds(api).start()
                self.release = server_minor(api)
            except Exception as e:
                log.warning(
                    "webhook cannot watch the cluster (%s): no LimitRange capping, and pods are "
                    "resolved to workloads from their ownerReferences only",
                    e,
                )
                return True
        if wait > 0 and self.limit_ranges is not None:
            self.limit_ranges.wait_synced(wait)
        if wait > 0 and self.nodes is not None:  # a daemon pod's node group needs its labels
            self.nodes.wait_synced(wait)
        return True

    def stop(self) -> None:
        for cache in (self.limit_ranges, self.owners, self.scalable, self.nodes, self.daemonsets):
            if cache is not None:
                cache.stop()
        self._pid = 0
