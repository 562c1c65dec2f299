"""The per-run owner memo answers as the owner walk, asking it once per pod template."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core import owner_memo
from app.core.owner_memo import WorkloadMemo
from app.core.owners import workload_of_pod
from app.core.pods import PodView
from app.core.workload_key import WorkloadKey

CACHED: dict[
    tuple[str, str, str], dict[str, Any]
] = {  # ReplicaSets in the cache: one of a Deployment, one standing alone
    ("shop", "ReplicaSet", "web-abc"): {
        "metadata": {
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "controller": True}
            ]
        }
    },
    ("shop", "ReplicaSet", "solo-1"): {"metadata": {}},
}


def lookup(ns: str, kind: str, name: str) -> dict[str, Any] | None:
    return CACHED.get((ns, kind, name))


refs = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {
            "apiVersion": st.sampled_from(["apps/v1", "v1", "argoproj.io/v1alpha1", "batch/v1", 3]),
            "kind": st.sampled_from(["ReplicaSet", "StatefulSet", "Rollout", "Node", "Job", None]),
            "name": st.sampled_from(["web-abc", "web-def", "solo-1", "db", ""]),
            "controller": st.booleans(),
        }
    ),
)
pods = st.builds(
    lambda ns, ref, pod_hash, family, i: PodView.parse(
        {
            "metadata": {
                "namespace": ns,
                "name": f"p{i}",
                "ownerReferences": [ref] if ref is not None else [],
                "labels": {
                    **({} if pod_hash is None else {"pod-template-hash": pod_hash}),
                    # a bare Job's family (app.core.job_families): part of the memo's key
                    **({} if family is None else {"rightsizer.io/job-family": family}),
                },
            }
        }
    ),
    st.sampled_from(["shop", "other", ""]),
    refs,
    st.sampled_from([None, "abc", "def", "x"]),
    st.sampled_from([None, "etl", "report", "-bad"]),
    st.integers(0, 1000),
)


@given(st.lists(pods, max_size=30))
def test_the_memo_answers_as_the_walk(views: list[PodView]) -> None:
    asked: list[PodView] = []

    def walk(pod: PodView) -> WorkloadKey | None:
        asked.append(pod)
        return workload_of_pod(pod.wire, lookup=lookup)

    memo = WorkloadMemo(walk)
    for pod in views:
        assert memo(pod) == workload_of_pod(pod.wire, lookup=lookup)
    assert len(asked) <= len(views)


def test_pods_of_one_template_are_walked_once() -> None:
    calls: list[str] = []

    def walk(pod: PodView) -> WorkloadKey | None:
        calls.append(pod.name)
        return workload_of_pod(pod.wire, lookup=lookup)

    memo = WorkloadMemo(walk)
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc", "controller": True}
    views = [
        PodView.parse(
            {
                "metadata": {
                    "namespace": "shop",
                    "name": f"web-abc-{i}",
                    "ownerReferences": [dict(ref)],
                    "labels": {"pod-template-hash": "abc"},
                }
            }
        )
        for i in range(5)
    ]
    assert {memo(p) for p in views} == {WorkloadKey("shop", "Deployment", "web")}
    assert calls == ["web-abc-0"]


def test_a_pod_asked_again_is_answered_without_a_walk() -> None:
    calls: list[str] = []

    def walk(pod: PodView) -> WorkloadKey | None:
        calls.append(pod.name)
        return WorkloadKey("shop", "Deployment", pod.name)  # a double that knows pods by name

    memo = WorkloadMemo(walk)
    bare = [PodView.parse({"metadata": {"namespace": "shop", "name": n}}) for n in ("a", "b")]
    assert [memo(p) for p in bare + bare] == [
        WorkloadKey("shop", "Deployment", n) for n in ("a", "b", "a", "b")
    ]
    assert calls == ["a", "b"]  # no controller: walked once per pod, not shared between pods


def test_answers_are_the_key_objects_in_use() -> None:
    """With the keys in use given, an answer equal to one of them is that very object (the
    recommender's dicts then find it by identity), and a new answer joins them."""
    known = WorkloadKey("shop", "Deployment", "web")
    keys = {known: known}
    memo = WorkloadMemo(lambda pod: WorkloadKey("shop", "Deployment", pod.name), keys)
    web, api = (
        PodView.parse({"metadata": {"namespace": "shop", "name": n}}) for n in ("web", "api")
    )
    assert memo(web) is known
    new = memo(api)
    assert new == WorkloadKey("shop", "Deployment", "api")
    assert keys[new] is new


def test_a_view_kept_from_the_previous_run_is_not_read_again_but_answered_anew(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The earlier memo lends its memo keys (views the informer kept are the same objects), not
    its answers: this run walks each template again (the caches may have moved)."""
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc", "controller": True}
    kept = PodView.parse(
        {
            "metadata": {
                "namespace": "shop",
                "name": "web-abc-1",
                "ownerReferences": [ref],
                "labels": {"pod-template-hash": "abc"},
            }
        }
    )
    owners = iter([WorkloadKey("shop", "Deployment", "web"), WorkloadKey("shop", "Rollout", "w")])
    first = WorkloadMemo(lambda pod: next(owners))
    assert first(kept) == WorkloadKey("shop", "Deployment", "web")
    second = WorkloadMemo(lambda pod: next(owners), earlier=first)
    read: list[PodView] = []
    real = owner_memo.memo_key

    def counting(pod: PodView) -> owner_memo.MemoKey | None:
        read.append(pod)
        return real(pod)

    monkeypatch.setattr(owner_memo, "memo_key", counting)
    assert second(kept) == WorkloadKey("shop", "Rollout", "w")  # walked anew
    other = PodView.parse({"metadata": {**kept.wire["metadata"], "name": "web-abc-2"}})
    assert second(other) == WorkloadKey("shop", "Rollout", "w")  # same template
    assert read == [other]  # the kept view's key came from the earlier memo
    second.release()
    assert second.earlier == ({}, {}, None)


def test_answers_carry_over_while_the_owners_version_is_unchanged() -> None:
    """With the same owners version as the earlier memo (no owner cache nor discovery moved),
    a kept view and a new view of a known template are answered without a walk; with another
    version, or none, every template is walked again."""
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc", "controller": True}
    meta = {"namespace": "shop", "ownerReferences": [ref], "labels": {"pod-template-hash": "abc"}}
    kept = PodView.parse({"metadata": {**meta, "name": "web-abc-1"}})
    web, rollout = WorkloadKey("shop", "Deployment", "web"), WorkloadKey("shop", "Rollout", "w")
    walks: list[PodView] = []

    def walk(answer: WorkloadKey) -> Any:
        def resolve(pod: PodView) -> WorkloadKey:
            walks.append(pod)
            return answer

        return resolve

    first = WorkloadMemo(walk(web), version=(1, 0))
    assert first(kept) == web
    same = WorkloadMemo(walk(rollout), earlier=first, version=(1, 0))
    new = PodView.parse({"metadata": {**meta, "name": "web-abc-2"}})
    assert (same(kept), same(new)) == (web, web)  # carried: no walk
    assert walks == [kept]
    moved = WorkloadMemo(walk(rollout), earlier=same, version=(2, 0))
    assert (moved(kept), moved(new)) == (rollout, rollout)  # walked again, once
    assert walks == [kept, kept]
    unknown = WorkloadMemo(walk(web), earlier=moved)  # no version: nothing carried
    assert unknown(new) == web
    assert walks == [kept, kept, new]


def test_a_memo_keeps_no_object_per_view_beside_its_maps() -> None:
    """Each view's answer and key are kept in maps by the view's id, not as a tuple per view: a
    run's memo answers 150,000 views, and such tuples were most of the objects a run left for
    the cyclic collector's next pass (the collector is paused during a run: app.core.gcpause)."""
    memo = WorkloadMemo(lambda pod: WorkloadKey("shop", "Deployment", pod.name))
    views = [PodView.parse({"metadata": {"namespace": "shop", "name": n}}) for n in ("a", "b")]
    answers = [memo(p) for p in views]
    for pod, w in zip(views, answers, strict=True):
        assert memo.views[id(pod)] is pod and memo.answers[id(pod)] is w
        assert memo.memo_keys[id(pod)] is None  # no controller: walked on its own
    assert memo(views[0]) is answers[0]


def test_the_job_family_label_is_part_of_the_memo_key() -> None:
    """Two bare Jobs' pods alike but for `rightsizer.io/job-family` are two workloads."""

    def pod(i: int, family: str | None) -> PodView:
        job = {"apiVersion": "batch/v1", "kind": "Job", "name": "run-1", "controller": True}
        labels = {} if family is None else {"rightsizer.io/job-family": family}
        meta = {"namespace": "shop", "name": f"p{i}", "ownerReferences": [job], "labels": labels}
        return PodView.parse({"metadata": meta})

    memo = WorkloadMemo(lambda p: workload_of_pod(p.wire, lookup=lookup))
    assert [memo(pod(0, "etl")), memo(pod(1, None)), memo(pod(2, "report"))] == [
        WorkloadKey("shop", "JobFamily", "etl"),
        WorkloadKey("shop", "Job", "run-1"),
        WorkloadKey("shop", "JobFamily", "report"),
    ]
