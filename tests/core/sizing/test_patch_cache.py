"""PatchCache: the cached answer is build_patch's answer for every input, and any input that
changes misses (hypothesis over generated pods, policies, recommendations and LimitRanges)."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.policy import Policy
from app.core.quantity import parse_amount
from app.core.recommendation import Recommendation
from app.core.sizing.boost import BOOST_ANNOTATION, BoostOptions
from app.core.sizing.limitrange import LimitRangeItem
from app.core.sizing.patch import UPDATES_ANNOTATION, PodInvalid, PodPatch, build_patch
from app.core.sizing.patch_cache import NO_RECOMMENDATIONS, PatchCache, pod_inputs
from app.core.update_policy import StartupBoost
from tests.support.generators import CPU, MEMORY, NAMES, limit_ranges, pods, policies
from tests.support.pods import apply_strictly, container, pod, policy, rec

BOOST = BoostOptions(max_cpu=4000)


def uncached(
    p: Any,
    recs: Any,
    pol: Policy,
    ranges: list[LimitRangeItem],
    excluded: Any,
) -> PodPatch | str:
    try:
        return build_patch(p, recs, pol, ranges, parse=parse_amount, excluded=excluded, boost=BOOST)
    except PodInvalid as e:
        return f"PodInvalid: {e}"


def cached(
    cache: PatchCache,
    p: Any,
    recs: Any,
    pol: Policy,
    ranges: list[LimitRangeItem],
    excluded: Any,
) -> PodPatch | str:
    try:
        return cache.build_patch(p, recs, pol, ranges, excluded=excluded)
    except PodInvalid as e:
        return f"PodInvalid: {e}"


@st.composite
def boosted_policies(draw: st.DrawFn) -> Policy:
    p = draw(policies())
    if draw(st.booleans()):
        factor = draw(st.integers(1, 4))
        p = replace(p, startup_boost=StartupBoost("Factor", factor=factor, duration_seconds=10))
    return p


@st.composite
def recommendation_sets(draw: st.DrawFn) -> dict[str, Recommendation]:
    names = draw(st.lists(st.sampled_from(NAMES), max_size=4, unique=True))
    return {n: rec(draw(CPU), draw(MEMORY)) for n in names}


@st.composite
def variants(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    """`base` as another pod of the same template, or with one input of build_patch changed."""
    p = copy.deepcopy(base)
    p["metadata"]["generateName"] = draw(st.sampled_from(["web-5d9c7b8f4-", "web-abc-"]))
    change = draw(
        st.sampled_from(
            ["none", "none", "request", "limit-type", "updates", "boost", "no-annotations",
             "pod-level", "init-policy", "init-policy", "init-policy", "garbage", "not-a-spec"]
        )
    )  # fmt: skip
    spec = p["spec"]
    c = spec["containers"][0]
    if change == "request":
        c.setdefault("resources", {}).setdefault("requests", {})["cpu"] = f"{draw(CPU)}m"
    elif change == "limit-type":  # the same amount, written with another JSON type
        c.setdefault("resources", {})["limits"] = {"cpu": draw(st.sampled_from([1, 1.0, "1"]))}
    elif change == "updates":
        value = draw(st.sampled_from(["", "{}", "not json"]))
        p["metadata"].setdefault("annotations", {})[UPDATES_ANNOTATION] = value
    elif change == "boost":
        value = json.dumps({c["name"]: {"requests": {"cpu": "100m"}}})
        p["metadata"].setdefault("annotations", {})[BOOST_ANNOTATION] = value
    elif change == "no-annotations":
        p["metadata"].pop("annotations", None)
    elif change == "pod-level":
        spec["resources"] = {"requests": {"cpu": "64"}, "limits": {"memory": "1Ti"}}
    elif change == "init-policy" and spec.get("initContainers"):
        first = spec["initContainers"][0]
        first["restartPolicy"] = None if first.get("restartPolicy") else "Always"
    elif change == "garbage":
        c["resources"] = draw(st.sampled_from(["big", [], {"requests": "x"}]))
    elif change == "not-a-spec":
        p["spec"] = "nothing"
    return p


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_cached_answers_are_build_patchs_answers(data: st.DataObject) -> None:
    """Calls drawn from small pools (so that entries are hit) through one cache each answer
    exactly what build_patch answers; changing any input changes the answer as it would."""
    bases = data.draw(st.lists(pods(), min_size=1, max_size=3))
    pols = data.draw(st.lists(boosted_policies(), min_size=1, max_size=3))
    rec_sets = data.draw(st.lists(recommendation_sets(), min_size=1, max_size=3))
    range_sets = data.draw(st.lists(limit_ranges(), min_size=1, max_size=2))
    exclusions = [None, {NAMES[0]: frozenset({"cpu"})}]
    rec_sets.append({n: rec(300, 300 * 1024 * 1024) for n in NAMES})  # one for every container
    cache = PatchCache(parse=parse_amount, boost=BOOST, size=data.draw(st.integers(1, 64)))
    for _ in range(data.draw(st.integers(1, 25))):
        p = data.draw(variants(data.draw(st.sampled_from(bases))))
        args = (
            p,
            data.draw(st.sampled_from(rec_sets)),
            data.draw(st.sampled_from(pols)),
            data.draw(st.sampled_from(range_sets)),
            data.draw(st.sampled_from(exclusions)),
        )
        assert cached(cache, *args) == uncached(*args)
        if data.draw(st.booleans()):  # the pod re-sent as patched (a reinvocation)
            result = uncached(*args)
            if isinstance(result, PodPatch) and result.changed:
                again = (apply_strictly(p, result.operations), *args[1:])
                assert cached(cache, *again) == uncached(*again)


def web_pod(cpu: str = "100m") -> dict[str, Any]:
    return pod(container("app", requests={"cpu": cpu, "memory": "64Mi"}))


def test_pods_of_one_template_share_one_patch() -> None:
    cache = PatchCache(parse=parse_amount)
    recs, pol = {"app": rec(250, 256 * 1024 * 1024)}, policy()
    first = cache.build_patch(web_pod(), recs, pol)
    other = web_pod()
    other["metadata"]["generateName"] = "web-other-"  # only what the patch never reads differs
    assert first.changed
    assert cache.build_patch(other, recs, pol) is first
    assert (cache.hits, cache.misses) == (1, 1)


def test_a_new_release_misses() -> None:
    """What was sized before the webhook learned the API server's release (its rules differ by
    release, build_patch) is sized again once it knows; the same release again keeps it."""
    cache = PatchCache(parse=parse_amount)
    recs, pol = {"app": rec(250, 256 * 1024 * 1024)}, policy()
    cache.build_patch(web_pod(), recs, pol)
    cache.release = 33
    cache.build_patch(web_pod(), recs, pol)
    cache.release = 33
    cache.build_patch(web_pod(), recs, pol)
    assert (cache.hits, cache.misses) == (1, 2)


def test_a_changed_policy_recommendation_or_limit_range_misses() -> None:
    cache = PatchCache(parse=parse_amount)
    recs, pol = {"app": rec(250, 256 * 1024 * 1024)}, policy()
    first = cache.build_patch(web_pod(), recs, pol)
    new_recs = {"app": rec(500, 256 * 1024 * 1024)}  # a new snapshot: new objects
    assert cache.build_patch(web_pod(), new_recs, pol) != first
    off = policy("Off")
    assert not cache.build_patch(web_pod(), recs, off).changed
    capped = (LimitRangeItem("Container", max={"cpu": 200}),)
    assert cache.build_patch(web_pod(), recs, pol, capped) != first
    assert cache.build_patch(web_pod("250m"), recs, pol) != first  # the pod's own request
    assert cache.hits == 0


def test_a_pod_that_is_not_json_values_is_never_cached() -> None:
    class Weird(dict[str, Any]):
        pass

    p = web_pod()
    p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = parse_amount  # not JSON
    assert pod_inputs(p) is None
    assert pod_inputs(Weird(web_pod())) is not None  # a dict subclass is still a dict
    assert pod_inputs([1]) is None


def test_an_invalid_pod_raises_every_time() -> None:
    cache = PatchCache(parse=parse_amount)
    p = web_pod()
    p["spec"]["containers"][0]["resources"] = "big"
    for _ in range(2):
        with pytest.raises(PodInvalid):
            cache.build_patch(p, NO_RECOMMENDATIONS, policy())
    assert cache.hits == 0
