"""CPU startup boost (app/core/sizing/boost.py): what the webhook's patch gives a new pod on top of
its sizing, and when and to what the updater brings it back; VPA 1.7's arithmetic, re-derived."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.pods import PodView
from app.core.policy import Policy
from app.core.quantity import amount as quantity_amount
from app.core.recommendation import ContainerPolicy, Recommendation
from app.core.sizing.boost import (
    BOOST_ANNOTATION,
    BoostOptions,
    boost_for,
    boosted_cpu,
    expired,
    recorded,
    remaining,
    unboost_body,
)
from app.core.sizing.limitrange import LimitRangeItem, parse_limit_range
from app.core.sizing.patch import UPDATES_ANNOTATION, PodPatch, build_patch
from app.core.update_mode import UpdateMode
from app.core.update_policy import StartupBoost
from tests.support.pods import amounts, apply_strictly, assert_valid_pod, container, pod, rec

MI = 1024 * 1024
FACTOR_3 = StartupBoost("Factor", factor=3, duration_seconds=30)
PLUS_500M = StartupBoost("Quantity", quantity=500)


def boosting(mode: str = "Recreate", boost: StartupBoost | None = FACTOR_3, **kw: Any) -> Policy:
    return Policy("web", "shop", update_mode=UpdateMode.of(mode), startup_boost=boost, **kw)


def run(
    p: dict[str, Any],
    pol: Policy,
    recs: dict[str, Recommendation] | None = None,
    ranges: list[LimitRangeItem] | None = None,
    options: BoostOptions | None = None,
) -> tuple[PodPatch, dict[str, Any]]:
    """Builds the webhook's patch (with the boost), applies and validates it, and checks that a
    re-invocation over the result changes nothing."""
    recs = {"app": rec(400, 256 * MI)} if recs is None else recs

    def build(doc: dict[str, Any]) -> PodPatch:
        return build_patch(
            doc, recs, pol, ranges or [], parse=quantity_amount, boost=options or BoostOptions()
        )

    result = build(p)
    patched = apply_strictly(p, result.operations)
    assert_valid_pod(patched)
    assert build(patched).operations == []
    return result, patched


def annotation(p: dict[str, Any]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(p["metadata"]["annotations"][BOOST_ANNOTATION])
    return loaded


def test_factor_multiplies_the_sized_request_and_the_limit_keeps_its_ratio() -> None:
    p = pod(container("app", {"cpu": "1", "memory": "256Mi"}, {"cpu": "2"}))
    result, patched = run(p, boosting())
    [c] = patched["spec"]["containers"]
    # sized to 400m (limit 800m), then boosted x3: 1200m, limit 2400m
    assert amounts(c, "requests")["cpu"] == 1200 and amounts(c, "limits")["cpu"] == 2400
    assert annotation(patched) == {"app": {"limits": {"cpu": "800m"}, "requests": {"cpu": "400m"}}}
    assert result.boosted == ("app",)
    # what sizing decided is what the updates annotation records, not the boost
    record = json.loads(patched["metadata"]["annotations"][UPDATES_ANNOTATION])
    assert record["containers"]["app"]["requests"]["cpu"] == "400m"
    assert record["containers"]["app"]["limits"]["cpu"] == "800m"


def test_quantity_is_added_as_vpa_1_7_adds_it() -> None:
    p = pod(container("app", {"cpu": "1", "memory": "256Mi"}))
    _, patched = run(p, boosting(boost=PLUS_500M))
    assert amounts(patched["spec"]["containers"][0], "requests")["cpu"] == 900


def test_requests_only_stays_a_millicore_below_the_limit() -> None:
    cp = ContainerPolicy("app", controlled_values="RequestsOnly")
    p = pod(container("app", {"cpu": "500m", "memory": "256Mi"}, {"cpu": "1"}))
    _, patched = run(p, boosting(container_policies=(cp,)))
    c = patched["spec"]["containers"][0]
    assert amounts(c, "requests")["cpu"] == 999  # 400m x 3 = 1200m > the 1 core limit
    assert amounts(c, "limits")["cpu"] == 1000  # the limit stays: the pod stays Burstable


def test_requests_only_at_its_limit_is_not_lowered() -> None:
    cp = ContainerPolicy("app", controlled_values="RequestsOnly", controlled_resources=("memory",))
    p = pod(container("app", {"cpu": "1", "memory": "256Mi"}, {"cpu": "1", "memory": "1Gi"}))
    result, patched = run(p, boosting(container_policies=(cp,)))
    assert amounts(patched["spec"]["containers"][0], "requests")["cpu"] == 1000
    assert result.boosted == ()  # no room to boost: VPA would have set 999m


def test_update_mode_off_boosts_from_the_pods_own_request_and_sizes_nothing() -> None:
    p = pod(container("app", {"cpu": "200m", "memory": "256Mi"}))
    _, patched = run(p, boosting("Off"))
    c = patched["spec"]["containers"][0]
    assert amounts(c, "requests") == {"cpu": 600, "memory": 256 * MI}
    assert UPDATES_ANNOTATION not in patched["metadata"]["annotations"]
    assert annotation(patched) == {"app": {"requests": {"cpu": "200m"}}}


def test_without_the_webhooks_boost_option_nothing_is_boosted() -> None:
    p = pod(container("app", {"cpu": "1", "memory": "256Mi"}))
    result = build_patch(p, {"app": rec(400, 256 * MI)}, boosting(), [], parse=quantity_amount)
    assert result.boosted == () and BOOST_ANNOTATION not in json.dumps(result.operations)
    off = build_patch(p, {}, boosting("Off"), [], parse=quantity_amount)
    assert off.reason == "mode-off"


def test_container_boosts_and_modes_choose_as_vpa_does() -> None:
    pol = boosting(
        container_policies=(
            ContainerPolicy("envoy"),
            ContainerPolicy("log", mode="Off"),
            ContainerPolicy("*"),
        ),
        container_boosts={"envoy": PLUS_500M, "*": StartupBoost("Factor", factor=2)},
    )
    assert boost_for(pol, "envoy") == PLUS_500M  # its own entry's
    assert boost_for(pol, "app") == StartupBoost("Factor", factor=2)  # the * entry's
    assert boost_for(pol, "log") is None  # mode Off: never boosted
    own_without = replace(pol, container_boosts={"*": PLUS_500M})
    assert boost_for(own_without, "envoy") == FACTOR_3  # own entry, no boost: the policy's


def test_the_cap_limits_the_boost_but_never_lowers_the_request() -> None:
    assert boosted_cpu(400, FACTOR_3, max_boost=1000) == 1000
    assert boosted_cpu(2000, FACTOR_3, max_boost=1000) == 2000  # VPA would set 1000m
    p = pod(container("app", {"cpu": "1", "memory": "256Mi"}))
    _, patched = run(p, boosting(), options=BoostOptions(max_cpu=1000))
    assert amounts(patched["spec"]["containers"][0], "requests")["cpu"] == 1000


def limit_range(*items: dict[str, Any]) -> list[LimitRangeItem]:
    return parse_limit_range({"spec": {"limits": list(items)}}, quantity_amount)


def test_a_container_limit_range_max_caps_the_boost() -> None:
    ranges = limit_range({"type": "Container", "max": {"cpu": "1"}})
    p = pod(container("app", {"cpu": "500m", "memory": "256Mi"}, {"cpu": "500m"}))
    _, patched = run(p, boosting(), ranges=ranges)
    c = patched["spec"]["containers"][0]
    assert amounts(c, "requests")["cpu"] == amounts(c, "limits")["cpu"] == 1000


def test_a_boost_that_breaks_a_pod_max_is_dropped_and_the_sizing_kept() -> None:
    ranges = limit_range({"type": "Pod", "max": {"cpu": "1"}})
    p = pod(container("app", {"cpu": "800m", "memory": "256Mi"}, {"cpu": "800m"}))
    result, patched = run(p, boosting(), ranges=ranges)
    c = patched["spec"]["containers"][0]
    assert amounts(c, "requests")["cpu"] == 400 and result.boosted == ()
    assert BOOST_ANNOTATION not in patched["metadata"]["annotations"]


# --- the updater's part ---------------------------------------------------------------------


def boosted_pod(ready_at: str | None, annotations: dict[str, str]) -> PodView:
    doc = pod(container("app", {"cpu": "1200m", "memory": "256Mi"}, {"cpu": "2400m"}))
    doc["metadata"].update(name="web-1", annotations=annotations)
    doc["spec"]["nodeName"] = "node-1"
    conditions = []
    if ready_at is not None:
        conditions.append({"type": "Ready", "status": "True", "lastTransitionTime": ready_at})
    doc["status"] = {"phase": "Running", "conditions": conditions}
    return PodView.parse(doc)


ENTRY = json.dumps({"app": {"requests": {"cpu": "400m"}, "limits": {"cpu": "800m"}}})
T0 = 1_700_000_000.0  # 2023-11-14T22:13:20Z


def test_the_boost_expires_durationSeconds_after_ready() -> None:
    pol = boosting()
    not_ready = boosted_pod(None, {BOOST_ANNOTATION: ENTRY})
    assert expired(not_ready, pol, T0 + 3600) == []
    ready = boosted_pod("2023-11-14T22:13:20Z", {BOOST_ANNOTATION: ENTRY})
    assert expired(ready, pol, T0 + 30) == []  # VPA: strictly more than the duration
    assert expired(ready, pol, T0 + 31) == ["app"]
    at_once = boosting(boost=replace(FACTOR_3, duration_seconds=0))
    assert expired(ready, at_once, T0) == ["app"]
    dropped = boosting(boost=None)  # the policy no longer boosts: down at once
    assert expired(ready, dropped, T0) == ["app"]


@pytest.mark.parametrize("garbage", ["", "[]", "{not json", json.dumps({"app": {"requests": 1}})])
def test_a_garbage_annotation_is_no_boost(garbage: str) -> None:
    ready = boosted_pod("2023-11-14T22:13:20Z", {BOOST_ANNOTATION: garbage})
    assert expired(ready, boosting(), T0 + 3600) == []


def test_unboost_resizes_to_the_recorded_values_and_drops_the_annotation() -> None:
    ready = boosted_pod("2023-11-14T22:13:20Z", {BOOST_ANNOTATION: ENTRY})
    body, details = unboost_body(ready, ["app"])
    assert body.to_dict() == {
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "resources": {"requests": {"cpu": "400m"}, "limits": {"cpu": "800m"}},
                }
            ]
        }
    }
    assert details["before"]["app"] == {"requests": {"cpu": 1200}, "limits": {"cpu": 2400}}
    assert details["boost"] == "removed"
    assert remaining(ready, ["app"]) is None


def _recorded_by_parsing_everything(annotations: dict[str, Any]) -> Any:
    """recorded() as it was: every value through json.loads, its failure read as none."""
    try:
        json.loads(annotations.get(BOOST_ANNOTATION) or "")
    except (ValueError, TypeError, RecursionError):
        return {}
    return recorded(annotations)


@given(
    st.one_of(
        st.none(),
        st.sampled_from(["", 0, False, [], {}, "null", "[]", "{}", "{", "0", '{"app": 1}']),
        st.text(max_size=20),
        st.dictionaries(
            st.sampled_from(["app", "sidecar"]),
            st.fixed_dictionaries(
                {"requests": st.fixed_dictionaries({"cpu": st.sampled_from(["100m", "1", "x"])})}
            ),
        ).map(json.dumps),
    ),
    st.booleans(),
)
def test_a_pod_without_the_annotation_reads_as_none_without_parsing(
    value: Any, present: bool
) -> None:
    """An absent or empty annotation is no boost, as parsing it said (json.loads of "" failed and
    was read as none); any other value is read as before."""
    annotations = {BOOST_ANNOTATION: value} if present else {"other": "x"}
    assert recorded(annotations) == _recorded_by_parsing_everything(annotations)
    if not present or not value:
        assert recorded(annotations) == {}
