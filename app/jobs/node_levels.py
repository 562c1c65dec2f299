"""The leader's node-levels job: NodeMetrics folded into each node's levels, saved for every
process that serves the scheduler extender (app.webhook.extender) and for the dashboard.

Each run lists NodeMetrics (one LIST: a few thousand small objects), reads the nodes'
allocatable from the node informer, folds each node's sample into its saved levels
(app.core.placement) and saves them in one transaction; a node without metrics for a day loses
its row. Each node's levels ahead (the next hours) come from the daily profiles of the pods it
runs, which the recommender keeps in the same process (app.core.placement.ahead). In the same
transaction, at most every 5 minutes, a point of the cluster's spread of
levels over the nodes sampled (app.store.node_spread: the Nodes page's chart). Without
metrics-server the run says so and saves nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from app.core.placement.ahead import with_ahead
from app.core.placement.profile import Profiles
from app.core.placement.samples import fold_samples, node_samples
from app.core.placement.spread import spread_point
from app.kube.cluster import ClusterView
from app.store.node_levels import load_node_levels, save_node_levels
from app.store.node_spread import record_spread
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
        profiles: Profiles | None = None,
        ahead_hours: int = 0,
    ) -> None:
        self.sessions, self.cluster, self.interval, self.clock = sessions, cluster, interval, clock
        # the workloads' daily profiles the recommender keeps, for each node's levels ahead
        self.profiles, self.ahead_hours = profiles, ahead_hours

    def run_once(self, still_leader: Callable[[], bool]) -> str:
        if not self.cluster.nodes.wait_synced(timeout=min(self.interval, 30.0)):
            return "node cache not synced yet; nothing done"
        samples = node_samples(self.cluster.node_metrics())
        if not samples:
            return "no NodeMetrics (is metrics-server running?); nothing saved"
        with self.sessions() as session:
            previous = {n.name: n for n in load_node_levels(session)}
            levels = fold_samples(previous, self.cluster.node_views(), samples)
            if self.profiles is not None and self.ahead_hours:
                running = (
                    (p.node_name, p.namespace, p.name, p.start_time)
                    for p in self.cluster.pods.items()
                    if p.node_name and p.is_live
                )
                levels = with_ahead(levels, running, self.profiles, self.ahead_hours)
            if not still_leader():
                return "no longer leader; nothing saved"
            now = self.clock()
            forgotten = save_node_levels(session, levels, now - FORGET_AFTER)
            point = spread_point(levels)
            if point is not None:
                record_spread(session, point, now)
        return f"{len(levels)} nodes' levels saved, {forgotten} forgotten"
