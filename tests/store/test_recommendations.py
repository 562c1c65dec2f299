"""Recommendations and checkpoints through app.store, on SQLite and PostgreSQL."""

from __future__ import annotations

import gc
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import event, func, select

from app.core.recommend.array_model import ArrayModel
from app.core.recommend.settings import RecommenderSettings
from app.core.recommend.timeline import UsageWindow
from app.core.recommendation import ContainerPolicy
from app.core.resources import MAX_AMOUNT
from app.core.workload_key import WorkloadKey
from app.store.checkpoints import load_checkpoints
from app.store.extensions import db
from app.store.history import recommendation_history
from app.store.models import Checkpoint, Recommendation
from app.store.recommendations import delete_workload, find_recommendations, save_all, save_batch
from app.store.results import ContainerResult, CurrentRequests, SampleSpan, results_from_model
from tests.support.window_reads import count_window_reads

S = RecommenderSettings()
NOW = datetime(2024, 7, 4, tzinfo=UTC)
WEB = WorkloadKey("shop", "Deployment", "web")
DB_ = WorkloadKey("shop", "StatefulSet", "db")


def fed_model() -> ArrayModel:
    m = ArrayModel(S)
    t0 = 1_719_792_000.0
    for i in range(3 * 288):
        t = t0 + 300 * i
        for pod in ("web-1", "web-2"):
            m.add_cpu(WEB, pod, "app", t, 0.2 + (i % 7) / 20, 0.5)
            m.add_memory(WEB, pod, "app", t, 3e8 + (i % 11) * 1e7)
            m.add_cpu(WEB, pod, "proxy", t, 0.02, 0.1)
            m.add_memory(WEB, pod, "proxy", t, 6e7)
        m.add_cpu(DB_, "db-0", "postgres", t, 1.0, 2.0)
        m.add_memory(DB_, "db-0", "postgres", t, 2e9)
    return m


def count(model: type) -> int:
    return db.session.scalar(select(func.count()).select_from(model)) or 0


def test_round_trip_through_checkpoints_gives_the_same_recommendations(app: Flask) -> None:
    m = fed_model()
    results = list(results_from_model(m))
    report = save_all(db.session, results, NOW, batch_size=2)
    assert (report.saved, report.failed) == (3, 0)
    written = {(r.workload, r.container) for r in results}
    assert len(written) == 3
    assert report.checkpointed == written  # a container's first checkpoint: the run that sees it
    assert report.points == written  # and its first history point
    assert count(Checkpoint) == 3 and count(Recommendation) == 3

    restored = ArrayModel(S)
    assert load_checkpoints(db.session, restored) == (3, 0)
    for w in (WEB, DB_):
        before, after = m.recommend(w), restored.recommend(w)
        assert before.keys() == after.keys()
        for name in before:
            for field in ("target", "lower_bound", "upper_bound"):
                b, a = getattr(before[name], field), getattr(after[name], field)
                # Rounding to 10000ths of the heaviest bucket may move a percentile one bucket.
                assert a.cpu == pytest.approx(b.cpu, rel=0.051)
                assert a.memory == pytest.approx(b.memory, rel=0.051)
    total, first, _ = restored.span(restored.rows[WEB]["app"])
    assert total == 2 * 3 * 288
    assert first == 1_719_792_000.0


def test_rows_hold_the_recommendation(app: Flask) -> None:
    m = fed_model()
    save_all(db.session, results_from_model(m), NOW, batch_size=10)
    [row] = find_recommendations(db.session, "shop", "StatefulSet", "db")
    rec = m.recommend(DB_)["postgres"]
    assert (row.target_cpu, row.target_memory) == (rec.target.cpu, rec.target.memory)
    assert row.upper_bound_cpu == rec.upper_bound.cpu
    assert row.sample_count == 3 * 288
    assert row.last_sample_at is not None


def test_unbounded_upper_bound_fits_the_column(app: Flask) -> None:
    m = ArrayModel(S)
    m.add_cpu(WEB, "web-1", "app", 1e9, 0.5, 1.0)
    save_all(db.session, results_from_model(m), NOW, batch_size=10)
    db.session.expire_all()
    [row] = find_recommendations(db.session)
    assert row.upper_bound_cpu == MAX_AMOUNT


def test_update_replaces_rows_in_place(app: Flask) -> None:
    m = fed_model()
    save_all(db.session, results_from_model(m), NOW, batch_size=10)
    m.add_cpu(DB_, "db-0", "postgres", 1_719_792_000.0 + 4 * 86400, 30.0, 2.0)
    save_all(db.session, results_from_model(m), NOW, batch_size=10)
    assert count(Recommendation) == 3
    [row] = find_recommendations(db.session, name="db")
    assert row.sample_count == 3 * 288 + 1


