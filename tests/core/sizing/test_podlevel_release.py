"""Pod-level resources by the rules of the API server's release: kube-apiserver 1.33 compares every
resource the containers request with the pod-level request, one the pod does not set as 0
(`validatePodResourceConsistency`, pkg/apis/core/validation, v1.33.13); 1.34 and later skip a
resource without a pod-level request. Found by tests/realkube/test_limitranges_real.py against the
real 1.33: the webhook added a memory request to a pod whose `spec.resources` set only cpu, and
kube-apiserver refused the pod ("spec.resources.requests[memory]: Invalid value: "0": must be
greater than or equal to aggregate container requests of 39355")."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.quantity import amount
from app.core.sizing.patch import build_patch, size_pod
from app.core.sizing.podlimits import PodLevel, unset_request_is_zero
from tests.support.pods import apply_strictly, container, pod, policy, rec

MI = 1024 * 1024


def refused_by_1_33(p: dict[str, Any]) -> list[str]:
    """What kube-apiserver 1.33 says of the pod's pod-level requests (containers and sidecars
    summed: the pods here have no init containers)."""
    level = p["spec"].get("resources")
    if level is None:
        return []
    requests = level.get("requests") or {}
    totals: dict[str, int] = {}
    for c in p["spec"]["containers"]:
        for res, value in ((c.get("resources") or {}).get("requests") or {}).items():
            totals[res] = totals.get(res, 0) + amount(res, value)
    return [
        f"spec.resources.requests[{res}]"
        for res, total in sorted(totals.items())
        if total > amount(res, requests.get(res, "0"))
    ]


def cpu_only_pod() -> dict[str, Any]:
    """Pod-level cpu, containers asking cpu only: valid at every release as written."""
    p = pod(container("app", {"cpu": "100m"}))
    p["spec"]["resources"] = {"requests": {"cpu": "1"}}
    return p


@pytest.mark.parametrize(("release", "zero"), [(33, True), (34, False), (37, False), (None, False)])
def test_only_1_33_counts_an_unset_pod_level_request_as_zero(
    release: int | None, zero: bool
) -> None:
    assert unset_request_is_zero(release) is zero
    level = PodLevel({"cpu": 1000}, {}, unset_request_is_zero(release))
    assert level.request_budget("cpu") == 1000
    assert level.request_budget("memory") == (0 if zero else None)


def test_on_1_33_the_webhook_adds_no_request_the_pod_level_values_leave_no_room_for() -> None:
    p = cpu_only_pod()
    assert refused_by_1_33(p) == []
    recs = {"app": rec(300, 300 * MI)}
    current = apply_strictly(
        p, build_patch(p, recs, policy(), [], parse=amount, release=37).operations
    )
    assert current["spec"]["containers"][0]["resources"]["requests"]["memory"] == "300Mi"
    assert refused_by_1_33(current) == ["spec.resources.requests[memory]"]  # what 1.33 refused

    old = apply_strictly(p, build_patch(p, recs, policy(), [], parse=amount, release=33).operations)
    assert refused_by_1_33(old) == []
    assert "memory" not in old["spec"]["containers"][0]["resources"]["requests"]


def test_the_updater_sizes_by_the_same_release_rules_as_the_webhook() -> None:
    p = cpu_only_pod()
    recs = {"app": rec(300, 300 * MI)}
    for release in (33, 37):
        patch = build_patch(p, recs, policy(), [], parse=amount, release=release)
        sizing = size_pod(p, recs, policy(), [], parse=amount, release=release)
        assert sizing.updates == patch.updates
        assert (sizing.reason, sizing.detail) == (patch.reason, patch.detail)
