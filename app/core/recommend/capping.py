"""Policy limits on a recommendation: container mode, controlled resources, minAllowed/maxAllowed.

The uncapped target is kept so users can see what the policy costs them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.recommend.estimator import Estimate
from app.core.resources import Resources

RESOURCES = ("cpu", "memory")


@dataclass(frozen=True)
class ContainerPolicy:
    """Amounts in millicores / bytes; None means no bound for that resource."""

    container_name: str = "*"
    mode: str = "Auto"  # Auto | Off
    min_allowed: dict[str, int] = field(default_factory=dict)
    max_allowed: dict[str, int] = field(default_factory=dict)
    controlled_resources: tuple[str, ...] = RESOURCES
    controlled_values: str = "RequestsAndLimits"  # or RequestsOnly
    integer_cpu: bool = False  # CPU rounded up to whole cores (app/core/recommend/rounding.py)


@dataclass(frozen=True)
class Recommendation:
    target: Resources
    lower_bound: Resources
    upper_bound: Resources
    uncapped_target: Resources
    reason: str = ""  # how the strategy reached it (and the policy's caps), for the API


def policy_for_container(policies: list[ContainerPolicy], container: str) -> ContainerPolicy:
    """The container's own entry, else the `*` entry, else the default (Auto, no bounds)."""
    for p in policies:
        if p.container_name == container:
            return p
    for p in policies:
        if p.container_name == "*":
            return p
    return ContainerPolicy()


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
