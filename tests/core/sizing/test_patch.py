"""The pod patch on a table of pods: each patch applies strictly, the result is a valid Pod, and a
second pass over the result changes nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.core.policy import Policy
from app.core.quantity import amount as quantity_amount
from app.core.recommendation import ContainerPolicy, Recommendation
from app.core.sizing.limitrange import LimitRangeItem, merged, parse_limit_range
from app.core.sizing.patch import (
    OBSERVED_ANNOTATION,
    UPDATES_ANNOTATION,
    PodInvalid,
    PodPatch,
    build_patch,
    escape_pointer,
)
from app.core.update_mode import UpdateMode
from tests.support.pods import (
    amounts,
    apply_strictly,
    assert_valid_pod,
    container,
    pod,
    policy,
    rec,
)

MI = 1024 * 1024
APP = rec(250, 256 * MI)


def run(
    p: dict[str, Any],
    recs: dict[str, Recommendation] | None = None,
    pol: Policy | None = None,
    limit_ranges: list[LimitRangeItem] | None = None,
    excluded: dict[str, set[str]] | None = None,
) -> tuple[PodPatch, dict[str, Any]]:
    """Builds, applies and validates the patch, checks the second pass is a no-op."""
    recs = {"app": APP} if recs is None else recs
    pol = policy() if pol is None else pol

    def build(doc: dict[str, Any]) -> PodPatch:
        return build_patch(
            doc, recs, pol, limit_ranges or [], parse=quantity_amount, excluded=excluded
        )

    result = build(p)
    patched = apply_strictly(p, result.operations)
    assert_valid_pod(patched)
    again = build(patched)
    assert again.operations == [], again
    return result, patched


def resources(p: dict[str, Any], i: int = 0, field: str = "containers") -> dict[str, Any]:
    c = p["spec"][field][i]
    return {"requests": amounts(c, "requests"), "limits": amounts(c, "limits")}


def updates(p: dict[str, Any]) -> dict[str, Any]:
    return json.loads(p["metadata"]["annotations"][UPDATES_ANNOTATION])  # type: ignore[no-any-return]


def test_no_resources_adds_the_maps_before_their_members() -> None:
    result, patched = run(pod(container("app")))
    paths = [(op["op"], op["path"]) for op in result.operations]
    assert paths[:4] == [
        ("add", "/spec/containers/0/resources"),
        ("add", "/spec/containers/0/resources/requests"),
        ("add", "/spec/containers/0/resources/requests/cpu"),
        ("add", "/spec/containers/0/resources/requests/memory"),
    ]
    assert paths[4:] == [
        ("add", "/metadata/annotations"),
        ("add", "/metadata/annotations/rightsizer.io~1updates"),
        ("add", "/metadata/annotations/rightsizer.io~1observed-containers"),
    ]
    c = patched["spec"]["containers"][0]
    assert c["resources"] == {"requests": {"cpu": "250m", "memory": "256Mi"}}
    assert patched["metadata"]["annotations"][OBSERVED_ANNOTATION] == "app"
    assert updates(patched) == {
        "policy": "shop/web",
        "containers": {
            "app": {
                "target": {"cpu": "250m", "memory": "256Mi"},
                "requests": {"cpu": "250m", "memory": "256Mi"},
            }
        },
    }
    [u] = result.updates
    assert (u.name, u.path, u.previous_requests, u.requests) == (
        "app",
        "/spec/containers/0",
        {},
        {"cpu": 250, "memory": 256 * MI},
    )


def test_only_requests_are_replaced_and_no_limit_appears() -> None:
    result, patched = run(pod(container("app", {"cpu": "1", "memory": "1Gi"})))
    assert resources(patched) == {"requests": {"cpu": 250, "memory": 256 * MI}, "limits": {}}
    assert {op["op"] for op in result.operations if "/resources/" in op["path"]} == {"replace"}
    assert result.updates[0].previous_requests == {"cpu": 1000, "memory": 1024 * MI}


def test_limits_keep_their_ratio_to_the_request() -> None:
    _, patched = run(
        pod(
            container("app", {"cpu": "100m", "memory": "100Mi"}, {"cpu": "300m", "memory": "200Mi"})
        )
    )
    assert resources(patched) == {
        "requests": {"cpu": 250, "memory": 256 * MI},
        "limits": {"cpu": 750, "memory": 512 * MI},
    }


def test_limit_ratio_rounds_down_to_whole_units() -> None:
    _, patched = run(
        pod(container("app", {"cpu": "3m", "memory": "3"}, {"cpu": "7m", "memory": "7"})),
        {"app": rec(10, 10)},
    )
    assert resources(patched)["limits"] == {"cpu": 23, "memory": 23}


def test_only_limits_request_becomes_target_and_limit_follows_it() -> None:
    # Kubernetes treats a missing request as equal to the limit; VPA keeps them equal.
    _, patched = run(pod(container("app", limits={"cpu": "1", "memory": "1Gi"})))
    assert resources(patched) == {
        "requests": {"cpu": 250, "memory": 256 * MI},
        "limits": {"cpu": 250, "memory": 256 * MI},
    }


def test_requests_only_leaves_limits_and_caps_the_request_at_the_limit() -> None:
    pol = policy("Initial", ContainerPolicy("app", controlled_values="RequestsOnly"))
    result, patched = run(
        pod(container("app", {"cpu": "100m", "memory": "1Gi"}, {"cpu": "200m", "memory": "2Gi"})),
        pol=pol,
    )
    assert resources(patched) == {
        "requests": {"cpu": 200, "memory": 256 * MI},
        "limits": {"cpu": 200, "memory": 2048 * MI},
    }
    assert not any("/limits" in op["path"] for op in result.operations)
    assert result.updates[0].notes == ("cpu capped to its limit (RequestsOnly)",)


def test_requests_only_with_only_limits() -> None:
    pol = policy("Recreate", ContainerPolicy("*", controlled_values="RequestsOnly"))
    _, patched = run(pod(container("app", limits={"cpu": "2", "memory": "128Mi"})), pol=pol)
    assert resources(patched) == {
        "requests": {"cpu": 250, "memory": 128 * MI},
        "limits": {"cpu": 2000, "memory": 128 * MI},
    }


def test_several_containers_each_from_its_own_recommendation() -> None:
    p = pod(
        container("app", {"cpu": "1"}),
        container("envoy", {"cpu": "50m", "memory": "64Mi"}, {"cpu": "100m", "memory": "64Mi"}),
        container("no-rec", {"cpu": "1"}),
        container("off", {"cpu": "1"}),
    )
    pol = policy("Recreate", ContainerPolicy("off", mode="Off"))
    recs = {"app": APP, "envoy": rec(20, 32 * MI), "off": rec(1, MI)}
    result, patched = run(p, recs, pol)
    assert [u.name for u in result.updates] == ["app", "envoy"]
    assert resources(patched, 1) == {
        "requests": {"cpu": 20, "memory": 32 * MI},
        "limits": {"cpu": 40, "memory": 32 * MI},
    }
    assert patched["spec"]["containers"][2:] == p["spec"]["containers"][2:]
    assert patched["metadata"]["annotations"][OBSERVED_ANNOTATION] == "app, envoy, no-rec, off"
    assert set(updates(patched)["containers"]) == {"app", "envoy"}


def test_init_containers_are_left_alone_and_sidecars_sized() -> None:
    init = [
        container("migrate", {"cpu": "1"}),
        container("proxy", {"cpu": "1"}, {"cpu": "2"}, restartPolicy="Always"),
    ]
    recs = {"app": APP, "migrate": rec(10, MI), "proxy": rec(100, 64 * MI)}
    result, patched = run(pod(container("app"), init=init), recs)
    assert patched["spec"]["initContainers"][0] == init[0]
    assert resources(patched, 1, "initContainers") == {
        "requests": {"cpu": 100, "memory": 64 * MI},
        "limits": {"cpu": 200},
    }
    assert [u.path for u in result.updates] == ["/spec/containers/0", "/spec/initContainers/1"]
    assert patched["metadata"]["annotations"][OBSERVED_ANNOTATION] == "app, proxy"


def test_ephemeral_containers_are_left_alone() -> None:
    p = pod(container("app"))
    p["spec"]["ephemeralContainers"] = [{"name": "debug", "image": "busybox"}]
    recs = {"app": APP, "debug": rec(10, MI)}
    _, patched = run(p, recs)
    assert patched["spec"]["ephemeralContainers"] == [{"name": "debug", "image": "busybox"}]


def test_annotation_keys_with_slash_and_tilde_are_escaped_and_kept() -> None:
    existing = {"example.com/owner": "team-a", "odd~key/x": "1"}
    result, patched = run(pod(container("app"), annotations=dict(existing)))
    annotations = patched["metadata"]["annotations"]
    assert {k: annotations[k] for k in existing} == existing
    assert not any(op["path"] == "/metadata/annotations" for op in result.operations)
    assert escape_pointer("odd~key/x") == "odd~0key~1x"
    assert escape_pointer("a/~b") == "a~1~0b"


def test_an_already_mutated_pod_yields_no_patch() -> None:
    _, patched = run(
        pod(container("app", {"cpu": "100m"}, {"cpu": "300m"}), annotations={"a/b": "c"})
    )
    assert build_patch(patched, {"app": APP}, policy(), parse=quantity_amount).operations == []


def test_existing_rightsizer_annotations_are_replaced_when_resizing() -> None:
    stale = {
        UPDATES_ANNOTATION: "not json",
        OBSERVED_ANNOTATION: "someone-else",
    }
    result, patched = run(pod(container("app", {"cpu": "1"}), annotations=stale))
    ops = {op["path"]: op["op"] for op in result.operations if "annotations" in op["path"]}
    assert ops == {
        "/metadata/annotations/rightsizer.io~1updates": "replace",
        "/metadata/annotations/rightsizer.io~1observed-containers": "replace",
    }
    assert patched["metadata"]["annotations"][OBSERVED_ANNOTATION] == "app"


def test_a_record_from_another_target_does_not_stop_a_resize() -> None:
    _, once = run(pod(container("app", {"cpu": "1"})))
    _, twice = run(once, {"app": rec(500, 256 * MI)})
    assert resources(twice)["requests"]["cpu"] == 500
    assert updates(twice)["containers"]["app"]["target"]["cpu"] == "500m"


def test_a_container_changed_by_someone_else_after_us_is_sized_again() -> None:
    _, once = run(pod(container("app", {"cpu": "1"})))
    once["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "900m"
    _, twice = run(once)
    assert resources(twice)["requests"]["cpu"] == 250


def test_equal_amounts_in_other_notation_are_no_change() -> None:
    p = pod(container("app", {"cpu": "0.25", "memory": "256Mi"}))
    result = build_patch(p, {"app": APP}, policy(), parse=quantity_amount)
    assert (result.operations, result.reason) == ([], "up-to-date")


@pytest.mark.parametrize(
    ("pol", "reason"),
    [
        (None, "no-policy"),
        (Policy(name="web", namespace="shop", update_mode=UpdateMode.OFF), "mode-off"),
    ],
)
def test_no_policy_or_update_mode_off_changes_nothing(pol: Policy | None, reason: str) -> None:
    result = build_patch(pod(container("app")), {"app": APP}, pol, parse=quantity_amount)
    assert (result.operations, result.reason) == ([], reason)


def test_no_recommendation_changes_nothing() -> None:
    result = build_patch(pod(container("app")), {}, policy(), parse=quantity_amount)
    assert (result.operations, result.reason) == ([], "no-recommendation")


def test_uncontrolled_and_excluded_resources_are_left_alone() -> None:
    p = pod(container("app", {"cpu": "1", "memory": "1Gi"}), container("b", {"cpu": "1"}))
    pol = policy("Recreate", ContainerPolicy("app", controlled_resources=("cpu",)))
    _, patched = run(p, {"app": APP, "b": APP}, pol, excluded={"b": {"cpu"}})
    assert resources(patched, 0)["requests"] == {"cpu": 250, "memory": 1024 * MI}
    assert resources(patched, 1)["requests"] == {"cpu": 1000, "memory": 256 * MI}


def test_policy_bounds_clamp_the_target() -> None:
    pol = policy(
        "Recreate", ContainerPolicy("*", min_allowed={"memory": 512 * MI}, max_allowed={"cpu": 100})
    )
    result, patched = run(pod(container("app")), pol=pol)
    assert resources(patched)["requests"] == {"cpu": 100, "memory": 512 * MI}
    assert result.updates[0].notes == ("cpu capped to maxAllowed", "memory raised to minAllowed")


def test_container_limit_range_max_bounds_the_scaled_limit() -> None:
    lr = [LimitRangeItem("Container", max={"cpu": 400})]
    result, patched = run(
        pod(container("app", {"cpu": "100m"}, {"cpu": "300m"})),
        {"app": rec(1000, 256 * MI)},
        limit_ranges=lr,
    )
    # request 100 x 400 / 300 = 133; the limit is the max itself.
    assert resources(patched) == {
        "requests": {"cpu": 133, "memory": 256 * MI},
        "limits": {"cpu": 400},
    }
    assert "cpu capped to fit max in container LimitRange" in result.updates[0].notes


def test_container_limit_range_min_and_default_limit() -> None:
    lr = [LimitRangeItem("Container", min={"memory": 300 * MI}, default={"cpu": 500})]
    _, patched = run(pod(container("app", {"cpu": "100m"})), limit_ranges=lr)
    # No limit but a LimitRange default: VPA scales the default as if it were the limit.
    assert resources(patched) == {
        "requests": {"cpu": 250, "memory": 300 * MI},
        "limits": {"cpu": 1250},
    }


def test_pod_limit_range_max_is_split_in_proportion() -> None:
    lr = [LimitRangeItem("Pod", max={"cpu": 600})]
    p = pod(
        container("app", {"cpu": "100m"}, {"cpu": "200m"}),
        container("b", {"cpu": "100m"}, {"cpu": "100m"}),
        container("fixed", {"cpu": "100m"}, {"cpu": "200m"}),
    )
    recs = {"app": rec(500, MI), "b": rec(500, MI)}
    _, patched = run(p, recs, limit_ranges=lr)
    # Limits would be 1000 + 500 (+200 fixed) > 600: the 400 left are shared 1000:500.
    assert resources(patched, 0)["limits"]["cpu"] == 266
    assert resources(patched, 1)["limits"]["cpu"] == 133
    total = sum(resources(patched, i)["limits"]["cpu"] for i in range(3))
    assert total <= 600


def test_zero_limit_is_left_alone() -> None:
    result, patched = run(pod(container("app", {"memory": "0"}, {"memory": "0"})))
    assert resources(patched)["limits"] == {"memory": 0}
    assert "memory left alone: its limit is 0" in result.updates[0].notes


@pytest.mark.parametrize(
    "bad",
    [
        {"spec": []},
        {"spec": {"containers": {}}},
        {"spec": {"containers": [{"image": "x"}]}},
        {"spec": {"containers": [{"name": "app", "resources": []}]}},
        {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "lots"}}}]}},
    ],
)
def test_malformed_pods_raise_pod_invalid(bad: dict[str, Any]) -> None:
    with pytest.raises(PodInvalid):
        build_patch(bad, {"app": APP}, policy(), parse=quantity_amount)


def test_limit_range_parsing_and_merging() -> None:
    obj = {
        "spec": {
            "limits": [
                {"type": "Container", "max": {"cpu": "2", "memory": "1Gi"}, "min": {"cpu": "10m"}},
                {"type": "Container", "max": {"cpu": "1"}, "default": {"memory": "512Mi"}},
                {"type": "Pod", "max": {"memory": "4Gi", "ephemeral-storage": "1Gi"}},
                {"type": "PersistentVolumeClaim", "max": {"storage": "1Gi"}},
            ]
        }
    }
    items = parse_limit_range(obj, quantity_amount)
    assert len(items) == 3
    c = merged(items, "Container")
    assert c is not None
    # Stored as the API server defaults them: a missing default limit is the max, a missing
    # default request the default limit (SetDefaults_LimitRangeItem); the first item's wins.
    assert (dict(c.max), dict(c.min), dict(c.default), dict(c.default_request)) == (
        {"cpu": 1000, "memory": 1024 * MI},
        {"cpu": 10},
        {"cpu": 2000, "memory": 1024 * MI},
        {"cpu": 2000, "memory": 1024 * MI},
    )
    assert merged(items, "Pod") == LimitRangeItem("Pod", max={"memory": 4096 * MI})
    assert merged([], "Pod") is None


# Issue #15: kube-apiserver's LimitRanger and pod-level resource rules hold for every patched pod.


def limit_range(*items: dict[str, Any]) -> list[LimitRangeItem]:
    """A LimitRange object read as the webhook reads it (defaults and ratios included)."""
    return parse_limit_range({"spec": {"limits": list(items)}}, quantity_amount)


def requests_only() -> Policy:
    return policy("Recreate", ContainerPolicy("*", controlled_values="RequestsOnly"))


def test_requests_only_keeps_the_container_limit_request_ratio() -> None:
    lr = limit_range({"type": "Container", "maxLimitRequestRatio": {"cpu": "4", "memory": "2"}})
    p = pod(container("app", {"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "2Gi"}))
    result, patched = run(p, {"app": rec(100, 200 * MI)}, requests_only(), lr)
    # Targets alone would give ratios 20 and 10.24: the request stops at limit / ratio.
    assert resources(patched) == {
        "requests": {"cpu": 500, "memory": 1024 * MI},
        "limits": {"cpu": 2000, "memory": 2048 * MI},
    }
    assert "cpu raised to keep its limit within maxLimitRequestRatio" in result.updates[0].notes


def test_a_ratio_that_does_not_divide_rounds_the_request_up() -> None:
    lr = limit_range({"type": "Container", "maxLimitRequestRatio": {"cpu": "3"}})
    p = pod(container("app", {"cpu": "1"}, {"cpu": "1001m"}))
    _, patched = run(p, {"app": rec(10, MI)}, requests_only(), lr)
    assert resources(patched)["requests"]["cpu"] == 334  # 1001 / 334 <= 3 < 1001 / 333


def test_a_container_max_cap_never_breaks_the_ratio() -> None:
    lr = limit_range(
        {"type": "Container", "max": {"cpu": "999m"}, "maxLimitRequestRatio": {"cpu": "2.5"}}
    )
    p = pod(container("app", {"cpu": "100m"}, {"cpu": "250m"}))
    _, patched = run(p, {"app": rec(5000, MI)}, limit_ranges=lr)
    # Capped where the scaled limit meets the max (399m), 999 / 399 would exceed 2.5.
    assert resources(patched) == {
        "requests": {"cpu": 400, "memory": MI},
        "limits": {"cpu": 999},
    }


def test_requests_only_keeps_the_pod_limit_request_ratio() -> None:
    lr = limit_range({"type": "Pod", "maxLimitRequestRatio": {"cpu": "2"}})
    p = pod(
        container("app", {"cpu": "1"}, {"cpu": "1"}),
        container("b", {"cpu": "1"}, {"cpu": "1"}),
    )
    recs = {"app": rec(100, MI), "b": rec(100, MI)}
    _, patched = run(p, recs, requests_only(), lr)
    # Pod limits 2000m need pod requests of 1000m: both targets scaled up alike.
    assert [resources(patched, i)["requests"]["cpu"] for i in range(2)] == [500, 500]


def test_pod_min_scales_the_targets_up_in_proportion() -> None:
    lr = limit_range({"type": "Pod", "min": {"cpu": "500m"}})
    p = pod(container("app"), container("b"))
    _, patched = run(p, {"app": rec(100, MI), "b": rec(300, MI)}, limit_ranges=lr)
    assert [resources(patched, i)["requests"]["cpu"] for i in range(2)] == [125, 375]


def test_pod_max_counts_a_plain_init_container_with_the_sidecars_before_it() -> None:
    lr = limit_range({"type": "Pod", "max": {"cpu": "1"}})
    init = [
        container("proxy", {"cpu": "100m"}, {"cpu": "100m"}, restartPolicy="Always"),
        container("migrate", {"cpu": "800m"}, {"cpu": "800m"}),
    ]
    p = pod(container("app", {"cpu": "100m"}, {"cpu": "100m"}), init=init)
    result, patched = run(p, {"app": rec(300, MI), "proxy": rec(300, MI)}, limit_ranges=lr)
    # While migrate runs, the proxy runs too: 800m + proxy must fit 1 cpu.
    proxy = resources(patched, 0, "initContainers")
    assert proxy["limits"]["cpu"] + 800 <= 1000
    assert proxy["requests"]["cpu"] == 200
    assert patched["spec"]["initContainers"][1] == init[1]
    assert any("scaled to fit max in pod LimitRange" in n for u in result.updates for n in u.notes)


def test_a_pod_sizing_cannot_make_valid_is_left_unchanged_with_the_reason() -> None:
    lr = limit_range({"type": "Container", "min": {"cpu": "100m"}})
    p = pod(container("app", {"cpu": "1"}), container("b", {"cpu": "50m"}))
    pol = policy("Recreate", ContainerPolicy("b", mode="Off"))
    result = build_patch(p, {"app": APP}, pol, lr, parse=quantity_amount)
    assert (result.operations, result.reason) == ([], "unfit")
    assert "b: minimum cpu usage per Container is 100m, but request is 50m" in result.detail


def test_pod_level_request_is_sized_to_the_sum_of_the_containers() -> None:
    p = pod(container("app", {"cpu": "500m"}), container("b", {"cpu": "500m"}))
    p["spec"]["resources"] = {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}
    result, patched = run(p, {"app": rec(900, MI), "b": rec(2700, MI)})
    assert [resources(patched, i)["requests"]["cpu"] for i in range(2)] == [900, 2700]
    # issue 19: the pod-level request is what the containers need, its limit keeps its ratio
    assert patched["spec"]["resources"] == {
        "requests": {"cpu": "3600m"},
        "limits": {"cpu": "7200m"},
    }
    assert result.pod_level is not None
    assert (result.pod_level.previous_requests, result.pod_level.requests) == (
        {"cpu": 1000},
        {"cpu": 3600},
    )


def test_pod_level_requests_bound_the_sum_of_the_containers_under_a_pod_max() -> None:
    p = pod(container("app", {"cpu": "500m"}), container("b", {"cpu": "500m"}))
    p["spec"]["resources"] = {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}
    lr = limit_range({"type": "Pod", "max": {"cpu": "2"}})
    result, patched = run(p, {"app": rec(900, MI), "b": rec(2700, MI)}, limit_ranges=lr)
    cpu = [resources(patched, i)["requests"]["cpu"] for i in range(2)]
    assert cpu == [500, 1500]  # the 2000m the Pod max allows, shared 900:2700
    assert patched["spec"]["resources"] == {"requests": {"cpu": "2"}, "limits": {"cpu": "2"}}
    assert "cpu scaled to fit pod-level requests" in result.updates[0].notes
    assert result.pod_level is not None
    assert "pod-level cpu capped to fit max in pod LimitRange" in result.pod_level.notes


def test_pod_level_limit_caps_each_container_limit() -> None:
    p = pod(container("app", {"cpu": "500m"}, {"cpu": "1"}))
    p["spec"]["resources"] = {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}
    lr = limit_range({"type": "Pod", "max": {"cpu": "4"}})
    _, patched = run(p, {"app": rec(3000, MI)}, limit_ranges=lr)
    assert patched["spec"]["resources"] == {"requests": {"cpu": "3"}, "limits": {"cpu": "4"}}
    assert resources(patched)["limits"]["cpu"] == 4000  # not 6000: the pod-level limit
    assert resources(patched)["requests"]["cpu"] == 2000  # where its limit reaches it


def test_pod_level_request_defaults_from_the_containers_when_only_a_limit_is_set() -> None:
    p = pod(container("app", {"cpu": "500m"}), container("b", {"cpu": "500m"}))
    p["spec"]["resources"] = {"limits": {"cpu": "4"}}
    _, patched = run(p, {"app": rec(2000, MI), "b": rec(2000, MI)})
    # kube-apiserver defaults the pod-level request to the containers' 1000m before webhooks:
    # the limit keeps that 4:1 ratio to the new request.
    assert patched["spec"]["resources"] == {"requests": {"cpu": "4"}, "limits": {"cpu": "16"}}
    assert sum(resources(patched, i)["requests"]["cpu"] for i in range(2)) == 4000


@pytest.mark.parametrize(
    ("requests", "limits", "target", "kept"),
    [
        ({"cpu": "500u", "memory": "1Gi"}, None, rec(1, 256 * MI), "cpu"),
        ({"cpu": "1", "memory": "268435456500m"}, None, rec(250, 256 * MI + 1), "memory"),
        ({"cpu": "0.25", "memory": "1Gi"}, {"cpu": "0.5", "memory": "1Gi"}, APP, "cpu"),
    ],
)
def test_the_updates_annotation_records_the_quantities_the_pod_holds(
    requests: dict[str, str],
    limits: dict[str, str] | None,
    target: Recommendation,
    kept: str,
) -> None:
    """Issue 50 item 5: a value sizing leaves as it is (the pod's own `500u` is 1m to sizing,
    which counts in whole millicores) was recorded as sizing formats it (`1m`), not as the pod
    holds it, beside the values the patch changes."""
    _, patched = run(pod(container("app", requests, limits)), {"app": target})
    held = patched["spec"]["containers"][0]["resources"]
    assert held["requests"][kept] == requests[kept]  # left as it was
    assert held["requests"] != requests  # the other resource was resized
    record = updates(patched)["containers"]["app"]
    assert record["requests"] == held["requests"]
    assert record.get("limits", {}) == {r: held["limits"][r] for r in record.get("limits", {})}
