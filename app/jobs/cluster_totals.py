"""The recommender's last step: its cluster's totals for the fleet view (app.store.cluster_totals),
summed from the rows the run left, over the policies the run read and the scope the fleet view
and the overview use (Scoper: the never-sized namespaces and pod minimum of these settings).

At most every `EVERY` seconds (5 minutes, by the run's clock; the first run of each leadership
term always): summing reads every recommendation row of the cluster back (0.39 s a run at
15,000 containers on PostgreSQL, a tenth of a recommender run at 150,000 pods), and a fleet view
a few minutes old, with its `as_of`, is what a fleet view needs.

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

EVERY = 300.0  # seconds between two writes of the totals


class TotalsWriter:
    def __init__(self, settings: Settings) -> None:
        cluster = settings.cluster
        self.never_sized = never_sized_reasons(cluster.namespace, cluster.excluded_namespaces)
        self.model = settings.recommender.model
        self.written_at: float | None = None  # the run time of the last totals stored; None: none

    def write(
        self,
        session: DbSession,
        policies: PolicyIndex,
        stamp: datetime,
        still_leader: Callable[[], bool],
    ) -> bool:
        """True when this run's totals were stored (not when stored less than EVERY seconds
        before, no longer leader, a later run's are there, or the write failed: logged)."""
        at = stamp.timestamp()
        if self.written_at is not None and 0 <= at - self.written_at < EVERY:
            return False
        if not still_leader():
            return False
        try:
            written = write_totals(session, Scoper(policies, self.never_sized, self.model), stamp)
        except Exception:
            log.exception(
                "could not write the cluster's totals for the fleet view; it keeps showing the "
                "previous ones, with their time"
            )
            return False
        if written:
            self.written_at = at
        return written
