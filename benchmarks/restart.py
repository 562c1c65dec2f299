"""Benchmark: a new leader's restart, restoring every checkpoint from the database into memory.

Fills a throw-away database (SQLite, or a fresh schema of --database-url) with the checkpoints of
`--workloads` workload containers, each with a week of hourly CPU and memory samples (histograms
of realistic spread), written by the recommender's own save path; then, in the same process,
times `app.store.checkpoints.load_checkpoints` into an empty model, as the recommender does at
the start of every leadership term (the best of `--rounds`). Baseline, measured in the same run:
reading the same rows alone (one SELECT of every checkpoint row through the ORM, nothing built).

    .venv/bin/python benchmarks/restart.py [--workloads 15000] [--database-url URL]

Not run by the tests. Target: 15000 checkpoints restored in at most 5 s.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import scale_common as sc


def fill(app: Any, workloads: int) -> None:
    from app.core.recommend.array_model import ArrayModel
    from app.core.workload_key import WorkloadKey
    from app.store.extensions import db
    from app.store.recommendations import save_all
    from app.store.results import results_from_model

    rng = random.Random(1)
    model = ArrayModel()
    start = time.time() - 7 * 86400
    for i in range(workloads):
        w = WorkloadKey(f"ns-{i // 100:04d}", "Deployment", f"app-{i:05d}")
        base_cpu, base_mem = rng.uniform(0.05, 2.0), rng.uniform(5e7, 4e9)
        for h in range(0, 7 * 24, 1):
            t = start + h * 3600
            model.add_cpu(w, f"{w.name}-p", "app", t, base_cpu * rng.uniform(0.5, 1.5), 0.1)
            model.add_memory(w, f"{w.name}-p", "app", t, base_mem * rng.uniform(0.8, 1.2))
    with app.app_context():
        failed = save_all(db.session, results_from_model(model), datetime.now(UTC), 500).failed
        db.session.remove()
    if failed:
        raise SystemExit(f"{failed} rows not saved")


def timed_restore(app: Any) -> tuple[float, int]:
    from app.core.recommend.array_model import ArrayModel
    from app.store.checkpoints import load_checkpoints
    from app.store.extensions import db

    with app.app_context():
        model = ArrayModel()
        began = time.perf_counter()
        loaded, _ = load_checkpoints(db.session, model)
        seconds = time.perf_counter() - began
        db.session.remove()
    return seconds, loaded


def timed_select(app: Any) -> float:
    from sqlalchemy import select

    from app.store.extensions import db
    from app.store.models import Checkpoint

    with app.app_context():
        began = time.perf_counter()
        rows = list(db.session.scalars(select(Checkpoint)))
        seconds = time.perf_counter() - began
        assert rows
        db.session.remove()
    return seconds


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workloads", type=int, default=15000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--database-url")
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)
    with sc.temp_workdir() as tmp, sc.database(args.database_url, Path(tmp)) as url:
        app = sc.make_app(url)
        began = time.perf_counter()
        fill(app, args.workloads)
        filled = time.perf_counter() - began
        restores = [timed_restore(app) for _ in range(args.rounds)]
        select_s = min(timed_select(app) for _ in range(args.rounds))
        from app.store.extensions import db

        with app.app_context():
            db.engine.dispose()
    best, loaded = min(restores)
    return sc.emit(
        [
            f"rightsizer restart: {loaded} checkpoints restored into memory "
            f"(database {url.split(':', 1)[0]}; filled in {filled:.0f} s)",
            f"machine: {sc.machine()}",
            "",
            sc.table(
                ["phase", "seconds"],
                [
                    ("restore (load_checkpoints, best of " + f"{args.rounds})", f"{best:.2f}"),
                    ("baseline: SELECT of the same rows alone", f"{select_s:.2f}"),
                ],
            ),
            f"restore / SELECT: {best / select_s:.1f}x; target: {args.workloads} checkpoints in "
            f"<= 5 s -> {'met' if best <= 5 else 'NOT met'}",
        ],
        args.output,
    )


if __name__ == "__main__":
    sys.exit(main())
