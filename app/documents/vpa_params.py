"""VPA 1.7's per-VPA recommender settings -> a policy's `vpa` recommenderParams, on import.

vertical-pod-autoscaler 1.7 (pkg/apis/autoscaling.k8s.io/v1/types.go, behind its PerVPAConfig
gate) lets a container policy set `oomBumpUpRatio` and `oomMinBumpUp` (Quantities),
`memoryAggregationIntervalSeconds` and `memoryAggregationIntervalCount` (whole numbers); its
recommender reads them per aggregate (pkg/recommender/model/aggregate_container_state.go
`UpdateFromPolicy`: a Quantity as MilliValue() / 1000). rightsizer's equivalents are the `vpa`
strategy's parameters, set per policy: those of the `*` entry become them; on a named container
(or with another strategy, which has no such parameter) they are reported and left out.
"""

from __future__ import annotations

import math
from typing import Any

from app.core.quantity import parse_quantity

# VPA container policy field -> the `vpa` parameter, and how its value reads
PER_VPA_FIELDS = {
    "oomBumpUpRatio": "oomBumpUpRatio",
    "oomMinBumpUp": "oomMinBumpUpBytes",
    "memoryAggregationIntervalSeconds": "memoryAggregationIntervalSeconds",
    "memoryAggregationIntervalCount": "memoryAggregationIntervalCount",
}
QUANTITIES = ("oomBumpUpRatio", "oomMinBumpUp")


def _value(field: str, raw: Any) -> Any:
    """The parameter's value: a Quantity as VPA reads it (MilliValue() / 1000, for the ratio
    and the bytes alike), anything else as written (the policy's validation names it if bad)."""
    if field not in QUANTITIES or isinstance(raw, bool) or not isinstance(raw, str | int | float):
        return raw
    try:
        milli = math.ceil(parse_quantity(str(raw)) * 1000)  # MilliValue() rounds up
    except ValueError:
        return raw
    value = float(milli) / 1000
    return value if field == "oomBumpUpRatio" else int(value)


def per_vpa_params(
    policy: dict[str, Any], where: str, recommender: str | None, warnings: list[str]
) -> dict[str, Any]:
    """The recommenderParams of one VPA container policy (`where` names it for warnings)."""
    given = [f for f in PER_VPA_FIELDS if f in policy]
    if not given:
        return {}
    if policy.get("containerName", "*") != "*" or recommender not in (None, "vpa"):
        why = (
            "rightsizer sets it for the whole policy, from the `*` entry only"
            if recommender in (None, "vpa")
            else f"recommender {recommender} has no such parameter"
        )
        warnings += [f"{where}.{f} was left out ({why})" for f in given]
        return {}
    return {PER_VPA_FIELDS[f]: _value(f, policy[f]) for f in given}
