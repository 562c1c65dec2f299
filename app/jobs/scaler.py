"""The proportional scaler job: replicas of each enabled scaler's target from the cluster's size.

Params are re-read from the database every run, so edits take effect on the next one. A missing
target is logged and skipped; the other scalers go on. With a `behavior`, proposals and changes
are kept in the scaler's row, so a restart or a new leader keeps the stabilization windows.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from app.core.scaling.behavior import (
    BehaviorError,
    History,
    Proposal,
    ScaleChange,
    decide,
    parse_behavior,
)
from app.core.scaling.proportional import ParamsError, cluster_status, parse_params, replicas
from app.kube.cluster import ClusterView
from app.kube.scale import ScaleClient, ScaleFailed, TargetMissing
from app.store import audit
from app.store.models import Scaler
from app.store.scalers import enabled_scalers
from app.store.session import DbSession, SessionFactory

log = logging.getLogger(__name__)


ACTOR = "rightsizer/scaler"


class ScalerJob:
    name = "scaler"

    def __init__(
        self,
        sessions: SessionFactory,
        cluster: ClusterView,
        scale: ScaleClient,
        interval: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.sessions, self.cluster, self.scale = sessions, cluster, scale
        self.interval, self.clock = interval, clock

    def run_once(self, still_leader: Callable[[], bool]) -> str:
        if not self.cluster.nodes.wait_synced(timeout=min(self.interval, 30.0)):
            return "node cache not synced yet; nothing done"
        nodes = self.cluster.nodes.items()
        changed = errors = 0
        with self.sessions() as session:
            rows = enabled_scalers(session)
            for row in rows:
                try:
                    if self._one(session, row, nodes, still_leader):
                        changed += 1
                except (ParamsError, BehaviorError, ValueError, TargetMissing) as e:
                    errors += 1
                    self._failed(row, str(e))
                except ScaleFailed as e:
                    # 403, 500, a dropped connection...: this target only; the others go on.
                    errors += 1
                    self._failed(row, f"Kubernetes API error: {e}")
                audit.save_events(session, ACTOR, [])  # this run of the row (no event), committed
        return (
            f"{len(rows)} scalers over {len(nodes)} nodes: {changed} changed, {errors} with errors"
        )

    @staticmethod
    def _failed(row: Scaler, message: str) -> None:
        row.last_message = message
        row.last_run_at = datetime.now(UTC)
        log.warning("scaler %s: %s", row.name, message)

    def _one(
        self,
        session: DbSession,
        row: Scaler,
        nodes: list[dict[str, Any]],
        still_leader: Callable[[], bool],
    ) -> bool:
        now = self.clock()
        params = parse_params(row.params)
        behavior = parse_behavior(row.behavior)
        status = cluster_status(nodes, row.node_selector or None, row.skip_taints or ())
        desired = replicas(params, status)
        current = self.scale.get_replicas(row.target_namespace, row.target_kind, row.target_name)
        history = History.from_json(row.history)
        decision = decide(current, desired, history.proposals, history.changes, now, behavior)
        # The proposal is an observation of the cluster: kept even if the scale call fails below
        # (the error handler commits the row), as HPA keeps its recommendations.
        history.proposals.append(Proposal(now, desired))
        history.prune(now, behavior)
        row.history = history.to_json()
        row.last_proposed, row.last_run_at = desired, datetime.now(UTC)
        row.last_message = (
            f"{status.schedulable_nodes} schedulable nodes, {status.schedulable_cores} cores: "
            f"proposed {desired}, {decision.reason}"
        )
        row.last_applied = current
        if decision.replicas == current or not still_leader():
            return False
        target = f"{row.target_kind} {row.target_namespace}/{row.target_name}"
        # Order: the scale call first, then ONE transaction with the change in the history and
        # its audit event. A failed call thus leaves no trace of a change that never happened.
        # The other order (commit, then call) would record phantom changes whenever the call
        # fails or the leader dies before it, and need a compensating write that can itself be
        # lost. What remains is a leader dying between the API's answer and the commit (no
        # network round trip in between): the next leader starts from the new replica count.
        self.scale.set_replicas(
            row.target_namespace, row.target_kind, row.target_name, decision.replicas
        )
        history.changes.append(ScaleChange(now, decision.replicas - current))
        row.history = history.to_json()
        row.last_applied = decision.replicas
        message = f"scaled from {current} to {decision.replicas} replicas ({row.last_message})"
        log.info("scaler %s: %s %s", row.name, target, message)
        event = audit.Event(
            "scale",
            row.target_kind,
            f"{row.target_namespace}/{row.target_name}",
            message,
            {"scaler": row.name, "from": current, "to": decision.replicas, "proposed": desired},
        )
        # history and audit together, before anything else can fail
        audit.save_events(session, ACTOR, [event])
        self.scale.record_event(
            row.target_namespace, row.target_kind, row.target_name, "RightsizerScaled", message
        )
        return True
