"""Pod-level resources (issue 19): the webhook's patch sizes `spec.resources` to what the pod's
containers need, containers sharing the pod's budget keep sharing it, and the updater judges and
places such pods by their pod-level values and evicts rather than resizes them. Every patch here
applies strictly, gives a valid pod and a second pass that changes nothing (`run`)."""

from __future__ import annotations

import json
from typing import Any

from app.core.nodes import NodeView
from app.core.pods import PodView
from app.core.policy import Policy
from app.core.quantity import amount as quantity_amount
from app.core.recommendation import ContainerPolicy, Recommendation
from app.core.resources import Resources
from app.core.sizing.fit import NodeRoom
from app.core.sizing.limitrange import LimitRangeItem, parse_limit_range
from app.core.sizing.patch import UPDATES_ANNOTATION, PodPatch, build_patch
from app.core.sizing.plan import (
    POD_VIEW,
    change_details,
    describe,
    node_rooms,
    not_resizable,
    placement,
    pod_requests,
    resize_body,
    workload_candidates,
)
from app.core.sizing.podlevel_resize import FEATURE, pod_level_refusal
from app.core.sizing.podlimits import PodLevel, violations
from app.core.sizing.priority import UpdaterSettings
from app.core.workload_key import WorkloadKey
from tests.support.pods import apply_strictly, assert_valid_pod, container, pod, policy, rec

MI = 1024 * 1024
SHARED = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}}


def run(
    p: dict[str, Any],
    recs: dict[str, Recommendation],
    pol: Policy | None = None,
    limit_ranges: list[LimitRangeItem] | None = None,
    excluded: dict[str, set[str]] | None = None,
) -> tuple[PodPatch, dict[str, Any]]:
    pol = policy() if pol is None else pol

    def build(doc: dict[str, Any]) -> PodPatch:
        return build_patch(
            doc, recs, pol, limit_ranges or [], parse=quantity_amount, excluded=excluded
        )

    result = build(p)
    patched = apply_strictly(p, result.operations)
    assert_valid_pod(patched)
    assert build(patched).operations == []
    return result, patched


def sharing_pod(**pod_level: Any) -> dict[str, Any]:
    p = pod(container("app"), container("proxy"))
    p["spec"]["resources"] = pod_level or json.loads(json.dumps(SHARED))
    return p


def limit_range(*items: dict[str, Any]) -> list[LimitRangeItem]:
    return parse_limit_range({"spec": {"limits": list(items)}}, quantity_amount)


def test_containers_sharing_the_pod_budget_keep_sharing_it_and_the_pod_gets_their_sum() -> None:
    result, patched = run(sharing_pod(), {"app": rec(300, 300 * MI), "proxy": rec(200, 50 * MI)})
    assert [c.get("resources") for c in patched["spec"]["containers"]] == [None, None]
    assert patched["spec"]["resources"] == {
        "requests": {"cpu": "500m", "memory": "350Mi"},
        "limits": {"cpu": "1", "memory": "700Mi"},  # the 1:2 ratio of the pod as written
    }
    assert result.updates == ()  # no container changes
    assert result.pod_level is not None
    assert result.pod_level.previous_requests == {"cpu": 1000, "memory": 1024 * MI}
    record = json.loads(patched["metadata"]["annotations"][UPDATES_ANNOTATION])
    assert record["pod"] == {
        "requests": {"cpu": "500m", "memory": "350Mi"},
        "limits": {"cpu": "1", "memory": "700Mi"},
    }


def test_a_sharing_container_without_a_recommendation_leaves_the_pod_level_value_alone() -> None:
    pol = policy("Recreate", ContainerPolicy("proxy", mode="Off"))
    result, patched = run(sharing_pod(), {"app": rec(300, 300 * MI)}, pol)
    assert patched["spec"]["resources"] == SHARED  # what proxy needs is not known
    assert patched["spec"]["containers"][0].get("resources") is None  # app keeps sharing
    assert result.operations == []


def test_a_container_with_its_own_request_counts_it_when_it_is_not_sized() -> None:
    p = pod(container("app"), container("batch", {"cpu": "700m"}))
    p["spec"]["resources"] = {"requests": {"cpu": "1"}}
    pol = policy("Recreate", ContainerPolicy("batch", mode="Off"))
    _, patched = run(p, {"app": rec(300, 300 * MI)}, pol)
    assert patched["spec"]["resources"] == {"requests": {"cpu": "1"}}  # 300m + 700m
    _, patched = run(p, {"app": rec(500, 300 * MI)}, pol)
    assert patched["spec"]["resources"] == {"requests": {"cpu": "1200m"}}