def test_policy_off_removes_the_recommendation_but_keeps_the_checkpoint(app: Flask) -> None:
    m = fed_model()
    save_all(db.session, results_from_model(m), NOW, batch_size=10)
    off = {WEB: [ContainerPolicy("proxy", mode="Off")]}
    save_all(db.session, results_from_model(m, lambda w: off.get(w, [])), NOW, batch_size=10)
    assert [r.container for r in find_recommendations(db.session, name="web")] == ["app"]
    assert count(Checkpoint) == 3


def test_failed_batch_rolls_back_alone(app: Flask) -> None:
    m = fed_model()
    save_all(db.session, results_from_model(m), NOW, batch_size=10)
    before = {r.container: r.sample_count for r in find_recommendations(db.session)}
    m.add_cpu(WEB, "web-1", "app", 1_719_792_000.0 + 4 * 86400, 30.0, 2.0)
    m.add_cpu(DB_, "db-0", "postgres", 1_719_792_000.0 + 4 * 86400, 30.0, 2.0)
    results = {r.container: r for r in results_from_model(m)}
    results["app"].checkpoint.version = None  # NOT NULL: refused
    report = save_all(db.session, [results["app"], results["postgres"]], NOW, batch_size=1)
    assert (report.saved, report.failed) == (1, 1)
    assert report.checkpointed == {(DB_, "postgres")}  # not the failed batch's
    db.session.expire_all()
    after = {r.container: r.sample_count for r in find_recommendations(db.session)}
    assert after["app"] == before["app"]  # the failed batch left the old row untouched
    assert after["postgres"] == before["postgres"] + 1  # the other batch landed


def test_bad_checkpoint_is_skipped_and_kept(app: Flask) -> None:
    save_all(db.session, results_from_model(fed_model()), NOW, batch_size=10)
    row = db.session.scalars(select(Checkpoint).where(Checkpoint.container == "proxy")).one()
    row.cpu_buckets = {"999": 5}
    db.session.commit()
    restored = ArrayModel(S)
    assert load_checkpoints(db.session, restored) == (2, 1)
    assert "proxy" not in restored.rows.get(WEB, {})
    assert count(Checkpoint) == 3


def test_batch_must_be_all_or_nothing(app: Flask) -> None:
    results = list(results_from_model(fed_model()))
    results[1].checkpoint.version = None  # NOT NULL violation
    with pytest.raises(Exception):  # noqa: B017 - any driver error
        save_batch(db.session, results, NOW)
    assert count(Checkpoint) == 0
    assert count(Recommendation) == 0


def test_delete_workload(app: Flask) -> None:
    save_all(db.session, results_from_model(fed_model()), NOW, batch_size=10)
    delete_workload(db.session, WEB)
    assert [r.name for r in find_recommendations(db.session)] == ["db"]
    assert count(Checkpoint) == 1


def with_current(m: ArrayModel, replicas: int | None) -> list[ContainerResult]:
    """The model's results as the recommender gives them: current requests and live pods."""
    return [
        ContainerResult(
            r.workload,
            r.container,
            r.recommendation,
            r.checkpoint,
            CurrentRequests(500, 2**29, replicas),
        )
        for r in results_from_model(m)
    ]


def test_replicas_are_stored_and_kept_when_no_pod_was_seen(app: Flask) -> None:
    m = fed_model()
    save_all(db.session, with_current(m, 3), NOW, batch_size=10)
    [row] = find_recommendations(db.session, "shop", "StatefulSet", "db")
    assert (row.replicas, row.current_cpu_request) == (3, 500)
    save_all(db.session, results_from_model(m), NOW, batch_size=10)  # no pods seen this run
    db.session.expire_all()
    [row] = find_recommendations(db.session, "shop", "StatefulSet", "db")
    assert row.replicas == 3
    save_all(db.session, with_current(m, 5), NOW, batch_size=10)
    db.session.expire_all()
    assert find_recommendations(db.session, "shop", "StatefulSet", "db")[0].replicas == 5
    # requests seen without a count of live pods: the requests written, the count kept
    save_all(db.session, with_current(m, None), NOW, batch_size=10)
    db.session.expire_all()
    [row] = find_recommendations(db.session, "shop", "StatefulSet", "db")
    assert (row.replicas, row.current_cpu_request) == (5, 500)


