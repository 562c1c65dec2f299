"""A pod's level: the usage rightsizer predicts for it, in millicores and bytes.

Per container (app containers and sidecars, which run beside them: the init containers that run
before them do not add to the node's usage), its workload's recommendation target when rightsizer
has one for it, else its requests. Never its limits: a limit is a ceiling the pod may never reach,
and most pods set none. A request of 0 (unset) predicts nothing, which is what the default
scheduler assumes of such a pod too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.recommendation import Recommendation
from app.core.sizing.node_fit import Amounts, spec_requests


def pod_level(spec: Mapping[str, Any], recommendations: Mapping[str, Recommendation]) -> Amounts:
    """(millicores, bytes) the pod is predicted to use: see the module docstring."""
    cpu = memory = 0
    for name, (cpu_request, memory_request) in spec_requests(spec).items():
        rec = recommendations.get(name)
        if rec is not None:
            cpu += rec.target.cpu
            memory += rec.target.memory
        else:
            cpu += cpu_request
            memory += memory_request
    return cpu, memory
