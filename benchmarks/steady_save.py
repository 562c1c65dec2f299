"""Benchmark: a steady recommender run's save, where new samples moved every row's span and
nothing else.

In a cluster the recommender has watched for days, a run's new samples seldom move a rounded
target, yet they move every container's sample count and last sample time: the common save changes
those columns alone (`app.store.recommendations`: a row gets the columns that changed). This fills
a throw-away database (SQLite, or a fresh schema of --database-url) with `--containers`
recommendations, then times `save_all` of `--rounds` runs, each a minute later with each row's span
moved and no checkpoint due (the recommender rewrites a tenth of them a run; none here, to time the
rows alone), passing the newest history points (`recent`) and the rows as written (`written`) from
run to run as the job does. Baseline, in the same run and database: the least such a save writes,
one executemany UPDATE of the span columns by row id, parameters built beforehand, no read (as
`metrics_floor.py`'s database floor).

    .venv/bin/python benchmarks/steady_save.py [--containers 15000] [--database-url URL]

Not run by the tests.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import scale_common as sc

NOW = datetime(2026, 7, 12, tzinfo=UTC)


def measure(app: Any, containers: int, rounds: int) -> tuple[list[float], float]:
    """(each round's save_all seconds, the floor's best of `rounds`)."""
    from sqlalchemy import select

    from app.core.recommend.array_model import ArrayModel
    from app.core.workload_key import WorkloadKey
    from app.store.extensions import db
    from app.store.models import Recommendation
    from app.store.recommendations import save_all
    from app.store.results import SampleSpan, results_from_model

    model = ArrayModel()
    workloads = [WorkloadKey(f"ns-{i % 100}", "Deployment", f"w-{i}") for i in range(containers)]
    t = NOW.timestamp() - 3600
    for w in workloads:
        model.add_cpu(w, f"{w.name}-p", "app", t, 0.2, 0.5)
        model.add_memory(w, f"{w.name}-p", "app", t, 3e8)
    first = list(results_from_model(model))
    with app.app_context():
        written: dict[Any, Any] = {}  # each row as written, kept across runs as the job keeps it
        save_all(db.session, first, NOW, 500, written=written)
        recent: dict[Any, float] = {}
        seconds = []
        for run in range(1, rounds + 1):
            moved = [
                replace(
                    r,
                    checkpoint=None,
                    samples=SampleSpan(r.span.total + run, r.span.first, (r.span.last or 0) + 60),
                )
                for r in first
            ]
            began = time.perf_counter()
            report = save_all(
                db.session, moved, NOW + timedelta(minutes=run), 500, recent=recent, written=written
            )
            saved, failed = report.saved, report.failed
            seconds.append(time.perf_counter() - began)
            if failed or saved != containers:
                raise SystemExit(f"saved {saved}, failed {failed}")
        table = Recommendation.__table__
        ids = list(db.session.scalars(select(table.c.id)))
        floor = sc.best_update_by_id(
            table,
            [
                [
                    {
                        "_id": n,
                        "sample_count": 100 + run,
                        "last_sample_at": NOW + timedelta(hours=1, minutes=run),
                        "updated_at": NOW + timedelta(hours=1, minutes=run),
                    }
                    for n in ids
                ]
                for run in range(rounds)
            ],
        )
        db.session.remove()
        db.engine.dispose()
    return seconds, floor


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--containers", type=int, default=15000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--database-url")
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)
    with sc.temp_workdir() as tmp, sc.database(args.database_url, Path(tmp)) as url:
        seconds, floor = measure(sc.make_app(url), args.containers, args.rounds)
    best = min(seconds)
    return sc.emit(
        [
            f"rightsizer steady save: {args.containers} recommendation rows, each run's samples "
            f"moving every row's span (database {url.split(':', 1)[0]})",
            f"machine: {sc.machine()}",
            "",
            sc.table(
                ["measure", "seconds"],
                [
                    (f"save_all of one run (best of {args.rounds})", f"{best:.3f}"),
                    ("  each run", " ".join(f"{s:.3f}" for s in seconds)),
                    ("baseline: one UPDATE of the span columns by id (floor)", f"{floor:.3f}"),
                ],
            ),
            f"save / floor: {best / floor:.1f}x",
        ],
        args.output,
    )


if __name__ == "__main__":
    sys.exit(main())
