"""Recommendation rows read into the snapshot, on SQLite and PostgreSQL, and the RowMemo that
lets a reload build objects only for the rows that changed (app.store.snapshot)."""

from __future__ import annotations

from typing import Any

from flask import Flask
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import update

from app.core.workload_key import WorkloadKey
from app.store.extensions import db
from app.store.models import Recommendation
from app.store.snapshot import RowMemo, _target, load_snapshot, recommendation_targets

WEB = WorkloadKey("shop", "Deployment", "web")
API = WorkloadKey("shop", "Deployment", "api")


def row(w: WorkloadKey, container: str, cpu: int, conflicts: Any = None) -> Recommendation:
    return Recommendation(
        namespace=w.namespace,
        kind=w.kind,
        name=w.name,
        container=container,
        target_cpu=cpu,
        target_memory=1 << 28,
        lower_bound_cpu=cpu // 2,
        lower_bound_memory=1 << 27,
        upper_bound_cpu=cpu * 2,
        upper_bound_memory=1 << 29,
        uncapped_target_cpu=cpu,
        uncapped_target_memory=1 << 28,
        conflicts=conflicts,
    )


def test_rows_are_read_with_their_conflicts(app: Flask) -> None:
    """The conflicts column read as JSON text and decoded: an object, an empty one, SQL NULL."""
    with app.app_context():
        db.session.add_all(
            [
                row(WEB, "app", 300, {"cpu": "HorizontalPodAutoscaler/web"}),
                row(WEB, "proxy", 20, {}),
                row(API, "app", 100, None),
            ]
        )
        db.session.commit()
        got = {
            (w, c): (rec.target.cpu, owners)
            for w, c, rec, owners in recommendation_targets(db.session)
        }
    assert got == {
        (WEB, "app"): (300, {"cpu": "HorizontalPodAutoscaler/web"}),
        (WEB, "proxy"): (20, {}),
        (API, "app"): (100, {}),
    }


def test_a_reload_builds_only_the_rows_that_changed(app: Flask) -> None:
    memo = RowMemo()
    with app.app_context():
        db.session.add_all([row(WEB, "app", 300), row(API, "app", 100)])
        db.session.commit()
        first = {t[0]: t for t in recommendation_targets(db.session, memo)}
        assert memo.built == 2
        again = {t[0]: t for t in recommendation_targets(db.session, memo)}
        assert memo.built == 2 and again[WEB] is first[WEB] and again[API] is first[API]
        db.session.execute(
            update(Recommendation).where(Recommendation.name == "api").values(target_cpu=150)
        )
        db.session.commit()
        snap = load_snapshot(db.session, memo=memo)
    assert memo.built == 3
    assert snap.recommendations[WEB]["app"] is first[WEB][2]  # the same object, unchanged
    assert snap.recommendations[API]["app"].target.cpu == 150  # the change is seen


Values = tuple[str, str, str, str, int, int, int, int, int, int, int, int, str | None]
values_st = st.tuples(
    st.sampled_from(["shop", "ops"]),
    st.just("Deployment"),
    st.sampled_from(["web", "api"]),
    st.sampled_from(["app", "proxy"]),
    *[st.integers(0, 3)] * 8,
    st.sampled_from([None, "{}", '{"cpu": "HorizontalPodAutoscaler/web"}']),
)


@settings(max_examples=200, deadline=None)
@given(loads=st.lists(st.lists(values_st, max_size=6), min_size=1, max_size=5))
def test_the_memo_gives_what_building_each_row_gives(loads: list[list[Values]]) -> None:
    """Load after load, the memo's targets equal those built afresh from the same rows, and a
    target is reused only for a row with the same values in the load just before."""
    memo = RowMemo()
    previous: dict[Values, Any] = {}
    for rows in loads:
        got = memo.targets(rows)
        assert got == [_target(v) for v in rows]
        for v, target in zip(rows, got, strict=True):
            if v in previous:
                assert target is previous[v]
        previous = dict(zip(rows, got, strict=True))
