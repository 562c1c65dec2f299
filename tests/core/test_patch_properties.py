"""Property: over generated pods, policies, LimitRanges and recommendations, the patch always
applies strictly, the result is a valid Pod with no request above its limit, nothing outside the
sized containers' cpu/memory changes (annotations aside), LimitRange maxima the pod respected are
still respected, and a second pass is a no-op."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from app.core.capping import ContainerPolicy
from app.core.limitrange import RESOURCES, LimitRangeItem
from app.core.patch import build_patch
from app.core.policy import Policy, normalize_update_mode
from app.kube.quantity import quantity_amount
from tests.webhook.pods import amounts, apply_strictly, assert_valid_pod, pod, rec, sized_containers

NAMES = ["app", "envoy", "log", "metrics"]
CPU = st.integers(1, 64_000)  # millicores
MEMORY = st.integers(1, 2**40)  # bytes


def quantity(res: str, amount: int, style: int) -> str:
    """An amount written the ways people write it (the parser must read all of them)."""
    if res == "cpu":
        return f"{amount}m" if style or amount % 1000 else str(amount // 1000)
    if style == 0 and amount % (1024 * 1024) == 0:
        return f"{amount // (1024 * 1024)}Mi"
    return str(amount)


@st.composite
def resources(draw: st.DrawFn) -> dict[str, Any] | None:
    if draw(st.booleans()):
        return None
    out: dict[str, dict[str, str]] = {}
    for res, amounts_ in (("cpu", CPU), ("memory", MEMORY)):
        req = draw(st.none() | amounts_)
        lim = draw(st.none() | st.integers(0, 4).map(lambda k: k))
        style = draw(st.integers(0, 1))
        if req is not None:
            out.setdefault("requests", {})[res] = quantity(res, req, style)
        if lim is not None:  # a multiple of the request (or of 1 without one), ratio >= 1
            base = req or draw(amounts_)
            out.setdefault("limits", {})[res] = quantity(res, base * (lim + 1), style)
    if draw(st.booleans()):
        out.setdefault("requests", {})["ephemeral-storage"] = "1Gi"
    return out


@st.composite
def pods(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
    containers, init = [], []
    for name in names:
        c: dict[str, Any] = {"name": name, "image": "registry.example/x:1"}
        r = draw(resources())
        if r is not None:
            c["resources"] = r
        kind = draw(st.sampled_from(["container", "container", "sidecar", "init"]))
        if kind == "container":
            containers.append(c)
        else:
            if kind == "sidecar":
                c["restartPolicy"] = "Always"
            init.append(c)
    assume(containers)
    annotations = draw(st.none() | st.just({"example.com/team": "a", "x~y/z": "b"}))
    return pod(*containers, init=init or None, annotations=annotations)


@st.composite
def policies(draw: st.DrawFn) -> Policy:
    cps = []
    for name in draw(st.lists(st.sampled_from([*NAMES, "*"]), max_size=3, unique=True)):
        lo = draw(st.fixed_dictionaries({}, optional={"cpu": CPU, "memory": MEMORY}))
        hi = draw(st.fixed_dictionaries({}, optional={"cpu": CPU, "memory": MEMORY}))
        hi = {r: max(v, lo.get(r, 0)) for r, v in hi.items()}
        cps.append(
            ContainerPolicy(
                name,
                mode=draw(st.sampled_from(["Auto", "Auto", "Off"])),
                min_allowed=lo,
                max_allowed=hi,
                controlled_resources=tuple(
                    draw(st.lists(st.sampled_from(RESOURCES), min_size=1, unique=True))
                ),
                controlled_values=draw(st.sampled_from(["RequestsAndLimits", "RequestsOnly"])),
            )
        )
    mode = draw(st.sampled_from(["Initial", "Recreate", "InPlaceOrRecreate", "Auto", "Off"]))
    return Policy(
        "web", "shop", update_mode=normalize_update_mode(mode), container_policies=tuple(cps)
    )


@st.composite
def limit_ranges(draw: st.DrawFn) -> list[LimitRangeItem]:
    items = []
    if draw(st.booleans()):
        mx = draw(st.fixed_dictionaries({}, optional={"cpu": CPU, "memory": MEMORY}))
        mn = draw(st.fixed_dictionaries({}, optional={"cpu": st.integers(1, 100)}))
        mn = {r: v for r, v in mn.items() if v <= mx.get(r, v)}
        default = draw(st.fixed_dictionaries({}, optional={"cpu": CPU}))
        items.append(LimitRangeItem("Container", mn, mx, default))
    if draw(st.booleans()):
        cap = draw(st.fixed_dictionaries({}, optional={"cpu": CPU, "memory": MEMORY}))
        items.append(LimitRangeItem("Pod", max=cap))
    return items


def pod_charge(p: dict[str, Any], res: str) -> int:
    total = 0
    for c in sized_containers(p):
        lim, req = amounts(c, "limits").get(res), amounts(c, "requests").get(res)
        total += lim if lim is not None else req or 0
    return total


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
            else:
                out[f"p:{res}"] = pod_charge(p, res) <= cap
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
