"""What rightsizer would change of a workload's containers, and why not the rest: the scope of
the savings, waste and risk the API, the dashboard and the demo show.

A number is shown only for what rightsizer acts on. Per container and resource (cpu, memory),
left alone, with the reason, are:

- every resource of a namespace never sized (kube-system, rightsizer's own,
  RIGHTSIZER_EXCLUDED_NAMESPACES: the webhook configuration keeps their pods out and the updater
  leaves them alone);
- every resource of a container whose container policy says `mode: Off`;
- a resource not in the container policy's `controlledResources`;
- a resource another controller owns (a HorizontalPodAutoscaler scaling on it: the recommender's
  `conflicts`, which the webhook and the updater leave alone too).

The workload's policy decides (app.core.policy precedence). A workload no policy governs, or whose
policy's updateMode is Off, is changed by nothing today: its numbers are what its policy (or a
default policy: every container, both resources) would change once it acts, and are labelled so
(`basis`). Pure: the caller passes the policy, the conflicts and the never-sized namespaces.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.core.policy import Policy
from app.core.recommend.estimator import pod_minimum
from app.core.recommend.rounding import round_up_to_scale
from app.core.recommend.settings import RecommenderSettings
from app.core.recommend.strategies import chosen
from app.core.recommend.strategies.base import tuned_settings
from app.core.recommendation import policy_for_container
from app.core.savings import Savings

ALWAYS_EXCLUDED = ("kube-system",)  # never sized, whatever RIGHTSIZER_EXCLUDED_NAMESPACES says
RESOURCES = ("cpu", "memory")

# Workload.basis: what the numbers assume
ACTING = "policy"  # its policy acts (updateMode Initial, Recreate, InPlace...)
POLICY_OFF = "policyOff"  # its policy's updateMode is Off: what it would change once it acts
DEFAULT = "defaultPolicy"  # no policy: what a default policy (all containers, cpu and memory) would

BASIS_LABELS = {  # "counting only ..."
    ACTING: "what its policy changes",
    POLICY_OFF: "what its policy would change once it acts (its updateMode is Off: an estimate)",
    DEFAULT: "what a default policy would change (no policy governs it: an estimate)",
}


def basis(policy: Policy | None) -> str:
    if policy is None:
        return DEFAULT
    return ACTING if policy.update_mode.sizes_new_pods else POLICY_OFF


def left_alone(
    namespace: str,
    container: str,
    policy: Policy | None,
    conflicts: Mapping[str, str],
    never_sized: Mapping[str, str],
) -> dict[str, str]:
    """resource -> why rightsizer leaves it alone, for one container; {} when it sizes both.
    `never_sized`: namespace -> why (app.core.policy_warnings.never_sized_reasons)."""
    why = never_sized.get(namespace)
    if why is not None:
        return dict.fromkeys(RESOURCES, f"namespace {namespace} is never sized ({why})")
    rules = policy_for_container(list(policy.container_policies) if policy else [], container)
    if rules.mode == "Off":
        return dict.fromkeys(RESOURCES, "its container policy's mode is Off")
    out = {}
    for r in RESOURCES:
        if r not in rules.controlled_resources:
            out[r] = f"{r} is not in its controlledResources"
        elif r in conflicts:
            out[r] = conflicts[r]
    return out


def in_scope(s: Savings, excluded: Mapping[str, str]) -> Savings:
    """`s` over the resources rightsizer would change (the others count 0)."""
    return Savings(0 if "cpu" in excluded else s.cpu, 0 if "memory" in excluded else s.memory)


@dataclass(frozen=True)
class Shortfall:
    """A resource whose pods ask for less than recommended, over all its pods (positive)."""

    resource: str
    lacking: int
    # the recommendation is the recommender's pod minimum (25m CPU, 250Mi memory per pod, split
    # among its containers), not what the pods were seen to use: not a risk of running short
    at_pod_minimum: bool


def shortfalls(
    savings: Savings, target: tuple[int, int], pod_minimum: tuple[int, int]
) -> list[Shortfall]:
    """The negative savings of one container (in scope), each marked when its target is the pod
    minimum's share: raised to the floor, not what the container uses."""
    out = []
    for i, (r, saved) in enumerate(zip(RESOURCES, (savings.cpu, savings.memory), strict=True)):
        if saved < 0:
            out.append(Shortfall(r, -saved, target[i] <= pod_minimum[i]))
    return out


def pod_minimum_share(
    policy: Policy | None, containers: int, settings: RecommenderSettings
) -> tuple[int, int]:
    """A container's share of the recommender's pod minimum (25m CPU, 250Mi memory by default,
    split among the pod's `containers`), under the settings its policy's strategy tunes, rounded
    up as recommendations are (app.core.recommend.rounding): a target at or below it was raised to
    the floor."""
    if policy is not None:
        strategy = chosen(policy.recommender)
        settings = tuned_settings(settings, getattr(strategy, "SPEC", ()), strategy.params)
    floor = pod_minimum(containers, settings)
    return (
        round_up_to_scale(floor.cpu, max(int(settings.round_cpu_millicores), 1)),
        round_up_to_scale(floor.memory, max(int(settings.round_memory_bytes), 1)),
    )