def points(w: WorkloadKey) -> list[tuple[str, datetime, int]]:
    return [
        (p.container, p.time.replace(tzinfo=UTC), p.target_cpu)
        for p in recommendation_history(db.session, w.namespace, w.kind, w.name)
    ]


def test_history_gets_at_most_one_point_an_hour_and_keeps_eight_days(app: Flask) -> None:
    m = fed_model()
    cpu = m.recommend(DB_)["postgres"].target.cpu
    for minutes in (0, 30, 59, 60, 90, 125):
        save_all(db.session, with_current(m, 1), NOW + timedelta(minutes=minutes), batch_size=2)
    hours = [NOW, NOW + timedelta(minutes=60), NOW + timedelta(minutes=125)]
    assert points(DB_) == [("postgres", t, cpu) for t in hours]
    assert [c for c, _, _ in points(WEB)] == ["app"] * 3 + ["proxy"] * 3
    [first] = recommendation_history(db.session, "shop", "StatefulSet", "db")[:1]
    assert (first.current_cpu_request, first.current_memory_request) == (500, 2**29)

    later = NOW + timedelta(days=8, minutes=61)  # the first two points are now older than 8 days
    save_all(db.session, with_current(m, 1), later, batch_size=2)
    assert [t for _, t, _ in points(DB_)] == [NOW + timedelta(minutes=125), later]


def test_keys_with_a_point_known_to_be_recent_are_not_looked_up(app: Flask) -> None:
    """With `recent` (the recommender's, for its term as leader), a container whose newest point
    is known to be less than an hour old has no history statement in its batch, neither the
    lookup nor the trim; the points written are those of the saves without it (the test above)."""
    m = fed_model()
    cpu = m.recommend(DB_)["postgres"].target.cpu
    recent: dict[tuple[str, str, str, str], float] = {}
    history_statements: list[int] = []

    def grab(conn: Any, cursor: Any, statement: str, params: Any, ctx: Any, many: bool) -> None:
        if "recommendation_history" in statement:
            history_statements.append(minutes)

    event.listen(db.engine, "before_cursor_execute", grab)
    try:
        for minutes in (0, 30, 59, 60, 90, 125):
            at = NOW + timedelta(minutes=minutes)
            save_all(db.session, with_current(m, 1), at, batch_size=2, recent=recent)
    finally:
        event.remove(db.engine, "before_cursor_execute", grab)
    assert sorted(set(history_statements)) == [0, 60, 125]  # a point due, or none known
    hours = [NOW, NOW + timedelta(minutes=60), NOW + timedelta(minutes=125)]
    assert points(DB_) == [("postgres", t, cpu) for t in hours]
    assert [c for c, _, _ in points(WEB)] == ["app"] * 3 + ["proxy"] * 3
    assert recent == {
        (w.namespace, w.kind, w.name, c): hours[-1].timestamp()
        for w, c in ((WEB, "app"), (WEB, "proxy"), (DB_, "postgres"))
    }

    later = NOW + timedelta(days=8, minutes=61)  # the first two points are now older than 8 days
    save_all(db.session, with_current(m, 1), later, batch_size=2, recent=recent)
    assert [t for _, t, _ in points(DB_)] == [NOW + timedelta(minutes=125), later]


