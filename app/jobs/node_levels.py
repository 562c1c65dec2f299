"""The leader's node-levels job: NodeMetrics folded into each node's levels, saved for every
process that serves the scheduler extender (app.webhook.extender) and for the dashboard.

Each run lists NodeMetrics (one LIST: a few thousand small objects), reads the nodes'
allocatable from the node informer, folds each node's sample into its saved levels
(app.core.placement) and saves them in one transaction; a node without metrics for a day loses
its row. Without metrics-server the run says so and saves nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from app.core.placement.samples import fold_samples, node_samples
from app.kube.cluster import ClusterView
from app.store.node_levels import load_node_levels, save_node_levels
from app.store.session import SessionFactory

FORGET_AFTER = 86400.0  # seconds without metrics before a node's levels are deleted


class NodeLevelsJob:
    name = "node-levels"

    def __init__(
        self,
        sessions: SessionFactory,
        cluster: ClusterView,
        interval: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.sessions, self.cluster, self.interval, self.clock = sessions, cluster, interval, clock

    def run_once(self, still_leader: Callable[[], bool]) -> str:
        if not self.cluster.nodes.wait_synced(timeout=min(self.interval, 30.0)):
            return "node cache not synced yet; nothing done"
        samples = node_samples(self.cluster.node_metrics())
        if not samples:
            return "no NodeMetrics (is metrics-server running?); nothing saved"
        with self.sessions() as session:
            previous = {n.name: n for n in load_node_levels(session)}
            levels = fold_samples(previous, self.cluster.node_views(), samples)
            if not still_leader():
                return "no longer leader; nothing saved"
            forgotten = save_node_levels(session, levels, self.clock() - FORGET_AFTER)
        return f"{len(levels)} nodes' levels saved, {forgotten} forgotten"
