"""size_pod is build_patch without its JSON Patch: over generated pods (with and without
pod-level resources, once sized already or not), policies, LimitRanges and recommendations, it
gives the same updates, reason, detail and pod-level update, and raises where build_patch raises.
The updater ranks pods and the conditions read notes through size_pod, so anything it got wrong
would have the updater act on values the webhook never gives."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.policy import Policy
from app.core.quantity import amount as quantity_amount
from app.core.sizing.limitrange import LimitRangeItem, parse_limit_range
from app.core.sizing.patch import PodInvalid, PodPatch, PodSizing, build_patch, size_pod
from app.core.update_mode import UpdateMode
from tests.support.generators import CPU, MEMORY, limit_ranges, lr_objects, lr_pods, pods, policies
from tests.support.pods import apply_strictly, rec, sized_containers

OUTCOMES: dict[str, int] = {}


def sizing_of(patch: PodPatch) -> PodSizing:
    return PodSizing(patch.updates, patch.reason, patch.detail, patch.boosted, patch.pod_level)


def check_same(p: Any, recs: dict[str, Any], pol: Policy, ranges: list[LimitRangeItem]) -> None:
    try:
        patch = build_patch(p, recs, pol, ranges, parse=quantity_amount)
    except PodInvalid as e:
        with pytest.raises(PodInvalid, match=re.escape(str(e))):
            size_pod(p, recs, pol, ranges, parse=quantity_amount)
        return
    sizing = size_pod(p, recs, pol, ranges, parse=quantity_amount)
    assert type(sizing) is PodSizing
    assert sizing == sizing_of(patch)
    OUTCOMES[sizing.reason] = OUTCOMES.get(sizing.reason, 0) + 1
    if patch.operations:  # and the pod as the webhook leaves it: sized by an earlier pass
        patched = apply_strictly(p, patch.operations)
        again = build_patch(patched, recs, pol, ranges, parse=quantity_amount)
        assert size_pod(patched, recs, pol, ranges, parse=quantity_amount) == sizing_of(again)


def recommendations(p: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
    names = [c["name"] for c in sized_containers(p)] + ["gone"]
    targets = data.draw(st.dictionaries(st.sampled_from(names), st.tuples(CPU, MEMORY), min_size=1))
    return {name: rec(cpu, mem) for name, (cpu, mem) in targets.items()}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=pods(), pol=policies(), ranges=limit_ranges(), data=st.data())
def test_size_pod_is_build_patch_without_operations(
    p: dict[str, Any], pol: Policy, ranges: list[LimitRangeItem], data: st.DataObject
) -> None:
    check_same(p, recommendations(p, data), pol, ranges)


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(p=lr_pods(), obj=lr_objects(), pol=policies(), data=st.data())
def test_size_pod_is_build_patch_without_operations_under_limit_ranges(
    p: dict[str, Any], obj: dict[str, Any], pol: Policy, data: st.DataObject
) -> None:
    """Pods with pod-level resources, LimitRanges of type Container and Pod: the pod-level plan
    and the refusals (`unfit`) go through size_pod's own test of whether anything changes."""
    check_same(p, recommendations(p, data), pol, parse_limit_range(obj, quantity_amount))


def test_the_generated_cases_reach_every_outcome() -> None:
    """The properties above are not vacuous: pods are patched, found up to date and refused."""
    if not OUTCOMES:
        test_size_pod_is_build_patch_without_operations_under_limit_ranges()
        test_size_pod_is_build_patch_without_operations()
    assert {"patched", "up-to-date", "unfit"} <= OUTCOMES.keys(), OUTCOMES


@pytest.mark.parametrize(
    "pod",
    [
        ["not", "a", "pod"],
        {"spec": {"containers": "nope"}},
        {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "lots"}}}]}},
    ],
)
def test_size_pod_refuses_what_build_patch_refuses(pod: Any) -> None:
    pol = Policy(name="p", namespace="default", update_mode=UpdateMode.RECREATE)
    check_same(pod, {"app": rec(100, 2**27)}, pol, [])
