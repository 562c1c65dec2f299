"""Policy limits on a recommendation: container mode, controlled resources, minAllowed/maxAllowed.

The uncapped target is kept so users can see what the policy costs them.
"""

from __future__ import annotations

from app.core.recommend.estimator import Estimate
from app.core.recommendation import RESOURCES, ContainerPolicy, Recommendation
from app.core.resources import Resources


def clamp(r: Resources, policy: ContainerPolicy) -> Resources:
    values = {"cpu": r.cpu, "memory": r.memory}
    for res in RESOURCES:
        hi, lo = policy.max_allowed.get(res), policy.min_allowed.get(res)
        if hi is not None:
            values[res] = min(values[res], hi)
        if lo is not None:
            values[res] = max(values[res], lo)
    return Resources(values["cpu"], values["memory"])


def apply_policy(est: Estimate, policy: ContainerPolicy, reason: str = "") -> Recommendation | None:
    """None when the policy turns the container off. The reason gains what the caps changed."""
    if policy.mode == "Off":
        return None
    if not policy.max_allowed and not policy.min_allowed:  # nothing to cap (the common case)
        return Recommendation(est.target, est.lower_bound, est.upper_bound, est.target, reason)
    target = clamp(est.target, policy)
    capped = [
        f"{res} {'raised to minAllowed' if after > before else 'capped at maxAllowed'}"
        for res, before, after in (
            ("CPU", est.target.cpu, target.cpu),
            ("memory", est.target.memory, target.memory),
        )
        if after != before
    ]
    if capped and reason:
        reason += "; " + ", ".join(capped)
    return Recommendation(
        target=target,
        lower_bound=clamp(est.lower_bound, policy),
        upper_bound=clamp(est.upper_bound, policy),
        uncapped_target=est.target,
        reason=reason,
    )