def test_a_usage_window_is_read_only_for_the_points_written(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each result carries its container's usage window; its percentiles are computed for the
    history point written alone (a point is due hourly: the runs between read none), and the
    point stores them."""
    m = fed_model()
    window = UsageWindow(RecommenderSettings())
    for cores in (0.1, 0.2, 0.3, 0.4):
        window.add_cpu(cores)
    window.add_memory(3e8)
    read = count_window_reads(monkeypatch)
    recent: dict[tuple[str, str, str, str], float] = {}
    for minutes in (0, 30, 59, 60):
        results = [replace(r, window=window) for r in with_current(m, 1)]
        at = NOW + timedelta(minutes=minutes)
        save_all(db.session, results, at, batch_size=2, recent=recent)
        assert len(read) == 3 * (1 + minutes // 60), minutes  # three containers, a point each
    [point, _] = recommendation_history(db.session, "shop", "StatefulSet", "db")
    expected = window.percentiles()
    assert (point.usage_cpu_p50, point.usage_cpu_p90) == (expected.cpu_p50, expected.cpu_p90)
    assert point.usage_memory_p90 == expected.memory_p90 == 300_000_000


def test_history_point_is_part_of_the_batch_transaction(app: Flask) -> None:
    """A batch rolled back wrote no point, and tells `recent` (save_batch) none either."""
    m = fed_model()
    good = with_current(m, 1)
    bad = [
        ContainerResult(
            DB_,
            "postgres",
            good[0].recommendation,
            good[0].checkpoint,
            CurrentRequests(2**70, None, 1),  # does not fit the column: the batch fails
        )
    ]
    recent: dict[tuple[str, str, str, str], float] = {}
    with pytest.raises(Exception):  # noqa: B017  (whichever error the driver raises)
        save_batch(db.session, bad, NOW, recent=recent)
    assert points(DB_) == [] and recent == {}


def test_delete_workload_forgets_its_history(app: Flask) -> None:
    save_all(db.session, with_current(fed_model(), 1), NOW, batch_size=10)
    assert points(DB_) and points(WEB)
    delete_workload(db.session, DB_)
    assert points(DB_) == [] and points(WEB)


def updated(w: WorkloadKey) -> dict[str, datetime]:
    db.session.expire_all()
    return {
        r.container: r.updated_at.replace(tzinfo=UTC)
        for r in find_recommendations(db.session, w.namespace, w.kind, w.name)
    }


def test_an_unchanged_recommendation_is_not_rewritten_and_a_changed_one_is(app: Flask) -> None:
    m = fed_model()
    save_all(db.session, with_current(m, 2), NOW, batch_size=2)
    later = NOW + timedelta(minutes=1)
    save_all(db.session, with_current(m, 2), later, batch_size=2)  # nothing new
    assert updated(WEB) == {"app": NOW, "proxy": NOW}
    assert updated(DB_) == {"postgres": NOW}

    m.add_cpu(DB_, "db-0", "postgres", 1_719_792_000.0 + 4 * 86400, 30.0, 2.0)  # a sample
    save_all(db.session, with_current(m, 2), later, batch_size=2)
    assert updated(DB_) == {"postgres": later}
    assert updated(WEB) == {"app": NOW, "proxy": NOW}
    save_all(db.session, with_current(m, 3), later + timedelta(minutes=1), batch_size=2)
    assert set(updated(WEB).values()) == {later + timedelta(minutes=1)}  # a third replica
    [row] = find_recommendations(db.session, name="db")
    assert (row.replicas, row.sample_count) == (3, 3 * 288 + 1)


def test_a_row_gets_the_columns_that_changed_alone(app: Flask) -> None:
    """The common run: new samples, the same recommendation. The row's sample count, last
    sample time and updated_at are written, and only they (its first sample time stayed); a row
    whose recommendation changed too gets those and the columns of it that changed (here its
    reason), not every column again."""
    m = fed_model()
    first = with_current(m, 2)
    save_all(db.session, first, NOW, batch_size=10)
    moved = [
        replace(r, samples=SampleSpan(r.span.total + 10, r.span.first, (r.span.last or 0) + 60))
        for r in first
    ]
    web_app = next(i for i, r in enumerate(moved) if (r.workload, r.container) == (WEB, "app"))
    rec = moved[web_app].recommendation
    assert rec is not None
    moved[web_app] = replace(moved[web_app], recommendation=replace(rec, reason="another"))
    written: list[tuple[str, Any]] = []

    def grab(conn: Any, cursor: Any, statement: str, params: Any, ctx: Any, many: bool) -> None:
        if statement.lstrip().upper().startswith("UPDATE RECOMMENDATIONS"):
            written.append((statement, params))

    later = NOW + timedelta(minutes=1)
    event.listen(db.engine, "before_cursor_execute", grab)
    try:
        save_all(db.session, moved, later, batch_size=10)
    finally:
        event.remove(db.engine, "before_cursor_execute", grab)
    set_columns = sorted(
        (
            statement.split(" SET ", 1)[1].split(" WHERE ", 1)[0].count("="),
            len(rows if isinstance(rows, list) else [rows]),
        )
        for statement, rows in written
    )
    assert set_columns == [(3, 2), (4, 1)]  # the two span-only rows; the one with a reason
    db.session.expire_all()
    rows = {r.container: r for r in find_recommendations(db.session)}
    for r in first:
        row = rows[r.container]
        assert row.sample_count == r.span.total + 10
        assert row.last_sample_at is not None
        assert row.last_sample_at.replace(tzinfo=UTC).timestamp() == (r.span.last or 0) + 60
        assert row.updated_at.replace(tzinfo=UTC) == later
        assert row.target_cpu == r.recommendation.target.cpu
        assert row.replicas == 2
    proxy = next(r for r in first if r.container == "proxy").recommendation
    assert rows["app"].reason == "another" and proxy is not None
    assert rows["proxy"].reason == (proxy.reason or None)


def test_checkpoints_are_rewritten_each_save(app: Flask) -> None:
    m = fed_model()
    save_all(db.session, results_from_model(m), NOW, batch_size=10)
    m.add_cpu(DB_, "db-0", "postgres", 1_719_792_000.0 + 4 * 86400, 30.0, 2.0)
    save_all(db.session, results_from_model(m), NOW + timedelta(minutes=1), batch_size=10)
    restored = ArrayModel(S)
    assert load_checkpoints(db.session, restored) == (3, 0)
    assert restored.span(restored.rows[DB_]["postgres"])[0] == 3 * 288 + 1


def test_checkpoints_are_restored_with_the_cyclic_collector_paused(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    save_all(db.session, results_from_model(fed_model()), NOW, batch_size=10)
    during: list[bool] = []
    restore = ArrayModel.restore

    def recording(self: ArrayModel, *args: object) -> None:
        during.append(gc.isenabled())
        restore(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(ArrayModel, "restore", recording)
    assert gc.isenabled()
    assert load_checkpoints(db.session, ArrayModel(S)) == (3, 0)
    assert during == [False, False, False] and gc.isenabled()  # and back on after


KEYED_TABLES = ("recommendations", "checkpoints", "recommendation_history")


def test_a_batch_searches_the_key_indexes_and_scans_no_keyed_table(app: Flask) -> None:
    """Every statement a batch's save reads or trims with is planned by SQLite as index searches
    by key: a tuple IN list of the keys made it scan the whole key index of each table, once per
    batch (app.store.keys: 0.8 s a batch with eight days of history at 15,000 containers)."""
    if db.engine.dialect.name != "sqlite":
        pytest.skip("SQLite's query plans; PostgreSQL plans either form well")
    m = fed_model()
    save_all(db.session, results_from_model(m), NOW, batch_size=2)
    seen: list[tuple[str, Any]] = []

    def grab(conn: Any, cursor: Any, statement: str, params: Any, ctx: Any, many: bool) -> None:
        if not many and statement.lstrip().upper().startswith(("SELECT", "WITH", "DELETE")):
            seen.append((statement, params))

    event.listen(db.engine, "before_cursor_execute", grab)
    try:
        save_all(db.session, results_from_model(m), NOW + timedelta(hours=2), batch_size=2)
    finally:
        event.remove(db.engine, "before_cursor_execute", grab)
    raw = db.engine.raw_connection()
    try:
        plans = {s: [r[3] for r in raw.execute("EXPLAIN QUERY PLAN " + s, p)] for s, p in seen}
    finally:
        raw.close()
    searched = {t for plan in plans.values() for step in plan for t in KEYED_TABLES if t in step}
    assert searched == set(KEYED_TABLES)  # each table was read or trimmed
    scans = [
        step
        for plan in plans.values()
        for step in plan
        if step.startswith("SCAN ") and step.split()[1] in KEYED_TABLES
    ]
    assert scans == []
    # each search is by a whole key (or a row's id), the keys the outer loop: searched by its
    # cluster alone, a table was read whole for the batch, its cluster's every row against
    # every key (app.store.keys: 8-12 s a save at 45,000 containers)
    partial = [
        step
        for plan in plans.values()
        for step in plan
        if step.startswith("SEARCH ")
        and step.split()[1] in KEYED_TABLES
        and "container=?" not in step
        and "rowid=?" not in step
    ]
    assert partial == []


def test_keys_of_any_text_are_found_again(app: Flask) -> None:
    """The keys reach the lookups as data inside one JSON parameter (app.store.keys): quotes,
    SQL, backslashes and text beyond ASCII find their rows again, so a second save updates the
    row and its history instead of adding another (the unique key would refuse it)."""
    odd = WorkloadKey("shop' OR '1'='1", 'Deploy"ment', "wéb-😀\\n")
    m = ArrayModel(S)
    for i in range(12):
        m.add_cpu(odd, "p-1", "ä'pp", 1_719_792_000.0 + 300 * i, 0.25, 0.5)
        m.add_memory(odd, "p-1", "ä'pp", 1_719_792_000.0 + 300 * i, 3e8)
    for later in (0.0, 0.5, 3.0):
        report = save_all(db.session, results_from_model(m), NOW + timedelta(hours=later), 500)
        assert (report.saved, report.failed) == (1, 0)
    assert count(Recommendation) == 1 and count(Checkpoint) == 1
    history = recommendation_history(db.session, odd.namespace, odd.kind, odd.name)
    assert len(history) == 2  # at 0 h and 3 h: at most one point an hour
