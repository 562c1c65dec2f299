"""ratio_holds decides maxLimitRequestRatio as LimitRanger does, float64 included: checked against
the simulated kube-apiserver's LimitRanger (app.simulator.apiserver.limitranger, re-derived from
plugin/pkg/admission/limitranger), up to the largest amounts a Quantity holds."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.core.sizing.podlimits import min_request_for, ratio_holds
from app.simulator.apiserver import limitranger

MAX_INT64 = 2**63 - 1


def text(res: str, amount: int) -> str:
    return f"{amount}m" if res == "cpu" else str(amount)


def refused(res: str, request: int, limit: int, ratio: Fraction) -> list[str]:
    pod: dict[str, Any] = {
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "resources": {
                        "requests": {res: text(res, request)},
                        "limits": {res: text(res, limit)},
                    },
                }
            ]
        }
    }
    item = {"type": "Container", "maxLimitRequestRatio": {res: f"{float(ratio):g}"}}
    return limitranger.violations(pod, {"spec": {"limits": [item]}})


amounts = st.one_of(
    st.integers(1, 10**6),
    st.integers(1, MAX_INT64),
    st.integers(MAX_INT64 // 1000 - 10**4, MAX_INT64),
)
ratios = st.integers(1000, 20000).map(lambda k: Fraction(k, 1000))


@given(res=st.sampled_from(["cpu", "memory"]), request=amounts, ratio=ratios, data=st.data())
@settings(max_examples=400, deadline=None)
@example(res="cpu", request=1000, ratio=Fraction(3), data=None)
def test_min_request_for_gives_a_request_limitranger_accepts(
    res: str, request: int, ratio: Fraction, data: st.DataObject | None
) -> None:
    limit = request * 3 if data is None else data.draw(st.integers(request, MAX_INT64))
    floor = min_request_for(limit, ratio, res)
    assert ratio_holds(limit, floor, ratio, res)
    assert refused(res, floor, limit, ratio) == []


@given(res=st.sampled_from(["cpu", "memory"]), request=amounts, limit=amounts, ratio=ratios)
@settings(max_examples=400, deadline=None)
# 14997m x 3 = 44991m, but 44991.0 / 14997.0 x 1000 = 3000.0000000000005 > 3000
@example(res="cpu", request=14997, limit=44991, ratio=Fraction(3))
# pod sums beyond MaxMilliValue cores: LimitRanger divides whole cores, rounded up
@example(
    res="cpu",
    request=2 * 6148914691236517207 + 2387,
    limit=2 * MAX_INT64 + 2387,
    ratio=Fraction(3, 2),
)
def test_what_ratio_holds_accepts_limitranger_accepts(
    res: str, request: int, limit: int, ratio: Fraction
) -> None:
    if ratio_holds(limit, request, ratio, res):
        assert refused(res, request, limit, ratio) == []
