"""Pod -> workload from ownerReferences, with and without a cache of controllers."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.core.owners import workload_of_pod
from app.core.workload_key import WorkloadKey


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
    objects: dict[tuple[str, str, str], dict[str, Any]] = {
        ("shop", "Job", "backup-28000000"): {
            "metadata": {
                "ownerReferences": [{"kind": "CronJob", "name": "backup", "controller": True}]
            }
        },
        ("shop", "ReplicaSet", "orphan-1"): {"metadata": {}},
    }

    def lookup(ns: str, kind: str, name: str) -> dict[str, Any] | None:
        return objects.get((ns, kind, name))

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


# --- the topmost well-known or scalable controller (VPA's controller fetcher) -----------------

SCALABLE = {("argoproj.io", "Rollout"), ("kafka.example.io", "Cluster")}


def scalable(group: str, kind: str) -> bool:
    return (group, kind) in SCALABLE


def ref(api_version: str, kind: str, name: str) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "name": name, "controller": True, "uid": name}


def owned_pod(owner: dict[str, Any], labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta = {"namespace": "shop", "labels": labels or {}, "ownerReferences": [owner]}
    return {"metadata": meta}


def lookup_of(objects: dict[tuple[str, str], dict[str, Any] | None]) -> Any:
    """A cache of controllers: (kind, name) -> the controller reference it carries."""

    def lookup(ns: str, kind: str, name: str) -> dict[str, Any] | None:
        if (kind, name) not in objects:
            return None
        owner = objects[(kind, name)]
        return {"metadata": {"ownerReferences": [owner] if owner else []}}

    return lookup


def test_a_replicaset_of_a_scalable_custom_controller_is_that_controllers() -> None:
    lookup = lookup_of({("ReplicaSet", "web-5f"): ref("argoproj.io/v1alpha1", "Rollout", "web")})
    p = owned_pod(ref("apps/v1", "ReplicaSet", "web-5f"), {"rollouts-pod-template-hash": "5f"})
    w = workload_of_pod(p, lookup=lookup, scalable=scalable)
    assert w == WorkloadKey("shop", "Rollout.argoproj.io", "web")
    assert (w.group, w.resource_kind) == ("argoproj.io", "Rollout")


def test_the_topmost_scalable_controller_wins_over_the_well_known_ones() -> None:
    lookup = lookup_of(
        {
            ("ReplicaSet", "broker-7c"): ref("apps/v1", "Deployment", "broker"),
            ("Deployment", "broker"): ref("kafka.example.io/v1", "Cluster", "events"),
        }
    )
    p = owned_pod(ref("apps/v1", "ReplicaSet", "broker-7c"))
    assert workload_of_pod(p, lookup=lookup, scalable=scalable) == WorkloadKey(
        "shop", "Cluster.kafka.example.io", "events"
    )


def test_an_owner_without_scale_stops_at_the_last_well_known_controller() -> None:
    lookup = lookup_of({("ReplicaSet", "job-1"): ref("workflows.example.io/v1", "Flow", "f")})
    p = owned_pod(ref("apps/v1", "ReplicaSet", "job-1"))
    assert workload_of_pod(p, lookup=lookup, scalable=scalable) == WorkloadKey(
        "shop", "ReplicaSet", "job-1"
    )


def test_pods_of_controllers_neither_well_known_nor_scalable_have_no_workload() -> None:
    flow = owned_pod(ref("workflows.example.io/v1", "Flow", "f"))
    assert workload_of_pod(flow, scalable=scalable) is None
    # Static pods' mirror pods are owned by their Node: never a workload, discovery or not.
    assert workload_of_pod(owned_pod(ref("v1", "Node", "node-1"))) is None
    # Without discovery every other controller counts (the webhook before its first listing).
    assert workload_of_pod(flow) == WorkloadKey("shop", "Flow.workflows.example.io", "f")


def test_an_ownership_cycle_gives_no_workload() -> None:
    lookup = lookup_of(
        {
            ("ReplicaSet", "a"): ref("apps/v1", "Deployment", "b"),
            ("Deployment", "b"): ref("apps/v1", "ReplicaSet", "a"),
        }
    )
    assert workload_of_pod(owned_pod(ref("apps/v1", "ReplicaSet", "a")), lookup=lookup) is None


KINDS = st.sampled_from(
    [
        ("apps/v1", "ReplicaSet"),
        ("apps/v1", "Deployment"),
        ("batch/v1", "Job"),
        ("argoproj.io/v1alpha1", "Rollout"),
        ("kafka.example.io/v1", "Cluster"),
        ("workflows.example.io/v1", "Flow"),
    ]
)


@given(st.lists(KINDS, min_size=1, max_size=6))
def test_the_answer_is_the_last_well_known_or_scalable_controller_of_the_chain(
    chain: list[tuple[str, str]],
) -> None:
    """For any chain of controllers (pod -> first -> ... -> last), as a cache shows it. Only
    well-known controllers have their parent looked up: the chain the walk sees ends at the
    first other one (a Scale carries no ownerReferences)."""
    names = [f"c{i}" for i in range(len(chain))]
    objects: dict[tuple[str, str], dict[str, Any] | None] = {}
    for i, (_, kind) in enumerate(chain):
        nxt = chain[i + 1] if i + 1 < len(chain) else None
        objects[(kind, names[i])] = ref(nxt[0], nxt[1], names[i + 1]) if nxt else None
    p = owned_pod(ref(chain[0][0], chain[0][1], names[0]))
    seen = next(
        (
            i + 1
            for i, (_, kind) in enumerate(chain)
            if kind not in ("ReplicaSet", "Deployment", "Job")
        ),
        len(chain),
    )
    chain, names = chain[:seen], names[:seen]
    counting = [
        (api_version.split("/")[0], kind, name)
        for (api_version, kind), name in zip(chain, names, strict=True)
        if kind in ("ReplicaSet", "Deployment", "Job") or scalable(api_version.split("/")[0], kind)
    ]
    found = workload_of_pod(p, lookup=lookup_of(objects), scalable=scalable)
    if not counting:
        assert found is None
    else:
        group, kind, name = counting[-1]
        assert found is not None and (found.resource_kind, found.name) == (kind, name)
        assert found.group == group


FAMILY = {"rightsizer.io/job-family": "nightly-etl"}


def test_a_bare_job_s_pod_with_the_family_label_is_its_family() -> None:
    """Issue 47 item 4: every Job of a family is one workload, whatever the Job's name."""
    for job in ("nightly-etl-28765430", "manual-run"):
        p = pod("Job", job, FAMILY)
        assert workload_of_pod(p, lookup=lambda ns, k, n: {"metadata": {}}) == WorkloadKey(
            "shop", "JobFamily", "nightly-etl"
        )
    assert workload_of_pod(pod("Job", "manual-run")) == WorkloadKey("shop", "Job", "manual-run")


def test_a_cronjob_s_job_stays_the_cronjob_s_and_other_kinds_ignore_the_label() -> None:
    cronjob = {"kind": "CronJob", "name": "report", "apiVersion": "batch/v1", "controller": True}
    cached = {("shop", "Job", "report-28765430"): {"metadata": {"ownerReferences": [cronjob]}}}
    p = pod("Job", "report-28765430", FAMILY)
    assert workload_of_pod(p, lookup=lambda ns, k, n: cached.get((ns, k, n))) == WorkloadKey(
        "shop", "CronJob", "report"
    )
    assert workload_of_pod(pod("StatefulSet", "db", FAMILY)) == WorkloadKey(
        "shop", "StatefulSet", "db"
    )


def test_a_family_label_that_is_no_label_value_is_ignored() -> None:
    for bad in ("", "-etl", "a" * 64, "etl/x"):
        p = pod("Job", "run-1", {"rightsizer.io/job-family": bad})
        assert workload_of_pod(p) == WorkloadKey("shop", "Job", "run-1")
