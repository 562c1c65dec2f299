"""plan.SizedMemo: the ranking's patch and priority kept from one updater run to the next give
the answers ranking from scratch gives, for any pods, recommendations and LimitRanges; a changed
recommendation, policy or pod is ranked anew; a run keeps only the shapes it used."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.pods import PodView
from app.core.policy import Policy
from app.core.recommendation import Recommendation
from app.core.sizing.limitrange import LimitRangeItem
from app.core.sizing.plan import SizedMemo, workload_candidates
from app.core.sizing.priority import UpdaterSettings
from tests.core.sizing.test_plan import MI, NOW, POLICY, W, pod, rec

MILLI = st.integers(min_value=1, max_value=8000)
MEBI = st.integers(min_value=1, max_value=8192)


def _ranked(
    pods: list[PodView],
    recs: dict[str, Recommendation],
    ranges: tuple[LimitRangeItem, ...] = (),
    memo: SizedMemo | None = None,
    policy: Policy = POLICY,
) -> list[tuple[str, object, object, str]]:
    settings = UpdaterSettings()
    found = workload_candidates(W, pods, policy, recs, None, ranges, NOW, settings, memo=memo)
    return [(c.pod.name, c.patch, c.priority, c.reason) for c in found]


@settings(max_examples=60, deadline=None)
@given(
    shapes=st.lists(st.tuples(MILLI, MEBI), min_size=1, max_size=4),
    targets=st.lists(st.tuples(MILLI, MEBI), min_size=2, max_size=2),
    cap=st.one_of(st.none(), st.integers(min_value=50, max_value=4000)),
)
def test_the_memo_answers_as_ranking_from_scratch(
    shapes: list[tuple[int, int]], targets: list[tuple[int, int]], cap: int | None
) -> None:
    """Three runs over the same pods: the recommendation the same object in the first two, a new
    one (other values) in the third; each run's candidates are those ranked without the memo."""
    pods = [pod(f"web-{i}", cpu=f"{c}m", memory=f"{m}Mi") for i, (c, m) in enumerate(shapes * 2)]
    ranges: tuple[LimitRangeItem, ...] = ()
    if cap is not None:
        ranges = (LimitRangeItem("Container", max={"cpu": cap}),)
    first = {"app": rec(targets[0][0], targets[0][1] * MI)}
    second = {"app": rec(targets[1][0], targets[1][1] * MI)}
    memo = SizedMemo()
    for recs in (first, first, second):
        assert _ranked(pods, recs, ranges, memo) == _ranked(pods, recs, ranges)
        memo.end_run()


def test_an_unchanged_workload_is_ranked_from_the_previous_run() -> None:
    pods = [pod("web-1", cpu="10m", memory="10Mi"), pod("web-2", cpu="10m", memory="10Mi")]
    recs = {"app": rec(500, 500 * MI)}
    memo = SizedMemo()
    _ranked(pods, recs, memo=memo)
    memo.end_run()
    assert (memo.hits, memo.misses) == (1, 1)  # two pods of one shape: one patch built
    again = [pod("web-1", cpu="10m", memory="10Mi"), pod("web-3", cpu="10m", memory="10Mi")]
    assert _ranked(again, recs, memo=memo) == _ranked(again, recs)
    assert (memo.hits, memo.misses) == (3, 1)  # new pod objects, the same values: kept


def test_a_new_recommendation_policy_or_pod_shape_is_ranked_anew() -> None:
    pods = [pod("web-1", cpu="10m", memory="10Mi")]
    recs = {"app": rec(500, 500 * MI)}
    memo = SizedMemo()
    _ranked(pods, recs, memo=memo)
    memo.end_run()
    equal_values = {"app": rec(500, 500 * MI)}  # not carried forward: another object
    _ranked(pods, equal_values, memo=memo)
    _ranked(pods, recs, memo=memo, policy=replace(POLICY, min_replicas=1))
    _ranked([pod("web-1", cpu="20m", memory="10Mi")], recs, memo=memo)
    assert (memo.hits, memo.misses) == (0, 4)


def test_a_run_keeps_only_the_shapes_it_used() -> None:
    recs = {"app": rec(500, 500 * MI)}
    memo = SizedMemo()
    _ranked([pod("a", cpu="10m"), pod("b", cpu="20m")], recs, memo=memo)
    memo.end_run()
    assert len(memo) == 2
    _ranked([pod("a", cpu="10m")], recs, memo=memo)
    memo.end_run()
    assert len(memo) == 1
    memo.end_run()  # a run that ranked nothing
    assert len(memo) == 0


def test_a_new_release_ranks_every_shape_anew() -> None:
    """The API server's rules differ by release (size_pod): what was sized before the updater
    learned the release, or under another one, is not answered from the memo."""
    pods = [pod("web-1", cpu="10m", memory="10Mi")]
    recs = {"app": rec(500, 500 * MI)}
    memo = SizedMemo()
    _ranked(pods, recs, memo=memo)
    memo.release = 37
    _ranked(pods, recs, memo=memo)
    memo.release = 37  # the same release again: kept
    _ranked(pods, recs, memo=memo)
    assert (memo.hits, memo.misses, len(memo)) == (1, 2, 1)