def test_a_container_policys_bounds_and_another_controllers_resource_count() -> None:
    pol = policy("Recreate", ContainerPolicy("app", max_allowed={"cpu": 100}))
    _, patched = run(sharing_pod(), {"app": rec(300, 300 * MI), "proxy": rec(200, 50 * MI)}, pol)
    assert patched["spec"]["resources"]["requests"]["cpu"] == "300m"  # 100m (maxAllowed) + 200m
    # An HPA scaling proxy on cpu: nothing says what proxy needs, the pod-level cpu stays.
    _, patched = run(
        sharing_pod(),
        {"app": rec(300, 300 * MI), "proxy": rec(200, 50 * MI)},
        excluded={"proxy": {"cpu"}},
    )
    assert patched["spec"]["resources"]["requests"] == {"cpu": "1", "memory": "350Mi"}


def test_requests_only_keeps_the_pod_level_limit() -> None:
    pol = policy("Recreate", ContainerPolicy("*", controlled_values="RequestsOnly"))
    result, patched = run(
        sharing_pod(), {"app": rec(3000, 300 * MI), "proxy": rec(200, 50 * MI)}, pol
    )
    assert patched["spec"]["resources"] == {
        "requests": {"cpu": "2", "memory": "350Mi"},  # cpu capped at its limit
        "limits": {"cpu": "2", "memory": "2Gi"},
    }
    assert result.pod_level is not None
    assert "pod-level cpu capped to its limit (RequestsOnly)" in result.pod_level.notes


def test_a_pod_limitrange_bounds_the_pod_level_values() -> None:
    lr = limit_range({"type": "Pod", "min": {"cpu": "800m"}, "max": {"memory": "512Mi"}})
    result, patched = run(
        sharing_pod(), {"app": rec(300, 300 * MI), "proxy": rec(200, 500 * MI)}, limit_ranges=lr
    )
    assert patched["spec"]["resources"] == {
        "requests": {"cpu": "800m", "memory": "512Mi"},
        "limits": {"cpu": "1600m", "memory": "512Mi"},
    }
    assert result.pod_level is not None
    assert "pod-level cpu raised to fit min in pod LimitRange" in result.pod_level.notes


def test_a_plain_init_container_larger_than_the_containers_raises_the_pod_request() -> None:
    p = sharing_pod(requests={"cpu": "1"})
    p["spec"]["initContainers"] = [container("migrate", {"cpu": "2"}, {"cpu": "2"})]
    result, patched = run(p, {"app": rec(300, 300 * MI), "proxy": rec(200, 50 * MI)})
    # kube-apiserver requires the pod-level request to cover migrate's 2 cpu (KEP-753)
    assert patched["spec"]["resources"] == {"requests": {"cpu": "2"}}
    assert result.pod_level is not None
    assert "pod-level cpu raised to the containers' effective requests" in result.pod_level.notes


def test_update_mode_off_leaves_pod_level_values_alone() -> None:
    result = build_patch(
        sharing_pod(),
        {"app": rec(300, 300 * MI), "proxy": rec(200, 50 * MI)},
        policy("Off"),
        parse=quantity_amount,
    )
    assert result.operations == []


# The updater -------------------------------------------------------------------------------------
W = WorkloadKey("shop", "Deployment", "web")
NOW = 1_000_000.0


