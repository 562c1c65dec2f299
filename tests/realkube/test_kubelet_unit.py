"""The harness's stand-in for the kubelet's resize status (tests.realkube.kubelet), without a
cluster: what it reports for a running pod, a resize that fits, and one that does not."""

from __future__ import annotations

import copy
from typing import Any

from tests.realkube.kubelet import reported_status, resize_verdict

NODE = {"cpu": 8000, "memory": 32 * 2**30}


def running(requests: dict[str, str], status_resources: dict[str, Any] | None) -> dict[str, Any]:
    container_status: dict[str, Any] = {"name": "app", "state": {"running": {}}}
    if status_resources is not None:
        container_status["resources"] = status_resources
    return {
        "spec": {"containers": [{"name": "app", "resources": {"requests": requests}}]},
        "status": {"containerStatuses": [container_status], "conditions": []},
    }


def test_a_running_pod_is_reported_with_its_resources_as_a_resize_capable_kubelet_does() -> None:
    pod = running({"cpu": "100m"}, None)
    status = reported_status(copy.deepcopy(pod), resize_verdict(pod, NODE, {}))
    assert status is not None
    [s] = status["containerStatuses"]
    assert s["resources"] == {"requests": {"cpu": "100m"}}
    assert s["allocatedResources"] == {"cpu": "100m"}
    # reported once: the next pass writes nothing
    again = copy.deepcopy(pod)
    again["status"] = status
    assert reported_status(again, None) is None


def test_a_pod_not_running_yet_is_left_to_kwok() -> None:
    pod = running({"cpu": "100m"}, None)
    pod["status"]["containerStatuses"][0]["state"] = {"waiting": {}}
    assert reported_status(pod, None) is None


def test_a_resize_that_fits_is_applied_and_one_that_cannot_is_pending_infeasible() -> None:
    pod = running({"cpu": "300m"}, {"requests": {"cpu": "100m"}})
    status = reported_status(copy.deepcopy(pod), resize_verdict(pod, NODE, {}))
    assert status is not None
    assert status["containerStatuses"][0]["resources"] == {"requests": {"cpu": "300m"}}
    assert status["conditions"] == []

    huge = running({"cpu": "9"}, {"requests": {"cpu": "100m"}})
    assert resize_verdict(huge, NODE, {}) == "Infeasible"
    status = reported_status(copy.deepcopy(huge), "Infeasible")
    assert status is not None
    assert status["containerStatuses"][0]["resources"] == {"requests": {"cpu": "100m"}}
    [pending] = status["conditions"]
    assert (pending["type"], pending["reason"]) == ("PodResizePending", "Infeasible")


def test_a_resize_that_fits_the_node_but_not_beside_its_pods_is_deferred() -> None:
    pod = running({"cpu": "3"}, {"requests": {"cpu": "100m"}})
    assert resize_verdict(pod, NODE, {"cpu": 6000}) == "Deferred"
    assert resize_verdict(pod, NODE, {"cpu": 4000}) is None


def test_pod_level_resources_are_reported_and_counted_where_the_release_has_them() -> None:
    """KEP-5419: status.resources (the pod-level values in force) and status.allocatedResources
    (the pod's requests, pod-level in place of the containers' sum); not before 1.36."""
    pod = running({}, None)
    pod["spec"]["resources"] = {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}
    assert resize_verdict(pod, {"cpu": 500, "memory": 2**30}, {}) == "Infeasible"
    older = reported_status(copy.deepcopy(pod), None)
    assert older is not None and "resources" not in older and "allocatedResources" not in older
    status = reported_status(copy.deepcopy(pod), None, pod_level=True)
    assert status is not None
    assert status["resources"] == {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}
    assert status["allocatedResources"] == {"cpu": "1000m"}
    resized = copy.deepcopy(pod)
    resized["status"] = status
    resized["spec"]["resources"]["requests"] = {"cpu": "500m"}
    pending = reported_status(copy.deepcopy(resized), "Deferred", pod_level=True)
    assert pending is not None and pending["resources"]["requests"] == {"cpu": "1"}  # kept
    done = reported_status(copy.deepcopy(resized), None, pod_level=True)
    assert done is not None and done["resources"]["requests"] == {"cpu": "500m"}
    assert done["allocatedResources"] == {"cpu": "500m"}
