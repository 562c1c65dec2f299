"""What the recommender says for a container (`Recommendation`) and what a policy allows it to say
(`ContainerPolicy`): read by the store, the webhook, the updater, the API and the CLI alike, so they
live at the top of app/core, apart from the recommender that computes them
(app/core/recommend/capping.py applies the policy)."""

from __future__ import annotations

from dataclasses import dataclass, field

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
