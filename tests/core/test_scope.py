"""What rightsizer would change of a container (app.core.scope): the scope of savings and risk."""

from __future__ import annotations

from app.core.policy import Policy
from app.core.policy_warnings import never_sized_reasons
from app.core.recommend.settings import RecommenderSettings
from app.core.recommendation import ContainerPolicy
from app.core.savings import Savings
from app.core.scope import (
    ACTING,
    DEFAULT,
    POLICY_OFF,
    Shortfall,
    basis,
    in_scope,
    left_alone,
    pod_minimum_share,
    shortfalls,
)
from app.core.update_mode import UpdateMode

MI = 2**20
NEVER = never_sized_reasons("rightsizer", frozenset({"legacy"}))
HPA = {"cpu": "HorizontalPodAutoscaler web scales it on cpu"}


def policy(mode: str = "Recreate", *rules: ContainerPolicy) -> Policy:
    return Policy(
        "web",
        "shop",
        "Deployment",
        "web",
        update_mode=UpdateMode.of(mode),
        container_policies=rules,
    )


def test_what_is_left_alone_and_why() -> None:
    assert left_alone("shop", "app", None, {}, NEVER) == {}
    assert left_alone("shop", "app", None, HPA, NEVER) == HPA
    for ns in ("kube-system", "legacy", "rightsizer"):
        assert set(left_alone(ns, "app", policy(), {}, NEVER)) == {"cpu", "memory"}
    off = policy("Recreate", ContainerPolicy("sidecar", mode="Off"))
    assert left_alone("shop", "sidecar", off, {}, NEVER) == {
        "cpu": "its container policy's mode is Off",
        "memory": "its container policy's mode is Off",
    }
    assert left_alone("shop", "app", off, {}, NEVER) == {}  # another container: the default
    memory_only = policy("Recreate", ContainerPolicy("*", controlled_resources=("memory",)))
    assert left_alone("shop", "app", memory_only, HPA, NEVER) == {
        "cpu": "cpu is not in its controlledResources"
    }


def test_the_basis_and_the_savings_in_scope() -> None:
    assert (basis(None), basis(policy("Off")), basis(policy("Initial"))) == (
        DEFAULT,
        POLICY_OFF,
        ACTING,
    )
    assert in_scope(Savings(500, 3 * MI), HPA) == Savings(0, 3 * MI)
    assert in_scope(Savings(500, 3 * MI), {}) == Savings(500, 3 * MI)


def test_a_shortfall_at_the_pod_minimum_is_marked_apart() -> None:
    s = RecommenderSettings()
    assert pod_minimum_share(None, 1, s) == (25, 250 * MI)
    assert pod_minimum_share(None, 2, s) == (12, 125 * MI)
    assert pod_minimum_share(None, 3, s)[1] == 84 * MI  # 83.3Mi rounded up as targets are
    # 2 pods asking for 64Mi, recommended 250Mi (the floor): lacking 372Mi, but only the floor.
    floor = pod_minimum_share(None, 1, s)
    assert shortfalls(Savings(0, 2 * (64 - 250) * MI), (25, 250 * MI), floor) == [
        Shortfall("memory", 372 * MI, True)
    ]
    # Recommended 1Gi from usage: a real shortfall.
    assert shortfalls(Savings(-300, 100), (800, 2**30), floor) == [Shortfall("cpu", 300, False)]
