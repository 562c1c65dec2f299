"""The recommender's helpers shared by its model (array_model.py, ArrayModel) and its readers:
the idle time after which a workload container's history is dropped (VPA's memory aggregation
window, 8 days), and the rounding of an estimate. The workload a container's history belongs to
is app.core.workload_key's WorkloadKey.
"""

from __future__ import annotations

from app.core.recommend.estimator import Estimate
from app.core.recommend.rounding import integer_cpu, rounded
from app.core.recommend.settings import RecommenderSettings
from app.core.recommendation import ContainerPolicy

IDLE_AFTER_SECONDS = 8 * 86400.0


def _rounded(est: Estimate, policy: ContainerPolicy, s: RecommenderSettings) -> Estimate:
    est = rounded(est, int(s.round_cpu_millicores), int(s.round_memory_bytes))
    return integer_cpu(est) if policy.integer_cpu else est
