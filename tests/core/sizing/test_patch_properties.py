"""Property: over generated pods, policies, LimitRanges and recommendations, the patch always
applies strictly, the result is a valid Pod with no request above its limit, nothing outside the
sized containers' cpu/memory changes (annotations aside), LimitRange maxima the pod respected are
still respected, and a second pass is a no-op."""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.policy import Policy
from app.core.quantity import amount as quantity_amount
from app.core.sizing.limitrange import RESOURCES, LimitRangeItem, parse_limit_range
from app.core.sizing.patch import build_patch
from app.simulator.apiserver import limitranger as sim_limitranger
from tests.support.generators import (
    CPU,
    MEMORY,
    limit_ranges,
    lr_objects,
    lr_pods,
    pods,
    policies,
    q,
)
from tests.support.pods import amounts, apply_strictly, assert_valid_pod, rec, sized_containers


def respects(p: dict[str, Any], ranges: list[LimitRangeItem]) -> dict[str, bool]:
    """Which LimitRange maxima the pod respects ("c:cpu" per container, "p:cpu" for the pod)."""
    out = {}
    for item in ranges:
        for res, cap in item.max.items():
            if item.type == "Container":
                out[f"c:{res}"] = all(
                    v <= cap
                    for c in sized_containers(p)
                    for v in (amounts(c, "requests").get(res), amounts(c, "limits").get(res))
                    if v is not None
                )
            else:  # LimitRanger's podRequests/podLimits (defined below)
                reqs, lims = effective(p, "requests", res), effective(p, "limits", res)
                out[f"p:{res}"] = lims is not None and lims <= cap and (reqs or 0) <= cap
    return out


def without_sized_resources(p: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(p)
    out["metadata"].pop("annotations", None)
    for c in sized_containers(out):
        for section in (c.get("resources") or {}).values():
            if isinstance(section, dict):
                for res in RESOURCES:
                    section.pop(res, None)
        c.pop("resources", None)
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=pods(), pol=policies(), ranges=limit_ranges(), data=st.data())
def test_patch_applies_validates_and_is_idempotent(
    p: dict[str, Any], pol: Policy, ranges: list[LimitRangeItem], data: st.DataObject
) -> None:
    # Mostly the pod's own containers, sometimes one it does not have.
    names = [c["name"] for c in sized_containers(p)] + ["gone"]
    targets = data.draw(st.dictionaries(st.sampled_from(names), st.tuples(CPU, MEMORY), min_size=1))
    recs = {name: rec(cpu, mem) for name, (cpu, mem) in targets.items()}
    result = build_patch(p, recs, pol, ranges, parse=quantity_amount)
    patched = apply_strictly(p, result.operations)
    assert_valid_pod(patched)
    assert without_sized_resources(patched) == without_sized_resources(p)
    before, after = respects(p, ranges), respects(patched, ranges)
    assert [k for k, ok in before.items() if ok and not after[k]] == []
    if pol.update_mode == "Off":
        assert result.operations == []
    again = build_patch(patched, recs, pol, ranges, parse=quantity_amount)
    assert again.operations == []


# --- Issue #15: every patched pod passes kube-apiserver's LimitRanger and pod-level rules ------
# The checker below is written from LimitRanger (plugin/pkg/admission/limitranger/admission.go:
# defaults, then PodValidateLimitFunc) and validatePodResourceConsistency (pkg/apis/core/
# validation/validation.go), independently of app.core.sizing.podlimits; the simulator's
# LimitRanger (app.simulator.apiserver.limitranger) checks the same pods.


