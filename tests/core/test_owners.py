"""Pod -> workload from ownerReferences, with and without a cache of controllers."""

from __future__ import annotations

from typing import Any

from app.core.owners import workload_of_pod
from app.core.recommend.model import WorkloadKey


def pod(
    kind: str | None, name: str = "", labels: dict[str, str] | None = None, controller: bool = True
) -> dict[str, Any]:
    meta: dict[str, Any] = {"namespace": "shop", "generateName": "x-", "labels": labels or {}}
    if kind:
        meta["ownerReferences"] = [
            {
                "kind": kind,
                "name": name,
                "controller": controller,
                "apiVersion": "apps/v1",
                "uid": "u",
            }
        ]
    return {"metadata": meta}


def test_replicaset_with_template_hash_is_its_deployment() -> None:
    p = pod("ReplicaSet", "web-7d4b9c8f5", {"pod-template-hash": "7d4b9c8f5"})
    assert workload_of_pod(p) == WorkloadKey("shop", "Deployment", "web")


def test_replicaset_without_hash_is_itself() -> None:
    assert workload_of_pod(pod("ReplicaSet", "legacy")) == WorkloadKey(
        "shop", "ReplicaSet", "legacy"
    )
    p = pod("ReplicaSet", "web-abc", {"pod-template-hash": "zzz"})  # hash does not match the name
    assert workload_of_pod(p) == WorkloadKey("shop", "ReplicaSet", "web-abc")


def test_statefulset_daemonset_job() -> None:
    assert workload_of_pod(pod("StatefulSet", "db")) == WorkloadKey("shop", "StatefulSet", "db")
    assert workload_of_pod(pod("DaemonSet", "agent")) == WorkloadKey("shop", "DaemonSet", "agent")
    assert workload_of_pod(pod("Job", "backup-28000000")) == WorkloadKey(
        "shop", "Job", "backup-28000000"
    )


def test_lookup_follows_one_more_level() -> None:
    objects = {
        ("shop", "Job", "backup-28000000"): {
            "metadata": {
                "ownerReferences": [{"kind": "CronJob", "name": "backup", "controller": True}]
            }
        },
        ("shop", "ReplicaSet", "orphan-1"): {"metadata": {}},
    }
    lookup = lambda ns, kind, name: objects.get((ns, kind, name))  # noqa: E731
    assert workload_of_pod(pod("Job", "backup-28000000"), lookup=lookup) == WorkloadKey(
        "shop", "CronJob", "backup"
    )
    assert workload_of_pod(
        pod("ReplicaSet", "orphan-1", {"pod-template-hash": "1"}), lookup=lookup
    ) == WorkloadKey("shop", "ReplicaSet", "orphan-1")
    # Not in the cache (yet): fall back to the name rule.
    p = pod("ReplicaSet", "web-h1", {"pod-template-hash": "h1"})
    assert workload_of_pod(p, lookup=lookup) == WorkloadKey("shop", "Deployment", "web")


def test_bare_pod_and_non_controller_owner_have_no_workload() -> None:
    assert workload_of_pod(pod(None)) is None
    assert workload_of_pod(pod("ReplicaSet", "web-h", controller=False)) is None


def test_namespace_from_the_request_wins() -> None:
    # AdmissionReview carries the namespace; the pod object may not.
    p = pod("StatefulSet", "db")
    del p["metadata"]["namespace"]
    assert workload_of_pod(p, namespace="prod") == WorkloadKey("prod", "StatefulSet", "db")
