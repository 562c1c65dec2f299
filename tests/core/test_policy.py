"""Which policy governs a workload: workload > namespace > cluster; the oldest among equals."""

from __future__ import annotations

from app.core.policy import Policy, governing_policy, normalize_update_mode
from app.core.recommend.model import WorkloadKey

WEB = WorkloadKey("shop", "Deployment", "web")
CLUSTER = Policy("default", "*", created=1.0, id=1)
NAMESPACE = Policy("shop-wide", "shop", created=2.0, id=2)
OWN = Policy("web", "shop", "Deployment", "web", created=3.0, id=3)
OTHER_NS = Policy("ops", "ops", created=0.5, id=4)
OTHER_TARGET = Policy("db", "shop", "StatefulSet", "web", created=0.5, id=5)


def test_most_specific_wins() -> None:
    assert governing_policy([CLUSTER, NAMESPACE, OWN], WEB) is OWN
    assert governing_policy([CLUSTER, NAMESPACE], WEB) is NAMESPACE
    assert governing_policy([CLUSTER], WEB) is CLUSTER


def test_policies_for_something_else_do_not_apply() -> None:
    assert governing_policy([OTHER_NS, OTHER_TARGET], WEB) is None
    assert governing_policy([], WEB) is None


def test_oldest_wins_among_equals() -> None:
    newer = Policy("web-2", "shop", "Deployment", "web", created=9.0, id=9)
    assert governing_policy([newer, OWN], WEB) is OWN
    same_time = Policy("web-3", "shop", "Deployment", "web", created=3.0, id=1)
    assert governing_policy([OWN, same_time], WEB) is same_time  # then the lower id


def test_a_cluster_policy_with_a_target_never_applies() -> None:
    odd = Policy("odd", "*", "Deployment", "web")
    assert governing_policy([odd], WEB) is None


def test_auto_means_recreate() -> None:
    assert normalize_update_mode("Auto") == "Recreate"
    assert normalize_update_mode("InPlaceOrRecreate") == "InPlaceOrRecreate"