def lr_items(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The items as the API server stores them (SetDefaults_LimitRangeItem, Container only)."""
    out = []
    for item in obj["spec"]["limits"]:
        item = copy.deepcopy(item)
        if item["type"] == "Container":
            default = {**item.get("max", {}), **item.get("default", {})}
            request = {**item.get("min", {}), **default, **item.get("defaultRequest", {})}
            item["default"], item["defaultRequest"] = default, request
        out.append(item)
    return out


def all_containers(p: dict[str, Any]) -> list[dict[str, Any]]:
    return list(p["spec"]["containers"]) + list(p["spec"].get("initContainers") or [])


def admit_defaults(p: dict[str, Any], obj: dict[str, Any]) -> dict[str, Any]:
    """What reaches the webhook: API defaulting (request = limit when only a limit is set; the
    pod-level request from the containers' when only a pod-level limit is set) and LimitRanger's
    Admit (Container default limit and request where missing)."""
    out = copy.deepcopy(p)
    items = lr_items(obj)
    for c in all_containers(out):
        r = c.setdefault("resources", {})
        for res, v in (r.get("limits") or {}).items():
            r.setdefault("requests", {}).setdefault(res, v)
    level = out["spec"].get("resources")
    if level:
        agg = {res: effective(out, "requests", res, pod_level=False) for res in RESOURCES}
        for res, v in (level.get("limits") or {}).items():
            amount = agg[res]
            fill = q(res, amount) if amount is not None else v
            level.setdefault("requests", {}).setdefault(res, fill)
    for item in items:
        if item["type"] != "Container":
            continue
        for c in all_containers(out):
            r = c.setdefault("resources", {})
            for section, key in (("limits", "default"), ("requests", "defaultRequest")):
                for res, v in item.get(key, {}).items():
                    r.setdefault(section, {}).setdefault(res, v)
    for c in all_containers(out):
        if c.get("resources") == {} or c.get("resources") == {"requests": {}}:
            c.pop("resources")
    return out


def effective(p: dict[str, Any], section: str, res: str, pod_level: bool = True) -> int | None:
    """podRequests/podLimits: containers + sidecars, or a plain init container with the sidecars
    before it when larger; the pod-level value instead when set."""
    if pod_level:
        text = ((p["spec"].get("resources") or {}).get(section) or {}).get(res)
        if text is not None:
            return quantity_amount(res, text)
    values = []
    running = 0
    sidecars = 0
    found = False
    for c in p["spec"]["containers"]:
        v = amounts(c, section).get(res)
        found |= v is not None
        running += v or 0
    for c in p["spec"].get("initContainers") or []:
        v = amounts(c, section).get(res)
        found |= v is not None
        if c.get("restartPolicy") == "Always":
            running += v or 0
            sidecars += v or 0
        else:
            values.append((v or 0) + sidecars)
    return max([running, *values]) if found else None


def check_item(item: dict[str, Any], reqs: dict[str, int], lims: dict[str, int]) -> list[str]:
    errs = []
    for res, text in item.get("min", {}).items():
        lo = quantity_amount(res, text)
        if reqs.get(res) is None or reqs[res] < lo or lims.get(res, lo) < lo:
            errs.append(f"min {res}")
    for res, text in item.get("max", {}).items():
        hi = quantity_amount(res, text)
        if lims.get(res) is None or lims[res] > hi or reqs.get(res, hi) > hi:
            errs.append(f"max {res}")
    for res, text in item.get("maxLimitRequestRatio", {}).items():
        ratio = Fraction(text)
        req, lim = reqs.get(res), lims.get(res)
        if not req or not lim or Fraction(lim) > req * ratio:
            errs.append(f"ratio {res}")
    return errs


def refusals(p: dict[str, Any], obj: dict[str, Any]) -> list[str]:
    """Why kube-apiserver would refuse the pod (LimitRanger's Validate, pod-level consistency)."""
    errs = []
    for c in all_containers(p):
        reqs, lims = amounts(c, "requests"), amounts(c, "limits")
        errs += [
            f"{c['name']}: request > limit {r}" for r in reqs if reqs[r] > lims.get(r, reqs[r])
        ]
    for item in lr_items(obj):
        if item["type"] == "Container":
            for c in all_containers(p):
                reqs, lims = amounts(c, "requests"), amounts(c, "limits")
                errs += [f"{c['name']}: {e}" for e in check_item(item, reqs, lims)]
        else:
            reqs = {r: v for r in RESOURCES if (v := effective(p, "requests", r)) is not None}
            lims = {r: v for r in RESOURCES if (v := effective(p, "limits", r)) is not None}
            errs += [f"pod: {e}" for e in check_item(item, reqs, lims)]
    level = p["spec"].get("resources") or {}
    for res in RESOURCES:
        budget = (level.get("requests") or {}).get(res)
        agg = effective(p, "requests", res, pod_level=False)
        if budget is not None and agg is not None and agg > quantity_amount(res, budget):
            errs.append(f"pod-level request {res}")
        cap = (level.get("limits") or {}).get(res)
        for c in p["spec"]["containers"]:
            lim = amounts(c, "limits").get(res)
            if cap is not None and lim is not None and lim > quantity_amount(res, cap):
                errs.append(f"{c['name']}: limit above pod-level {res}")
    return errs


OUTCOMES: dict[str, int] = {}


@settings(
    max_examples=2000,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(p=lr_pods(), obj=lr_objects(), pol=policies(), data=st.data())
def test_patched_pods_pass_limit_ranger_and_pod_level_rules(
    p: dict[str, Any], obj: dict[str, Any], pol: Policy, data: st.DataObject
) -> None:
    seen = admit_defaults(p, obj)  # what the webhook is sent
    names = [c["name"] for c in sized_containers(seen)]
    targets = data.draw(st.dictionaries(st.sampled_from(names), st.tuples(CPU, MEMORY), min_size=1))
    recs = {name: rec(cpu, mem) for name, (cpu, mem) in targets.items()}
    ranges = parse_limit_range(obj, quantity_amount)
    result = build_patch(seen, recs, pol, ranges, parse=quantity_amount)
    patched = apply_strictly(seen, result.operations)
    OUTCOMES[result.reason] = OUTCOMES.get(result.reason, 0) + 1
    if not result.operations:
        # Unchanged: nothing to size, or sizing could not make the pod acceptable (and says why).
        assert result.reason != "unfit" or result.detail  # the reason is recorded
        return
    assert refusals(patched, obj) == []  # (the schema is checked by the property above)
    sim_pod = copy.deepcopy(patched)
    sim_limitranger.apply_defaults(sim_pod, [obj])
    sim_limitranger.validate(sim_pod, [obj])  # raises the 403 kube-apiserver would give
    again = build_patch(patched, recs, pol, ranges, parse=quantity_amount)
    assert again.operations == []


def test_the_generated_cases_are_mostly_patched_not_refused() -> None:
    """The property above is not vacuous: most generated pods get a patch."""
    if not OUTCOMES:
        test_patched_pods_pass_limit_ranger_and_pod_level_rules()
    patched = OUTCOMES.get("patched", 0)
    assert patched > 0.3 * sum(OUTCOMES.values()), OUTCOMES
