"""The planning rules of VPA 1.7's update fields, on pod views and core values: which qualifying
pods evictionRequirements admit (scaling_direction_pod_eviction_admission.go), evictAfterOOMSeconds
per policy, pods left to their startup boost, the InPlace mode's infeasible attempts and who may
skip the disruption budget."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.pods import ContainerResources, PodView
from app.core.policy import Policy
from app.core.recommendation import Recommendation
from app.core.resources import Resources
from app.core.sizing.boost import BOOST_ANNOTATION
from app.core.sizing.inplace import InfeasibleAttempts, asks_for_less, skips_budget
from app.core.sizing.plan import workload_candidates
from app.core.sizing.priority import ContainerView, UpdaterSettings
from app.core.sizing.requirements import admits, changes
from app.core.update_mode import UpdateMode
from app.core.update_policy import TARGET_HIGHER, TARGET_LOWER, EvictionRequirement
from app.core.workload_key import WorkloadKey

W = WorkloadKey("shop", "Deployment", "web")
MI = 1024 * 1024
NOW = 1_000_000.0  # 1970-01-12T13:46:40Z


def pod_json(
    name: str, cpu: str = "100m", started: str = "1970-01-01T00:00:00+00:00"
) -> dict[str, Any]:
    resources = {"requests": {"cpu": cpu, "memory": "100Mi"}}
    return {
        "metadata": {"name": name, "namespace": "shop", "uid": f"uid-{name}"},
        "spec": {"nodeName": "n1", "containers": [{"name": "app", "resources": resources}]},
        "status": {
            "phase": "Running",
            "startTime": started,
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def rec(cpu: int, memory: int) -> Recommendation:
    r = Resources(cpu, memory)
    return Recommendation(r, Resources(cpu // 2, memory // 2), Resources(cpu * 2, memory * 2), r)


UP = (EvictionRequirement(("cpu", "memory"), TARGET_HIGHER),)
DOWN_MEMORY = (EvictionRequirement(("memory",), TARGET_LOWER),)
FULL = {"app": ContainerResources(1000, 1024 * MI)}


def view(requests: dict[str, int], target: dict[str, int], name: str = "app") -> ContainerView:
    return ContainerView(name, requests, target)


def test_no_requirement_admits_everything() -> None:
    assert admits((), [view({"cpu": 1000}, {"cpu": 100})], FULL)


def test_a_requirement_holds_when_one_of_its_resources_changes_that_way() -> None:
    up_cpu = view({"cpu": 1000, "memory": 1024 * MI}, {"cpu": 2000, "memory": 512 * MI})
    assert admits(UP, [up_cpu], FULL)  # cpu goes up: enough
    down = view({"cpu": 1000, "memory": 1024 * MI}, {"cpu": 500, "memory": 512 * MI})
    assert not admits(UP, [down], FULL)
    assert admits(DOWN_MEMORY, [down], FULL)


def test_every_requirement_must_hold_for_the_same_container() -> None:
    both = UP + DOWN_MEMORY
    mixed = view({"cpu": 1000, "memory": 1024 * MI}, {"cpu": 2000, "memory": 512 * MI})
    assert admits(both, [mixed], FULL)
    app = view({"cpu": 1000, "memory": 1024 * MI}, {"cpu": 2000, "memory": 1024 * MI})
    side = view({"cpu": 100, "memory": 100 * MI}, {"cpu": 100, "memory": 50 * MI}, "side")
    resources = {**FULL, "side": ContainerResources(100, 100 * MI)}
    assert not admits(both, [app, side], resources)  # neither container meets both


def test_a_container_without_a_cpu_or_memory_request_admits_the_pod() -> None:
    down = view({"cpu": 1000}, {"cpu": 500})
    assert admits(UP, [down], {"app": ContainerResources(cpu_request=1000)})


def test_a_resource_the_update_does_not_set_never_counts_as_changed() -> None:
    # VPA reads a resource missing from its target as 0, i.e. "lower"; here it is no change.
    assert not changes(1000, None, TARGET_LOWER)
    memory_only = view({"memory": 1024 * MI}, {"memory": 1024 * MI})
    assert not admits((EvictionRequirement(("cpu",), TARGET_LOWER),), [memory_only], FULL)


@given(st.integers(0, 10**6), st.integers(0, 10**6))
def test_a_change_is_higher_or_lower_or_none(request: int, target: int) -> None:
    up, down = changes(request, target, TARGET_HIGHER), changes(request, target, TARGET_LOWER)
    assert not (up and down)
    assert (up or down) == (request != target)


def candidates(pods: list[PodView], policy: Policy, cpu: int = 500) -> list[str]:
    found = workload_candidates(
        W, pods, policy, {"app": rec(cpu, 100 * MI)}, None, (), NOW, UpdaterSettings()
    )
    return [c.pod.name for c in found]


POLICY = Policy("p", "shop", "Deployment", "web", update_mode=UpdateMode.RECREATE)


def test_an_upscale_only_policy_takes_the_small_pod_and_leaves_the_big_one() -> None:
    small = PodView.parse(pod_json("small", cpu="10m"))
    big = PodView.parse(pod_json("big", cpu="2"))
    assert candidates([small, big], POLICY) == ["small", "big"]
    assert candidates([small, big], replace(POLICY, eviction_requirements=UP)) == ["small"]


def oom_pod(after_seconds: int) -> PodView:
    doc = pod_json("oom", cpu="100m", started="1970-01-12T13:46:00+00:00")  # a young pod
    doc["status"]["containerStatuses"] = [
        {
            "name": "app",
            "restartCount": 1,
            "lastState": {
                "terminated": {
                    "reason": "OOMKilled",
                    "startedAt": "1970-01-12T13:40:00+00:00",
                    "finishedAt": f"1970-01-12T13:40:{after_seconds:02d}+00:00",
                }
            },
        }
    ]
    return PodView.parse(doc)


def test_evict_after_oom_seconds_replaces_the_global_quick_oom_time() -> None:
    quick = oom_pod(30)  # OOM-killed 30 s after it started, young and within its range
    assert candidates([quick], POLICY, cpu=150) == ["oom"]  # 30 s < 600 s: a quick OOM
    strict = replace(POLICY, evict_after_oom_seconds=10)
    assert candidates([quick], strict, cpu=150) == []  # 30 s is not quick for this policy


def test_a_pod_carrying_its_startup_boost_is_left_to_it() -> None:
    doc = pod_json("boosted", cpu="2")
    doc["metadata"]["annotations"] = {
        BOOST_ANNOTATION: json.dumps({"app": {"requests": {"cpu": "500m"}}})
    }
    assert candidates([PodView.parse(doc)], POLICY) == []


@pytest.mark.parametrize(
    ("mode", "own", "global_", "skips"),
    [
        ("InPlace", None, True, True),
        ("InPlaceOrRecreate", None, True, True),
        ("InPlaceOrRecreate", False, True, False),
        ("InPlace", True, False, True),
        ("Recreate", True, True, False),  # evictions never skip it
    ],
)
def test_who_skips_the_disruption_budget(
    mode: str, own: bool | None, global_: bool, skips: bool
) -> None:
    policy = replace(POLICY, update_mode=UpdateMode.of(mode), in_place_skip_disruption_budget=own)
    settings = UpdaterSettings(in_place_skip_disruption_budget=global_)
    assert skips_budget(policy, settings) is skips


def test_an_infeasible_attempt_blocks_until_something_is_asked_for_less() -> None:
    attempts = InfeasibleAttempts()
    attempts.record("uid-1", {"app": {"cpu": 500, "memory": 100}})
    assert attempts.blocks("uid-1", {"app": {"cpu": 500, "memory": 100}})
    assert attempts.blocks("uid-1", {"app": {"cpu": 900, "memory": 100}})  # more: still no
    assert not attempts.blocks("uid-2", {"app": {"cpu": 1}})
    assert not attempts.blocks("uid-1", {"app": {"cpu": 900, "memory": 99}})  # less memory
    assert not attempts.blocks("uid-1", {"app": {"cpu": 900, "memory": 100}})  # cleared
    attempts.record("uid-3", {"app": {"cpu": 1}})
    attempts.keep_only(["uid-1"])
    assert attempts.attempts == {}


def test_asks_for_less_compares_container_by_container() -> None:
    tried: dict[str, Any] = {"app": {"cpu": 500}, "side": {"cpu": 100}}
    assert not asks_for_less(tried, {"app": {"cpu": 500}, "other": {"cpu": 1}})
    assert asks_for_less(tried, {"side": {"cpu": 50}})
