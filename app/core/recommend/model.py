"""The recommender's helpers shared by its model (array_model.py, ArrayModel) and its readers:
the idle time after which a workload container's history is dropped (VPA's memory aggregation
window, 8 days). The workload a container's history belongs to
is app.core.workload_key's WorkloadKey.
"""

from __future__ import annotations

IDLE_AFTER_SECONDS = 8 * 86400.0
