"""Policy limits: minAllowed/maxAllowed clamp target and bounds; uncappedTarget stays raw."""

from __future__ import annotations

from app.core.recommend.capping import apply_policy, clamp
from app.core.recommend.estimator import Estimate
from app.core.recommendation import ContainerPolicy, policy_for_container
from app.core.resources import Resources

EST = Estimate(
    target=Resources(500, 1000), lower_bound=Resources(100, 400), upper_bound=Resources(900, 5000)
)


def test_max_allowed_caps_everything_above_it() -> None:
    rec = apply_policy(EST, ContainerPolicy(max_allowed={"cpu": 300}))
    assert rec is not None
    assert rec.target == Resources(300, 1000)
    assert rec.lower_bound == Resources(100, 400)
    assert rec.upper_bound == Resources(300, 5000)
    assert rec.uncapped_target == Resources(500, 1000)


def test_min_allowed_raises_everything_below_it() -> None:
    rec = apply_policy(EST, ContainerPolicy(min_allowed={"memory": 2000}))
    assert rec is not None
    assert (rec.target.memory, rec.lower_bound.memory, rec.upper_bound.memory) == (2000, 2000, 5000)


def test_min_wins_over_max_when_they_cross() -> None:
    # The API refuses min > max; if it ever got through, the floor wins as in VPA.
    assert (
        clamp(
            Resources(500, 1), ContainerPolicy(min_allowed={"cpu": 600}, max_allowed={"cpu": 400})
        ).cpu
        == 600
    )


def test_mode_off_gives_no_recommendation() -> None:
    assert apply_policy(EST, ContainerPolicy(mode="Off")) is None


def test_policy_lookup_prefers_the_named_container() -> None:
    star, app = ContainerPolicy("*", mode="Off"), ContainerPolicy("app")
    assert policy_for_container([star, app], "app") is app
    assert policy_for_container([star, app], "sidecar") is star
    assert policy_for_container([], "app") == ContainerPolicy()
