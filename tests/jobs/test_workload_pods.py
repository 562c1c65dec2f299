"""live_pods_by_workload: pods read as the pod cache reads them (equal parts kept once) are
grouped as asking the owner walk for each pod would group them, with one walk per template."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.owners import workload_of_pod
from app.core.pods import PodView
from app.core.workload_key import WorkloadKey
from app.jobs.workload_pods import live_pods_by_workload
from app.kube.cluster import Shared, pod_view


def ref(kind: str, name: str) -> dict[str, Any]:
    api = {"ReplicaSet": "apps/v1", "StatefulSet": "apps/v1", "Job": "batch/v1"}[kind]
    return {"apiVersion": api, "kind": kind, "name": name, "uid": f"u-{name}", "controller": True}


OWNERS = [None, ref("ReplicaSet", "web-abc"), ref("ReplicaSet", "api-xyz"), ref("Job", "j")]
OWNERS += [ref("StatefulSet", "db")]
# Cached controllers: web-abc belongs to Deployment web in namespace a only; api-xyz is not
# cached anywhere (then the pod's pod-template-hash label decides whether it is a Deployment's).
DEPLOYMENT_WEB = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "controller": True}
CACHED = {("a", "ReplicaSet", "web-abc"): {"metadata": {"ownerReferences": [DEPLOYMENT_WEB]}}}


def lookup(ns: str, kind: str, name: str) -> Any:
    return CACHED.get((ns, kind, name))


def resolve(pod: PodView) -> WorkloadKey | None:
    return workload_of_pod(pod.wire, lookup=lookup)


@st.composite
def raw_pods(draw: st.DrawFn, i: int) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": f"p{i}", "namespace": draw(st.sampled_from(["a", "b", "x"]))}
    owner = draw(st.sampled_from(OWNERS))
    if owner is not None:
        meta["ownerReferences"] = [dict(owner)]
    labels = draw(st.sampled_from([None, {}, {"app": "web"}, {"pod-template-hash": "xyz"}]))
    if labels is not None:
        meta["labels"] = dict(labels)
    return {
        "metadata": meta,
        "spec": {"nodeName": draw(st.sampled_from(["n1", None])), "containers": []},
        "status": {"phase": draw(st.sampled_from(["Running", "Pending", "Succeeded"]))},
    }


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_grouped_as_each_pod_alone_with_one_walk_per_template(data: st.DataObject) -> None:
    raw = [data.draw(raw_pods(i)) for i in range(data.draw(st.integers(0, 25)))]
    excluded = data.draw(st.sampled_from([(), ("b",)]))
    shared = Shared()
    views = [pod_view(p, shared) for p in raw]
    walks: list[PodView] = []

    def counted(pod: PodView) -> WorkloadKey | None:
        walks.append(pod)
        return resolve(pod)

    grouped = live_pods_by_workload(views, counted, excluded)
    expected: dict[WorkloadKey, list[PodView]] = {}
    for pod in views:
        w = resolve(pod)
        if pod.is_live and w is not None and w.namespace not in excluded:
            expected.setdefault(w, []).append(pod)
    assert grouped == expected
    templates = {
        tuple(id(pod.wire["metadata"].get(k)) for k in ("namespace", "ownerReferences", "labels"))
        for pod in views
        if pod.is_live
    }
    assert len(walks) == len(templates)


def test_an_rs_pod_is_its_deployments_only_with_the_matching_hash() -> None:
    shared = Shared()
    pods = [
        pod_view(
            {
                "metadata": {
                    "name": f"p{i}",
                    "namespace": "b",
                    "ownerReferences": [ref("ReplicaSet", "api-xyz")],
                    "labels": {"pod-template-hash": h},
                },
                "spec": {"nodeName": "n1"},
                "status": {"phase": "Running"},
            },
            shared,
        )
        for i, h in enumerate(["xyz", "other", "xyz"])
    ]
    grouped = live_pods_by_workload(pods, resolve)
    assert {w: [p.name for p in ps] for w, ps in grouped.items()} == {
        WorkloadKey("b", "Deployment", "api"): ["p0", "p2"],
        WorkloadKey("b", "ReplicaSet", "api-xyz"): ["p1"],
    }
