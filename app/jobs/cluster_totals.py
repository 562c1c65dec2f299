"""The recommender's last step: its cluster's totals for the fleet view (app.store.cluster_totals),
summed from the rows the run left, over the policies the run read and the scope the fleet view
and the overview use (Scoper: the never-sized namespaces and pod minimum of these settings).

A failed write is logged and fails nothing: the run's recommendations are saved already, and the
previous totals stay with their own `as_of` (the fleet view shows how old they are).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from app.core.policy import PolicyIndex
from app.core.policy_warnings import never_sized_reasons
from app.settings import Settings
from app.store.cluster_totals import write_totals
from app.store.savings import Scoper
from app.store.session import DbSession

log = logging.getLogger(__name__)


class TotalsWriter:
    def __init__(self, settings: Settings) -> None:
        cluster = settings.cluster
        self.never_sized = never_sized_reasons(cluster.namespace, cluster.excluded_namespaces)
        self.model = settings.recommender.model

    def write(
        self,
        session: DbSession,
        policies: PolicyIndex,
        stamp: datetime,
        still_leader: Callable[[], bool],
    ) -> bool:
        """True when this run's totals were stored (not when no longer leader, a later run's
        are there, or the write failed: logged)."""
        if not still_leader():
            return False
        try:
            return write_totals(session, Scoper(policies, self.never_sized, self.model), stamp)
        except Exception:
            log.exception(
                "could not write the cluster's totals for the fleet view; it keeps showing the "
                "previous ones, with their time"
            )
            return False
