"""Benchmark: a recommender run's save with eight days of recommendation history stored.

The scale benchmark's database holds at most two history points per container; a recommender
that has run for a week holds 192 (one an hour, kept 8 days). This fills a throw-away database
(SQLite, or a fresh schema of --database-url) with `--containers` recommendations and their
eight days of hourly points, then times `app.store.recommendations.save_all` of one run's
results (batches of 500, as the recommender saves), the best of `--rounds` on copies of the same
rows (each round's points are deleted again). Baselines, in the same run: one batch's lookup of
its newest history points as `app.store.history.newest_points` asks it (a max() per key of
`app.store.keys`' rows) beside the two forms before it, the keys' join with the points grouped
by key and, before that, a tuple IN list of the keys grouped, each the best of 5.

    .venv/bin/python benchmarks/history_save.py [--containers 15000] [--database-url URL]

Not run by the tests.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import scale_common as sc

NOW = datetime(2026, 7, 12, tzinfo=UTC)
DAYS = 8


def fill(app: Any, containers: int) -> Any:
    from sqlalchemy import insert

    from app.core.recommend.array_model import ArrayModel
    from app.core.workload_key import WorkloadKey
    from app.store.clusters import cluster_key
    from app.store.extensions import db
    from app.store.models import RecommendationPoint
    from app.store.recommendations import save_all
    from app.store.results import results_from_model

    model = ArrayModel()
    workloads = [WorkloadKey(f"ns-{i % 100}", "Deployment", f"w-{i}") for i in range(containers)]
    t = NOW.timestamp() - 3600
    for w in workloads:
        model.add_cpu(w, f"{w.name}-p", "app", t, 0.2, 0.5)
        model.add_memory(w, f"{w.name}-p", "app", t, 3e8)
    with app.app_context():
        table = RecommendationPoint.__table__
        cluster = cluster_key(db.session)
        rows: list[dict[str, Any]] = []
        for w in workloads:
            for h in range(2, DAYS * 24 + 2):
                rows.append(
                    {
                        **{"cluster_id": cluster, "namespace": w.namespace},
                        **{"kind": w.kind, "name": w.name},
                        **{"container": "app", "time": NOW - timedelta(hours=h)},
                        **{"target_cpu": 100, "target_memory": 10**8},
                    }
                )
            if len(rows) >= 50000:
                db.session.execute(insert(table), rows)
                rows = []
        if rows:
            db.session.execute(insert(table), rows)
        db.session.commit()
        save_all(db.session, results_from_model(model), NOW - timedelta(hours=1, minutes=30), 500)
        db.session.remove()
    return model


def timed_save(app: Any, model: Any) -> tuple[float, int, int]:
    from sqlalchemy import delete, func, select

    from app.store.extensions import db
    from app.store.models import RecommendationPoint as H
    from app.store.recommendations import save_all
    from app.store.results import results_from_model

    with app.app_context():
        points = db.session.scalar(select(func.count()).select_from(H)) or 0
        began = time.perf_counter()
        report = save_all(db.session, results_from_model(model), NOW, 500)
        saved, failed = report.saved, report.failed
        seconds = time.perf_counter() - began
        db.session.execute(delete(H).where(H.time >= NOW))  # this round's points
        db.session.commit()
        db.session.remove()
    if failed:
        raise SystemExit(f"{failed} rows not saved")
    return seconds, saved, points


def timed_lookups(app: Any, containers: int) -> tuple[float, float, float]:
    """One batch's newest-point query: a tuple IN list and the join with the keys, grouped
    (before), and a max() per key (now)."""
    from sqlalchemy import func, select, tuple_

    from app.store.clusters import cluster_key
    from app.store.extensions import db
    from app.store.history import newest_points
    from app.store.keys import key_params, key_rows, on_key
    from app.store.models import RecommendationPoint as H

    keys = [(f"ns-{i % 100}", "Deployment", f"w-{i}", "app") for i in range(0, containers, 30)]
    keys = keys[:500]
    cols = (H.namespace, H.kind, H.name, H.container)
    with app.app_context():
        session = db.session
        rows, parts = key_rows(session.get_bind().dialect.name)
        cluster = cluster_key(session)
        table = H.__table__
        joined = select(*cols, func.max(H.time)).select_from(rows)
        joined = joined.join(table, on_key(table, parts)).group_by(*cols)
        tuple_in = select(*cols, func.max(H.time)).where(tuple_(*cols).in_(keys)).group_by(*cols)
        per_key = newest_points(table, rows, parts)

        def best(run: Any) -> float:
            def checked() -> None:
                assert len(run()) == len(keys)

            return sc.best_of(checked, 5)

        before = best(lambda: session.execute(tuple_in).all())
        grouped = best(lambda: session.execute(joined, key_params(keys, cluster)).all())
        after = best(lambda: session.execute(per_key, key_params(keys, cluster)).all())
        session.remove()
    return before, grouped, after


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--containers", type=int, default=15000)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--database-url")
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)
    with sc.temp_workdir() as tmp, sc.database(args.database_url, Path(tmp)) as url:
        app = sc.make_app(url)
        began = time.perf_counter()
        model = fill(app, args.containers)
        filled = time.perf_counter() - began
        seconds, saved, points = min(timed_save(app, model) for _ in range(args.rounds))
        before, grouped, after = timed_lookups(app, args.containers)
        from app.store.extensions import db

        with app.app_context():
            db.engine.dispose()
    return sc.emit(
        [
            f"rightsizer save with {DAYS} days of history: {args.containers} containers, "
            f"{points} history points (database {url.split(':', 1)[0]}; filled in {filled:.0f} s)",
            f"machine: {sc.machine()}",
            "",
            sc.table(
                ["phase", "seconds"],
                [
                    (f"save_all of one run (best of {args.rounds})", f"{seconds:.2f}"),
                    ("one batch's newest points: max() per key", f"{after:.4f}"),
                    ("baseline: keys joined with the points, grouped", f"{grouped:.4f}"),
                    ("baseline: a tuple IN list of the keys, grouped", f"{before:.4f}"),
                ],
            ),
            f"saved {saved}; newest-point lookup, joined and grouped / max() per key: "
            f"{grouped / after:.1f}x, tuple IN / max() per key: {before / after:.1f}x",
        ],
        args.output,
    )


if __name__ == "__main__":
    sys.exit(main())
