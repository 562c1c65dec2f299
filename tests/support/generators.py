"""Hypothesis strategies shared by the property tests of pod sizing: pods (containers, sidecars,
plain init containers, requests and limits present or absent, pod-level resources), LimitRange
objects as users write them (Container and Pod items, min/max/default/defaultRequest/
maxLimitRequestRatio), policies and recommendation targets."""

from __future__ import annotations

from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from app.core.policy import Policy
from app.core.recommendation import ContainerPolicy
from app.core.sizing.limitrange import RESOURCES, LimitRangeItem
from app.core.update_mode import UpdateMode
from tests.support.pods import pod

NAMES = ["app", "envoy", "log", "metrics"]
CPU = st.integers(1, 64_000)  # millicores
MEMORY = st.integers(1, 2**40)  # bytes


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
    return Policy("web", "shop", update_mode=UpdateMode.of(mode), container_policies=tuple(cps))


CPU_Q = st.integers(1, 8000)  # millicores
MEM_Q = st.integers(1, 8 * 1024).map(lambda m: m * 1024 * 1024)  # bytes, whole Mi


def q(res: str, amount: int) -> str:
    return f"{amount}m" if res == "cpu" else str(amount)


@st.composite
def lr_objects(draw: st.DrawFn) -> dict[str, Any]:
    """A LimitRange object as stored, with a Container and/or a Pod item."""
    limits = []
    for type_ in ("Container", "Pod"):
        if not draw(st.booleans()):
            continue
        item: dict[str, Any] = {"type": type_}
        for res, amounts_ in (("cpu", CPU_Q), ("memory", MEM_Q)):
            lo = draw(st.none() | amounts_)
            hi = draw(st.none() | amounts_)
            if lo is not None and hi is not None and lo > hi:
                lo, hi = hi, lo
            if lo is not None:
                item.setdefault("min", {})[res] = q(res, lo)
            if hi is not None:
                item.setdefault("max", {})[res] = q(res, hi)
            if draw(st.booleans()):
                ratio = draw(st.sampled_from(["1", "1.5", "2", "3", "4", "10"]))
                item.setdefault("maxLimitRequestRatio", {})[res] = ratio
            if type_ == "Container" and draw(st.booleans()):
                floor, ceil_ = lo or 1, hi or (8000 if res == "cpu" else 8 * 1024**3)
                dl = draw(st.integers(floor, ceil_))
                dr = draw(st.integers(floor, dl))
                if draw(st.booleans()):
                    item.setdefault("default", {})[res] = q(res, dl)
                if draw(st.booleans()):
                    item.setdefault("defaultRequest", {})[res] = q(res, dr)
        limits.append(item)
    return {"metadata": {"name": "limits", "namespace": "shop"}, "spec": {"limits": limits}}


def place(draw: st.DrawFn, c: dict[str, Any], containers: list[Any], init: list[Any]) -> None:
    """Makes `c` a container (half the time), a sidecar or a plain init container."""
    kind = draw(st.sampled_from(["container", "container", "sidecar", "init"]))
    if kind == "container":
        containers.append(c)
        return
    if kind == "sidecar":
        c["restartPolicy"] = "Always"
    init.append(c)


@st.composite
def lr_pods(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
    containers: list[dict[str, Any]] = []
    init: list[dict[str, Any]] = []
    for name in names:
        c: dict[str, Any] = {"name": name, "image": "registry.example/x:1"}
        for res, amounts_ in (("cpu", CPU_Q), ("memory", MEM_Q)):
            req = draw(st.none() | amounts_)
            lim = draw(st.none() | st.integers(1, 4).map(lambda k: k))
            if req is not None:
                c.setdefault("resources", {}).setdefault("requests", {})[res] = q(res, req)
            if lim is not None:
                base = req or draw(amounts_)
                c.setdefault("resources", {}).setdefault("limits", {})[res] = q(res, base * lim)
        place(draw, c, containers, init)
    assume(containers)
    p = pod(*containers, init=init or None)
    if draw(st.booleans()):
        level: dict[str, dict[str, str]] = {}
        for res, amounts_ in (("cpu", CPU_Q), ("memory", MEM_Q)):
            lim = draw(st.none() | amounts_.map(lambda v: v * 4))
            req = draw(st.none() | st.integers(1, 4))
            if lim is not None:
                level.setdefault("limits", {})[res] = q(res, lim)
                if req is not None:
                    level.setdefault("requests", {})[res] = q(res, lim * req // 4)
            elif req is not None:
                level.setdefault("requests", {})[res] = q(res, draw(amounts_) * req)
        if level:
            p["spec"]["resources"] = level
    return p


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
    containers: list[dict[str, Any]] = []
    init: list[dict[str, Any]] = []
    for name in names:
        c: dict[str, Any] = {"name": name, "image": "registry.example/x:1"}
        r = draw(resources())
        if r is not None:
            c["resources"] = r
        place(draw, c, containers, init)
    assume(containers)
    annotations = draw(st.none() | st.just({"example.com/team": "a", "x~y/z": "b"}))
    return pod(*containers, init=init or None, annotations=annotations)


@st.composite
def limit_ranges(draw: st.DrawFn) -> list[LimitRangeItem]:
    """LimitRange items as the patch builder takes them (a Container and a Pod item or not)."""
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
