"""Benchmark: the webhook's snapshot reload (every 5 s in each webhook process) at 15,000 rows.

Fills a throw-away database (SQLite, or a fresh schema of --database-url) with --rows
recommendation rows, then refreshes a WebhookCache as the webhook's thread does (load_snapshot,
then carry_forward against the snapshot it serves), --reloads times for each way of loading,
alternating between them so that drift in the machine's speed weighs on both alike:

- with the RowMemo the webhook keeps (app.store.snapshot): only changed rows build objects;
- baseline: the same reload without a memo, every row's objects built on each reload (as before
  the memo).

Each is measured with every row unchanged between reloads (most reloads: the recommender writes
once a minute) and with --changed of the rows rewritten with new values before each reload
(a reload right after a recommender run). Figures are CPU seconds per reload (process time, the
cyclic collector on as in the service), the share of it spent in the collector's runs
(gc.callbacks), and how many full (generation 2) collections ran per reload.

    .venv/bin/python benchmarks/snapshot_reload.py [--rows 15000] [--reloads 10] [--changed 0.1]

Not run by the tests.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import scale_common as sc


class CollectorClock:
    """Time spent in the cyclic collector, and its full collections, from gc.callbacks."""

    def __init__(self) -> None:
        self.seconds, self.full, self._began = 0.0, 0, 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._began = time.process_time()
        else:
            self.seconds += time.process_time() - self._began
            self.full += info["generation"] == 2


def fill(app: Any, rows: int) -> None:
    from app.store.clusters import cluster_key
    from app.store.extensions import db
    from app.store.models import Recommendation

    rng = random.Random(7)
    values = []
    for i in range(rows):
        cpu, mem = rng.randint(20, 2000), rng.randint(64, 4096) << 20
        values.append(
            {
                "namespace": f"ns-{i % 100}",
                "kind": "Deployment",
                "name": f"app-{i}",
                "container": "app",
                "target_cpu": cpu,
                "target_memory": mem,
                "lower_bound_cpu": cpu // 2,
                "lower_bound_memory": mem // 2,
                "upper_bound_cpu": cpu * 3,
                "upper_bound_memory": mem * 2,
                "uncapped_target_cpu": cpu,
                "uncapped_target_memory": mem,
                "conflicts": {"cpu": "HorizontalPodAutoscaler/app"} if i % 20 == 0 else {},
            }
        )
    with app.app_context():
        cluster = cluster_key(db.session)
        values = [{"cluster_id": cluster, **v} for v in values]
        db.session.execute(db.insert(Recommendation), values)
        db.session.commit()
        db.session.remove()


def rewrite(app: Any, fraction: float, rng: random.Random) -> None:
    """`fraction` of the rows get new targets, as a recommender run writes them."""
    from sqlalchemy import update

    from app.store.extensions import db
    from app.store.models import Recommendation as R

    with app.app_context():
        ids = list(db.session.scalars(db.select(R.id)))
        chosen = rng.sample(ids, int(len(ids) * fraction))
        for i in chosen:
            db.session.execute(
                update(R).where(R.id == i).values(target_cpu=R.target_cpu + rng.randint(1, 9))
            )
        db.session.commit()
        db.session.remove()


def refresher(app: Any, memo: bool) -> Callable[[], None]:
    from app.store.extensions import db
    from app.store.snapshot import RowMemo, load_snapshot
    from app.webhook.cache import WebhookCache

    kept = RowMemo() if memo else None

    def load() -> Any:
        with app.app_context():
            try:
                return load_snapshot(db.session, memo=kept)
            finally:
                db.session.remove()

    cache = WebhookCache(load)
    cache.refresh()  # the snapshot it serves, as after the first load

    def refresh() -> None:
        if not cache.refresh():
            raise SystemExit("a reload failed")

    return refresh


def measure(
    app: Any, reloads: int, changed: float, rng: random.Random
) -> dict[str, tuple[float, float, float]]:
    """Per way of loading: (CPU s per reload, of which in the collector, full collections)."""
    ways = {"RowMemo": refresher(app, True), "baseline (no memo)": refresher(app, False)}
    totals = {name: [0.0, 0.0, 0] for name in ways}
    clock = CollectorClock()
    gc.callbacks.append(clock)
    try:
        for _ in range(reloads):
            for name, refresh in ways.items():
                if changed:
                    rewrite(app, changed, rng)
                    refresh_others = [r for n, r in ways.items() if n != name]
                    for other in refresh_others:  # every way sees the rewrite once
                        other()
                clock.seconds, clock.full = 0.0, 0
                began = time.process_time()
                refresh()
                t = totals[name]
                t[0] += time.process_time() - began
                t[1] += clock.seconds
                t[2] += clock.full
    finally:
        gc.callbacks.remove(clock)
    return {n: (t[0] / reloads, t[1] / reloads, t[2] / reloads) for n, t in totals.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=15000)
    p.add_argument("--reloads", type=int, default=10)
    p.add_argument("--changed", type=float, default=0.1)
    p.add_argument("--database-url")
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)
    rng = random.Random(11)
    with sc.temp_workdir() as tmp, sc.database(args.database_url, Path(tmp)) as url:
        app = sc.make_app(url)
        fill(app, args.rows)
        results = [
            ("unchanged", measure(app, args.reloads, 0.0, rng)),
            (f"{args.changed:.0%} rewritten", measure(app, args.reloads, args.changed, rng)),
        ]
        from app.store.extensions import db

        with app.app_context():
            db.engine.dispose()
    rows, lines = [], []
    for case, figures in results:
        for way, (cpu, in_gc, full) in figures.items():
            rows.append((case, way, f"{cpu:.3f}", f"{in_gc:.3f}", f"{full:.1f}"))
        memo, base = figures["RowMemo"][0], figures["baseline (no memo)"][0]
        lines.append(f"{case}: RowMemo / baseline = {memo / base:.2f}x ({base / memo:.1f}x less)")
    return sc.emit(
        [
            f"rightsizer snapshot reload: {args.rows} recommendation rows, {args.reloads} reloads "
            f"per way and case, alternating (database {url.split(':', 1)[0]})",
            f"machine: {sc.machine()}",
            "",
            sc.table(
                ["rows", "load", "CPU s/reload", "in collector", "full collections"],
                rows,
            ),
            *lines,
        ],
        args.output,
    )


if __name__ == "__main__":
    sys.exit(main())
