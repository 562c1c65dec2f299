"""limitranger.py called directly: effective pod resources, min/max/ratio, defaults; and a
property: apply_defaults then validate raises nothing but the 403 for any pod and LimitRange."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.simulator.apiserver import limitranger, quantity
from app.simulator.apiserver.errors import ApiError


def _lr(*items: dict[str, Any], name: str = "lr") -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"limits": list(items)}}


def _ctr(
    name: str, req: dict[str, Any] | None = None, lim: dict[str, Any] | None = None, **extra
) -> dict[str, Any]:
    res = {}
    if req is not None:
        res["requests"] = req
    if lim is not None:
        res["limits"] = lim
    return {"name": name, "resources": res, **extra}


def _pod(
    *containers: dict[str, Any],
    init: list[Any] | None = None,
    resources: dict[str, Any] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": list(containers), "initContainers": init or []}
    if resources is not None:
        spec["resources"] = resources
    return {"metadata": {"name": "p"}, "spec": spec}


def _shown(rl: limitranger.ResourceList) -> dict[str, str]:
    return {k: str(v) for k, v in rl.items()}


def test_effective_requests_with_init_containers_and_sidecars():
    pod = _pod(
        _ctr("a", {"cpu": "200m", "memory": "1Gi"}),
        _ctr("b", {"cpu": "300m"}),
        init=[
            _ctr("i1", {"cpu": "2", "memory": "256Mi"}),  # alone: 2 cores
            _ctr("s", {"cpu": "100m", "memory": "512Mi"}, restartPolicy="Always"),
            _ctr("i2", {"cpu": "1", "memory": "1Gi"}),  # with the sidecar: 1100m, 1536Mi
        ],
    )
    # regular + sidecar = 600m, 1536Mi; max(2, 1100m) = 2 cores; memory max(1536Mi, 1536Mi).
    assert _shown(limitranger.effective_pod_resources(pod, "requests")) == {
        "cpu": "2",
        "memory": "1536Mi",
    }


def test_pod_level_resources_override_the_aggregate_for_cpu_and_memory_only():
    pod = _pod(
        _ctr("a", lim={"cpu": "3", "memory": "1Gi", "ephemeral-storage": "1Gi"}),
        resources={"limits": {"cpu": "1500m"}},
    )
    assert _shown(limitranger.effective_pod_resources(pod, "limits")) == {
        "cpu": "1500m",
        "memory": "1Gi",
        "ephemeral-storage": "1Gi",
    }


def _message(pod: dict[str, Any], *items: dict[str, Any]) -> str:
    with pytest.raises(ApiError) as e:
        limitranger.validate(pod, [_lr(*items)])
    assert e.value.code == 403 and e.value.reason == "Forbidden"
    return e.value.message


def test_ratio():
    item = {"type": "Container", "maxLimitRequestRatio": {"memory": "1500m"}}
    limitranger.validate(_pod(_ctr("a", {"memory": "1Gi"}, {"memory": "1536Mi"})), [_lr(item)])
    assert _message(_pod(_ctr("a", {"memory": "1Gi"}, {"memory": "2Gi"})), item) == (
        'pods "p" is forbidden: memory max limit to request ratio per Container is 1500m, '
        "but provided ratio is 2.000000"
    )
    assert _message(_pod(_ctr("a", {"memory": "0"}, {"memory": "2Gi"})), item).endswith(
        "but no request is specified or request is 0"
    )


def test_min_and_max_on_init_containers_and_pods():
    assert (
        _message(
            _pod(_ctr("a", {"cpu": "1"}), init=[_ctr("i", {"cpu": "50m"})]),
            {"type": "Container", "min": {"cpu": "100m"}},
        )
        == 'pods "p" is forbidden: minimum cpu usage per Container is 100m, but request is 50m'
    )
    assert (
        _message(
            _pod(_ctr("a", {"cpu": "1"}, {"cpu": "1"}), _ctr("b", {"cpu": "1"}, {"cpu": "1500m"})),
            {"type": "Pod", "max": {"cpu": "2"}},
        )
        == 'pods "p" is forbidden: maximum cpu usage per Pod is 2, but limit is 2500m'
    )


def test_comparisons_are_at_milli_precision():
    # 100.4m rounds up to 101m: above a max of 100m.
    assert _message(
        _pod(_ctr("a", lim={"cpu": "0.1004"})), {"type": "Container", "max": {"cpu": "100m"}}
    ).endswith("but limit is 100400u")


def test_defaults_only_fill_what_is_missing_and_annotate():
    pod = _pod(_ctr("a", {"cpu": "1"}), init=[_ctr("i", lim={"memory": "1Gi"})])
    limitranger.apply_defaults(
        pod,
        [_lr({"type": "Container", "max": {"memory": "2Gi"}, "defaultRequest": {"cpu": "100m"}})],
    )
    # Container default falls back to max; defaultRequest memory then to that default.
    assert pod["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "1", "memory": "2Gi"},
        "limits": {"memory": "2Gi"},
    }
    assert pod["spec"]["initContainers"][0]["resources"] == {
        "limits": {"memory": "1Gi"},
        "requests": {"cpu": "100m", "memory": "2Gi"},
    }
    assert pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: memory request for container a; memory limit for container a; "
        "cpu, memory request for init container i"
    )


def test_no_limit_ranges_changes_nothing():
    pod = _pod(_ctr("a"))
    before = copy.deepcopy(pod)
    limitranger.apply_defaults(pod, [])
    limitranger.validate(pod, [])
    assert pod == before


# --- property ---------------------------------------------------------------------------

_NAMES = st.sampled_from(["cpu", "memory", "ephemeral-storage"])
_QUANTITIES = st.sampled_from(
    ["0", "1", "2", "50m", "100m", "250m", "0.5", "1500m", "64Mi", "128Mi", "1Gi", "1.5Gi", "3"]
)
_LIST = st.dictionaries(_NAMES, _QUANTITIES, max_size=3)


@st.composite
def _containers(draw: Any, prefix: str, sidecars: bool) -> list[dict[str, Any]]:
    out = []
    for i in range(draw(st.integers(0 if prefix == "i" else 1, 3))):
        res = {
            k: v
            for k, v in (("requests", draw(_LIST)), ("limits", draw(_LIST)))
            if draw(st.booleans())
        }
        c: dict[str, Any] = {"name": f"{prefix}{i}", "resources": res}
        if sidecars and draw(st.booleans()):
            c["restartPolicy"] = "Always"
        out.append(c)
    return out


@st.composite
def _pods(draw: Any) -> dict[str, Any]:
    pod = _pod(*draw(_containers("c", False)), init=draw(_containers("i", True)))
    if draw(st.booleans()):
        pod["spec"]["resources"] = {"requests": draw(_LIST), "limits": draw(_LIST)}
    return pod


_ITEM = st.fixed_dictionaries(
    {"type": st.sampled_from(["Container", "Pod"])},
    optional={
        f: _LIST for f in ("min", "max", "default", "defaultRequest", "maxLimitRequestRatio")
    },
)


@settings(max_examples=300, deadline=None)
@given(pod=_pods(), limit_ranges=st.lists(st.lists(_ITEM, max_size=3), max_size=2))
def test_defaults_then_validate_raise_only_the_403(pod, limit_ranges):
    lrs = [_lr(*items, name=f"lr{i}") for i, items in enumerate(limit_ranges)]
    limitranger.apply_defaults(pod, lrs)
    again = copy.deepcopy(pod)
    limitranger.apply_defaults(again, lrs)
    assert again == pod  # defaulting is idempotent
    try:
        limitranger.validate(pod, lrs)
    except ApiError as e:
        assert e.code == 403 and e.message.startswith('pods "p" is forbidden: ')
        assert e.message == str(e)


@pytest.mark.parametrize(
    "text", [" 1", "1 ", "1K", "1 Gi", "1Gb", "", "abc", "NaN", "Infinity", "--1"]
)
def test_quantities_outside_kube_apiservers_grammar_are_refused(text: str) -> None:
    """apimachinery parseQuantityString; the client's parse_quantity alone takes spaces and "K"."""
    with pytest.raises(ValueError):
        quantity.parse(text)


@pytest.mark.parametrize(
    ("text", "value"), [("1E", "1e18"), ("+1", "1"), (".5", "0.5"), ("1e3", "1000"), (2, "2")]
)
def test_quantities_in_kube_apiservers_grammar_parse(text: object, value: str) -> None:
    assert quantity.parse(text) == Decimal(value)