def live(
    name: str = "web-1", pod_level: dict[str, Any] | None = None, **container_resources: Any
) -> PodView:
    spec: dict[str, Any] = {
        "nodeName": "n1",
        "containers": [
            {"name": "app", **({"resources": container_resources} if container_resources else {})},
            {"name": "proxy"},
        ],
    }
    spec["resources"] = pod_level if pod_level is not None else SHARED
    return PodView.parse(
        {
            "metadata": {"name": name, "namespace": "shop", "uid": f"uid-{name}"},
            "spec": spec,
            "status": {
                "phase": "Running",
                "startTime": "1970-01-01T00:00:00+00:00",
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }
    )


def bounded(cpu: int, memory: int) -> Recommendation:
    r = Resources(cpu, memory)
    return Recommendation(r, Resources(cpu // 2, memory // 2), Resources(cpu * 2, memory * 2), r)


RECS = {"app": bounded(300, 300 * MI), "proxy": bounded(200, 50 * MI)}


def test_a_pod_whose_pod_level_values_change_is_a_candidate_judged_at_pod_level() -> None:
    pol = policy("Recreate")
    [c] = workload_candidates(W, [live()], pol, RECS, None, (), NOW, UpdaterSettings())
    # the pod-level request against the sums of the bounds: cpu 1000m is not above the summed
    # upper bound (600m + 400m), memory 1Gi is (600Mi + 100Mi)
    assert c.reason == "request outside the recommended range"
    assert not c.priority.scale_up
    assert c.patch.pod_level is not None
    details = change_details(c)
    assert details["after"][POD_VIEW]["requests"] == {"cpu": 500, "memory": 350 * MI}
    assert describe(details["after"]) == "spec.resources[cpu=500m, memory=350Mi]"


def test_a_pod_level_request_within_the_summed_bounds_waits_like_any_other() -> None:
    within = live(pod_level={"requests": {"cpu": "600m", "memory": "400Mi"}})
    young = PodView.parse(
        {
            **within.wire,
            "status": {"phase": "Running", "startTime": "1970-01-12T13:46:00+00:00"},  # 40 s
        }
    )
    pol = policy("Recreate")
    assert workload_candidates(W, [young], pol, RECS, None, (), NOW, UpdaterSettings()) == []
    [c] = workload_candidates(W, [within], pol, RECS, None, (), NOW, UpdaterSettings())
    assert c.reason.startswith("requests differ from the target by")


def test_sharing_containers_are_never_judged_as_missing_a_request() -> None:
    """Before: a container without a request counted as 'outside the range' at once; sharing
    the pod's budget, it has none on purpose."""
    holding = live(pod_level={"requests": {"cpu": "500m", "memory": "350Mi"}})
    pol = policy("Recreate")
    assert workload_candidates(W, [holding], pol, RECS, None, (), NOW, UpdaterSettings()) == []


def test_pod_level_pods_resize_where_the_release_allows_and_count_by_pod_level_requests() -> None:
    p = live()
    pol = policy("InPlaceOrRecreate")
    [c] = workload_candidates(W, [p], pol, RECS, None, (), NOW, UpdaterSettings())
    why = not_resizable(c, p, 34, (FEATURE,))
    assert why is not None and why.startswith("Kubernetes 1.34 cannot resize a pod with pod-level")
    assert not_resizable(c, p, 37, ()) == pod_level_refusal(37, True, "n1", ())
    assert not_resizable(c, p, 37, (FEATURE,)) is None
    assert resize_body(c).to_dict() == {
        "spec": {
            "resources": {
                "requests": {"cpu": "500m", "memory": "350Mi"},
                "limits": {"cpu": "1", "memory": "700Mi"},  # kept in ratio
            }
        }
    }
    assert pod_requests(p) == (1000, 1024 * MI)  # not the containers' (none)
    node = NodeView.parse(
        {
            "metadata": {"name": "n1"},
            "spec": {},
            "status": {
                "allocatable": {"cpu": "4", "memory": "8Gi"},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }
    )
    [room] = node_rooms([node], [p])
    assert (room.cpu_free, room.memory_free) == (3000, 7 * 1024 * MI)
    placed = placement(c, [NodeRoom("n1", 4000, 8192 * MI, (), ())])
    assert placed is not None
    assert (placed[0].cpu_free, placed[0].memory_free) == (4500, (8192 + 1024 - 350) * MI)


def test_a_pod_level_request_above_the_pod_level_limit_is_a_violation() -> None:
    """ValidatePodResourceRequirements refuses it (found by the webhook's admission property:
    a sidecar sized up raised the pod-level request past a RequestsOnly pod-level limit)."""
    refused = violations([], [], PodLevel(requests={"cpu": 5}, limits={"cpu": 4}))
    assert any("must be less than or equal to cpu limit" in r for r in refused), refused
    assert violations([], [], PodLevel(requests={"cpu": 4}, limits={"cpu": 4})) == []


def test_the_updates_annotation_records_a_pod_level_value_left_as_the_pod_wrote_it() -> None:
    """Issue 50 item 5, at pod level: the CPU the pod's containers need is already what the pod
    holds (`500u`, 1m to sizing), so it stays as written and is recorded so."""
    p = sharing_pod(requests={"cpu": "500u", "memory": "1Gi"})
    _, patched = run(p, {"app": rec(1, 300 * MI), "proxy": rec(0, 50 * MI)})
    assert patched["spec"]["resources"]["requests"] == {"cpu": "500u", "memory": "350Mi"}
    record = json.loads(patched["metadata"]["annotations"][UPDATES_ANNOTATION])
    assert record["pod"]["requests"] == {"cpu": "500u", "memory": "350Mi"}
