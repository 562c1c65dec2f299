"""Benchmark: a fleet of clusters writing to one PostgreSQL database (issue 48).

What "a cluster" is here: each cluster is a cluster identity of `app.store.clusters` (its own
`clusters` row, RIGHTSIZER_CLUSTER_ID as a process would declare it) whose recommender save
path runs in this process, the service's own store code with the statements it sends: each run
reads the policies governing the cluster, saves every container's recommendation (its sample
span moved, `--changed` of the targets new), a tenth of the checkpoints (600 s
checkpoint interval at a 60 s run interval), the history points due (one per container an
hour, trimmed at 8 days) and the conditions, then lists the stored workloads, writes the
cluster's totals for the fleet view (app.jobs.cluster_totals: its rows read and summed) and
counts the recommendations, as `app.jobs.recommender` does after its model and the API
server's caches (not run here: the pod watch and the model are per-cluster CPU that a fleet does
not share).
A cluster of `--pods` pods is the simulator's scale mode's shape: Deployments of ten pods on
average, one container each, so 1,500 pods are 150 workload containers, each with one policy
(`--policies-per-workload`, as VPA's one object per workload) and a condition. The clusters run
one after the other on one connection; 20 real clusters would write side by side.

For each count of clusters (`--counts`, added one after the other to the same database; each
new cluster first saves every row, then gets 8 days of hourly history, written hour by hour):

- write rate: the rows the runs inserted, updated and deleted (counted from each statement's
  rowcount) per second of save, and runs per second; the time of one cluster's run;
- the webhook's snapshot reload of the first cluster (`load_snapshot` with its RowMemo, as the
  webhook's thread refreshes every 5 s), median CPU and wall seconds of `--reloads`;
- the rows the reload's queries and one run's reads examine (EXPLAIN ANALYZE: rows returned
  and filtered out by each table scan): with every query served by an index on the cluster,
  these are the same at every count;
- the fleet view two ways (median wall seconds), each cluster's figures checked equal both
  ways: GET /api/v1/fleet through Flask's test client, reading each cluster's stored totals
  (one row per cluster, app.store.cluster_totals), and the old way, every cluster's rows read
  and summed (app.store.fleet's `fleet(stored=False)`, what GET did before migration 0017, less
  its JSON); and the median time of one leader's totals write, part of its run.

Then, with every cluster, a simulated day: 24 runs an hour apart, each writing every
container's history point and trimming the oldest (the history's real cadence; the minute runs
between them only rewrite rows in place); the database's size (pg_total_relation_size of each
table) before and after it, per container. Last, `--padding` more clusters' recommendation
and checkpoint rows copied in by SQL and the first cluster's reads examined again: small tables
are read whole where the planner finds that cheaper, a fleet's size shows the plans it gets.

    .venv/bin/python benchmarks/fleet.py [--clusters 20] [--pods 1500] [--counts 1 5 10 20]
        [--database-url postgresql+psycopg://postgres@127.0.0.1:5432/test]

The benchmark creates the database `--database-name` (rightsizer_fleet_bench) on that server
and drops it at the end. Not run by the tests (tests/test_fleet_benchmark.py runs it tiny).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import scale_common as sc

T0 = datetime(2026, 7, 12, tzinfo=UTC)
HISTORY_DAYS = 8
REPLICAS = 10  # pods per Deployment, on average (the simulator's scale mode)
TABLES = (
    "recommendations",
    "checkpoints",
    "recommendation_history",
    "workload_conditions",
    "policies",
    "clusters",
)


@dataclass
class Cluster:
    """One simulated cluster: its identity and what its recommender saves each run."""

    index: int
    identity: Any
    results: list[Any]
    conditions: dict[Any, list[Any]]
    recent: dict[Any, float] = field(default_factory=dict)  # the job's history_points

    @property
    def uid(self) -> str:
        return str(self.identity.uid)


@dataclass
class Step:
    """The figures at one count of clusters."""

    clusters: int
    containers: int
    runs: int
    rows: int
    seconds: float  # of the runs, all clusters
    run_seconds: list[float]  # each cluster-run's
    reload_cpu: float  # median, the first cluster's snapshot
    reload_wall: float
    reload_examined: int
    run_examined: int
    view: float  # median wall seconds of GET /api/v1/fleet (stored totals)
    summed: float  # median wall seconds of every cluster's rows read and summed (the old view)
    totals_write: float  # median wall seconds of one leader's totals write (in its run)
    scans: list[str] = field(default_factory=list)  # the reload's and the run's, distinct

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds

    @property
    def runs_per_second(self) -> float:
        return self.runs / self.seconds


# The database --------------------------------------------------------------------------------
@contextmanager
def own_database(server_url: str, name: str) -> Iterator[str]:
    """A database of its own on the server of `server_url`, dropped at the end."""
    import sqlalchemy as sa

    admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        yield sa.make_url(server_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


class RowCounter:
    """Rows inserted, updated and deleted by the statements sent (each one's rowcount)."""

    def __init__(self) -> None:
        self.rows = 0

    def __call__(self, conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        if statement.lstrip()[:6].upper() in ("INSERT", "UPDATE", "DELETE") and cursor.rowcount > 0:
            self.rows += cursor.rowcount


class Recorder:
    """The statements sent while recording, to EXPLAIN afterwards."""

    def __init__(self) -> None:
        self.on = False
        self.seen: list[tuple[str, Any]] = []

    def __call__(
        self, conn: Any, cursor: Any, statement: str, params: Any, _c: Any, many: bool
    ) -> None:
        if self.on and not many and statement.lstrip()[:6].upper() == "SELECT":
            self.seen.append((statement, params))


def examined(engine: Any, statements: Sequence[tuple[str, Any]]) -> tuple[int, list[str]]:
    """Rows the statements' table scans read (returned and filtered out), by EXPLAIN ANALYZE in
    a transaction rolled back, and each scan's kind ("Index Scan on t using i")."""
    import json

    total, scans = 0, list[str]()
    raw = engine.raw_connection()
    try:
        cur = raw.cursor()
        for statement, params in statements:
            cur.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + statement, params)
            plan = cur.fetchone()[0]
            plan = json.loads(plan) if isinstance(plan, str) else plan
            total += _scanned(plan[0]["Plan"], scans)
        raw.rollback()
    finally:
        raw.close()
    return total, scans


def _scanned(node: dict[str, Any], scans: list[str]) -> int:
    n = 0
    if "Relation Name" in node:
        index = f" using {node['Index Name']}" if "Index Name" in node else ""
        scans.append(f"{node['Node Type']} on {node['Relation Name']}{index}")
        loops = int(node.get("Actual Loops", 1))
        n += int(node.get("Actual Rows", 0)) * loops
        n += int(node.get("Rows Removed by Filter", 0)) + int(
            node.get("Rows Removed by Index Recheck", 0)
        )
    return n + sum(_scanned(child, scans) for child in node.get("Plans", ()))


def sizes(engine: Any) -> dict[str, int]:
    """pg_total_relation_size (heap, indexes, TOAST) of each table."""
    import sqlalchemy as sa

    with engine.connect() as conn:
        return {
            t: int(conn.execute(sa.text(f"SELECT pg_total_relation_size('{t}')")).scalar_one())
            for t in TABLES
        }


# The clusters --------------------------------------------------------------------------------
def build_cluster(app: Any, index: int, workloads: int, rng: random.Random) -> Cluster:
    """A cluster's identity, its rows as its first run saves them, its policies and 8 days of
    history."""
    from app.core.conditions import RECOMMENDATION_PROVIDED, Condition
    from app.core.recommend.array_model import ArrayModel
    from app.core.workload_key import WorkloadKey
    from app.store import clusters
    from app.store.results import CurrentRequests, results_from_model

    identity = clusters.init_app(app, f"fleet-bench-{index:03d}", f"cluster-{index}")
    model = ArrayModel()
    keys = [WorkloadKey(f"scale-{i // 1000}", "Deployment", f"app-{i}") for i in range(workloads)]
    start = T0.timestamp() - 86400
    for w in keys:
        base_cpu, base_mem = rng.choice((0.05, 0.2, 0.3, 0.6)), rng.choice((6e7, 9e7, 4e8, 5e8))
        for s in range(48):  # a day of samples every half hour: the histograms' spread
            t = start + s * 1800
            model.add_cpu(w, f"{w.name}-p", "app", t, base_cpu * rng.lognormvariate(0, 0.4), 0.5)
            model.add_memory(w, f"{w.name}-p", "app", t, base_mem * rng.lognormvariate(0, 0.1))
    current = CurrentRequests(250, 256 << 20, REPLICAS, 250 * REPLICAS, (256 << 20) * REPLICAS)
    results = [replace(r, current=current) for r in results_from_model(model)]
    provided = [Condition(RECOMMENDATION_PROVIDED, "True")]
    cluster = Cluster(index, identity, results, {w: provided for w in keys})
    with app.app_context():
        from app.store.extensions import db
        from app.store.recommendations import save_all

        key = clusters.cluster_key(db.session)
        add_policies(db.session, key, index, keys)
        save_all(db.session, results, T0 - timedelta(hours=1), 500)
        fill_history(db.session, key, results)
        db.session.remove()
    return cluster


def add_policies(session: Any, key: int, index: int, keys: Sequence[Any]) -> None:
    """One policy per workload, as VPA's one object per workload (names are unique fleet-wide)."""
    from sqlalchemy import insert

    from app.store.models import Policy

    now = datetime.now(UTC)
    rows = [
        {
            "cluster_id": key,
            "name": f"c{index}-{w.name}",
            "namespace": w.namespace,
            "target_kind": w.kind,
            "target_name": w.name,
            "update_mode": "Auto",
            "container_policies": [],
            "version": 1,
            "created_at": now,
            "updated_at": now,
        }
        for w in keys
    ]
    if rows:
        session.execute(insert(Policy), rows)
    session.commit()


def fill_history(session: Any, key: int, results: Sequence[Any]) -> None:
    """8 days of hourly points per container, hour by hour (as appended), each container's on a
    minute of its own: a minute's run finds a sixtieth of them due, as in a running cluster."""
    from sqlalchemy import insert

    from app.store.models import RecommendationPoint

    table = RecommendationPoint.__table__
    for h in range(HISTORY_DAYS * 24, 0, -1):
        rows = []
        for i, r in enumerate(results):
            w, rec = r.workload, r.recommendation
            rows.append(
                {
                    "cluster_id": key,
                    "namespace": w.namespace,
                    "kind": w.kind,
                    "name": w.name,
                    "container": r.container,
                    "time": T0 + timedelta(minutes=i % 60, hours=-h),
                    "target_cpu": rec.target.cpu,
                    "target_memory": rec.target.memory,
                    "current_cpu_request": 250,
                    "current_memory_request": 256 << 20,
                    "usage_cpu_p50": rec.target.cpu // 2,
                    "usage_cpu_p90": rec.target.cpu,
                    "usage_memory_p50": rec.target.memory // 2,
                    "usage_memory_p90": rec.target.memory,
                }
            )
        session.execute(insert(table), rows)
    session.commit()


def run_results(cluster: Cluster, run: int, changed: float, rng: random.Random) -> list[Any]:
    """One run's results: every span moved a minute, `changed` of the targets new, a tenth of
    the checkpoints due (each every tenth run, the oldest first)."""
    from app.core.resources import Resources
    from app.store.results import SampleSpan

    out = []
    for i, r in enumerate(cluster.results):
        span = r.span
        rec = r.recommendation
        if rec is not None and rng.random() < changed:
            rec = replace(rec, target=Resources(rec.target.cpu + 1 + run % 7, rec.target.memory))
        out.append(
            replace(
                r,
                recommendation=rec,
                checkpoint=r.checkpoint if i % 10 == run % 10 else None,
                samples=SampleSpan(span.total + run, span.first, (span.last or 0) + 60 * run),
            )
        )
    return out


def recommender_run(app: Any, cluster: Cluster, results: list[Any], now: datetime) -> float:
    """The database work of one recommender run of `cluster` (app.jobs.recommender._run); the
    wall seconds of its totals write."""
    from app.core.conditions import RECOMMENDER_TYPES
    from app.core.policy import PolicyIndex
    from app.jobs.cluster_totals import TotalsWriter
    from app.settings import settings
    from app.store import clusters
    from app.store.conditions import save_conditions
    from app.store.extensions import db
    from app.store.policies import InvalidPolicyLog, valid_policies
    from app.store.recommendations import count_recommendations, save_all, stored_workloads

    app.extensions[clusters.EXTENSION] = cluster.identity
    with app.app_context():
        s = db.session
        policies = PolicyIndex(valid_policies(s, InvalidPolicyLog("recommender")))
        report = save_all(s, results, now, 500, recent=cluster.recent)
        if report.failed:
            raise SystemExit(f"cluster {cluster.index}: {report.failed} rows not saved")
        save_conditions(s, RECOMMENDER_TYPES, cluster.conditions, now)
        stored_workloads(s)
        began = time.perf_counter()
        if not TotalsWriter(settings()).write(s, policies, now, lambda: True):
            raise SystemExit(f"cluster {cluster.index}: its totals were not written")
        totals = time.perf_counter() - began
        count_recommendations(s)
        s.remove()
    return totals


def reloader(app: Any, cluster: Cluster) -> Callable[[], None]:
    """The webhook's refresh of `cluster`'s snapshot, with its RowMemo (app.webhook.cache)."""
    from app.store import clusters
    from app.store.extensions import db
    from app.store.snapshot import RowMemo, load_snapshot
    from app.webhook.cache import WebhookCache

    memo = RowMemo()

    def load() -> Any:
        app.extensions[clusters.EXTENSION] = cluster.identity
        with app.app_context():
            try:
                return load_snapshot(db.session, memo=memo)
            finally:
                db.session.remove()

    cache = WebhookCache(load)

    def refresh() -> None:
        if not cache.refresh():
            raise SystemExit("a reload failed")

    refresh()
    return refresh


# The measurement -----------------------------------------------------------------------------
@dataclass
class Fleet:
    app: Any
    engine: Any
    counter: RowCounter
    recorder: Recorder
    rng: random.Random
    changed: float
    clusters: list[Cluster] = field(default_factory=list)
    run: int = 0  # minute runs so far
    totals: list[float] = field(default_factory=list)  # each timed run's totals write

    def now(self) -> datetime:
        return T0 + timedelta(minutes=self.run)

    def minute(self, timed: bool = True) -> tuple[int, float, list[float]]:
        """Every cluster's run of the next minute: (rows written, seconds, each run's)."""
        rows, each = self.counter.rows, []
        for c in self.clusters:
            results = run_results(c, self.run, self.changed, self.rng)
            began = time.perf_counter()
            totals = recommender_run(self.app, c, results, self.now())
            each.append(time.perf_counter() - began)
            if timed:
                self.totals.append(totals)
        self.run += 1
        return self.counter.rows - rows, sum(each), each

    def reload_figures(self, reloads: int) -> tuple[float, float]:
        refresh = reloader(self.app, self.clusters[0])
        cpu, wall = [], []
        for _ in range(reloads):
            c, w = time.process_time(), time.perf_counter()
            refresh()
            cpu.append(time.process_time() - c)
            wall.append(time.perf_counter() - w)
        return statistics.median(cpu), statistics.median(wall)

    def fleet_view(self, reads: int) -> tuple[float, float]:
        """Median wall seconds of the fleet view as the first cluster's API answers it: GET
        /api/v1/fleet (each cluster's stored totals), and every cluster's recommendation rows
        read and summed (app.store.fleet, as GET did before the stored totals); each cluster's
        figures checked equal both ways."""
        from app.dashboard.data import scoper
        from app.store import clusters
        from app.store.extensions import db
        from app.store.fleet import fleet

        self.app.extensions[clusters.EXTENSION] = self.clusters[0].identity
        client = self.app.test_client()
        wall, summed = [], []
        for _ in range(reads):
            began = time.perf_counter()
            answer = client.get("/api/v1/fleet")
            wall.append(time.perf_counter() - began)
            if answer.status_code != 200:
                raise SystemExit(f"GET /api/v1/fleet answered {answer.status_code}")
            if answer.json["totals"]["clusters"] != len(self.clusters):
                raise SystemExit("GET /api/v1/fleet did not see every cluster")
            if {c["computedBy"] for c in answer.json["items"]} != {"leader"}:
                raise SystemExit("GET /api/v1/fleet summed a cluster without stored totals")
            with self.app.test_request_context():
                began = time.perf_counter()
                old = fleet(db.session, scoper, stored=False)
                summed.append(time.perf_counter() - began)
                new = fleet(db.session, scoper)
                db.session.remove()
            if [c.figures for c in old.clusters] != [c.figures for c in new.clusters]:
                raise SystemExit("the stored totals differ from the rows summed")
        return statistics.median(wall), statistics.median(summed)

    def examined_reload(self) -> tuple[int, list[str]]:
        refresh = reloader(self.app, self.clusters[0])
        self.recorder.seen, self.recorder.on = [], True
        try:
            refresh()
        finally:
            self.recorder.on = False
        return examined(self.engine, self.recorder.seen)

    def examined_run(self) -> tuple[int, list[str]]:
        """The reads of the first cluster's run as a new leader's first (every history point
        looked up: the same statements at every count)."""
        c = replace(self.clusters[0], recent={})
        self.recorder.seen, self.recorder.on = [], True
        try:
            recommender_run(
                self.app, c, run_results(c, self.run, self.changed, self.rng), self.now()
            )
        finally:
            self.recorder.on = False
        self.run += 1
        return examined(self.engine, self.recorder.seen)


def measure(fleet: Fleet, count: int, workloads: int, runs: int, reloads: int) -> Step:
    while len(fleet.clusters) < count:
        fleet.clusters.append(build_cluster(fleet.app, len(fleet.clusters), workloads, fleet.rng))
    fleet.recorder.on = False
    fleet.minute(timed=False)  # each new cluster's first run: its history lookups (a new term)
    fleet.totals = []
    rows = n = 0
    seconds = 0.0
    each: list[float] = []
    for _ in range(runs):
        r, s, e = fleet.minute()
        rows, seconds, n = rows + r, seconds + s, n + len(e)
        each += e
    cpu, wall = fleet.reload_figures(reloads)
    with fleet.engine.connect() as conn:  # the planner's statistics, as autovacuum keeps them
        import sqlalchemy as sa

        conn.execute(sa.text("ANALYZE"))
        conn.commit()
    reload_examined, reload_scans = fleet.examined_reload()
    run_examined, run_scans = fleet.examined_run()
    view, summed = fleet.fleet_view(max(1, reloads // 10))
    scans = list(dict.fromkeys(reload_scans + run_scans))
    return Step(
        count,
        count * workloads,
        n,
        rows,
        seconds,
        each,
        cpu,
        wall,
        reload_examined,
        run_examined,
        view,
        summed,
        statistics.median(fleet.totals),
        scans,
    )


PADDED = ("recommendations", "checkpoints")


def padded(fleet: Fleet, extra: int) -> tuple[int, int, int, list[str]]:
    """`extra` more clusters whose recommendation and checkpoint rows are copies of the first
    cluster's (SQL, in seconds: a fleet's size without its runs), then the first cluster's
    reload and run examined again: (rows per table, reload's rows, run's rows, scans). The
    planner reads small tables whole where that is cheaper than their index; at a fleet's size
    each cluster's reads must be index scans of its own rows."""
    import sqlalchemy as sa

    with fleet.engine.connect() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO clusters (uid, name, labels, created_at) SELECT 'padding-' || g, "
                "'padding-' || g, '{}', now() FROM generate_series(1, :n) g"
            ),
            {"n": extra},
        )
        first = conn.execute(
            sa.text("SELECT id FROM clusters WHERE uid = :uid"), {"uid": fleet.clusters[0].uid}
        ).scalar_one()
        for table in PADDED:
            columns = [c["name"] for c in sa.inspect(conn).get_columns(table) if c["name"] != "id"]
            copied = ", ".join("k.id" if c == "cluster_id" else f"r.{c}" for c in columns)
            conn.execute(
                sa.text(
                    f"INSERT INTO {table} ({', '.join(columns)}) SELECT {copied} FROM {table} r "
                    "CROSS JOIN clusters k WHERE r.cluster_id = :first AND k.uid LIKE 'padding-%'"
                ),
                {"first": first},
            )
        rows = conn.execute(sa.text("SELECT count(*) FROM recommendations")).scalar_one()
        conn.execute(sa.text("ANALYZE"))
        conn.commit()
    reload_examined, reload_scans = fleet.examined_reload()
    run_examined, run_scans = fleet.examined_run()
    return int(rows), reload_examined, run_examined, list(dict.fromkeys(reload_scans + run_scans))


def simulated_day(fleet: Fleet) -> tuple[dict[str, int], dict[str, int], int, float]:
    """24 runs an hour apart for every cluster: (sizes before, sizes after, rows, seconds)."""
    before = sizes(fleet.engine)
    rows, began = fleet.counter.rows, time.perf_counter()
    for _ in range(24):
        fleet.run += 60 - 1  # the next hour: every container's point due
        fleet.minute()
    seconds = time.perf_counter() - began
    return before, sizes(fleet.engine), fleet.counter.rows - rows, seconds


def commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=sc.ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def report(
    args: argparse.Namespace,
    steps: list[Step],
    day: Any,
    per_container: int,
    pad: tuple[int, int, int, list[str]] | None = None,
) -> list[str]:
    before, after, day_rows, day_seconds = day
    containers = steps[-1].containers
    rows = [
        (
            str(s.clusters),
            str(s.containers),
            f"{s.rows_per_second:,.0f}",
            f"{s.runs_per_second:.1f}",
            f"{statistics.median(s.run_seconds):.3f}",
            f"{max(s.run_seconds):.3f}",
            f"{s.reload_cpu * 1000:.1f}",
            f"{s.reload_wall * 1000:.1f}",
            str(s.reload_examined),
            str(s.run_examined),
            f"{s.view * 1000:.1f}",
            f"{s.summed * 1000:.0f}",
            f"{s.totals_write * 1000:.1f}",
        )
        for s in steps
    ]
    last, ratio = steps[-1], flatness(steps)
    minute_share = statistics.median(last.run_seconds) * last.clusters / 60
    size_rows = [
        (
            t,
            f"{before[t] / 1e6:.1f}",
            f"{after[t] / 1e6:.1f}",
            f"{after[t] / containers / 1024:.1f}",
        )
        for t in TABLES
    ]
    total_b, total_a = sum(before.values()), sum(after.values())
    size_rows.append(
        (
            "total",
            f"{total_b / 1e6:.1f}",
            f"{total_a / 1e6:.1f}",
            f"{total_a / containers / 1024:.1f}",
        )
    )
    history = after["recommendation_history"]
    points = containers * (HISTORY_DAYS * 24 + 1)
    per_point = history / points
    return [
        f"rightsizer fleet: {args.clusters} clusters of {args.pods} pods ({per_container} workload "
        f"containers each: Deployments of {REPLICAS} pods, one container) writing to one "
        f"PostgreSQL database; each cluster's recommender save path run in this process under "
        f"its own cluster identity, the clusters one after the other ({args.runs} minute runs "
        f"each per count, after one untimed; {args.reloads} reloads)",
        f"machine: {sc.machine()}; load average {load()}; commit {commit()}",
        "",
        sc.table(
            [
                "clusters",
                "containers",
                "rows/s",
                "runs/s",
                "run s (median)",
                "run s (max)",
                "reload CPU ms",
                "reload wall ms",
                "reload rows examined",
                "run rows examined",
                "fleet view ms",
                "summed ms",
                "totals write ms",
            ],
            rows,
        ),
        "",
        f"snapshot reload of one cluster, {last.clusters} clusters / 1: CPU "
        f"{ratio['reload_cpu']:.2f}x, wall {ratio['reload_wall']:.2f}x, rows examined "
        f"{ratio['reload_examined']:.2f}x",
        f"one cluster's run, {last.clusters} clusters / 1: time {ratio['run_seconds']:.2f}x, "
        f"rows examined {ratio['run_examined']:.2f}x",
        f"GET /api/v1/fleet (each cluster's stored totals) at {last.clusters} clusters / 1: "
        f"{last.view / steps[0].view:.2f}x for {last.containers / steps[0].containers:.0f}x "
        f"the containers; every cluster's rows summed (the view before the stored totals): "
        f"{last.summed / steps[0].summed:.2f}x; at {last.clusters} clusters the stored totals "
        f"answer in {last.view / last.summed:.1%} of the summation's time",
        f"one leader's totals write (its {per_container} rows read and summed, one row "
        f"written), part of its run: {last.totals_write * 1000:.1f} ms median at "
        f"{last.clusters} clusters, {last.totals_write / per_container * 1e6:.0f} us a container",
        f"{last.clusters} clusters' minute runs, one after the other: "
        f"{minute_share * 60:.1f} s of each 60 s ({minute_share:.0%}); at this run time the "
        f"database takes {60 / statistics.median(last.run_seconds):.0f} clusters' runs a minute "
        f"on this machine (one connection)",
        f"table scans of the reload and the run at {last.clusters} clusters (EXPLAIN ANALYZE):",
        *(f"  {scan}" for scan in last.scans),
        "",
        f"a simulated day (24 runs an hour apart per cluster, every point due): {day_rows:,} rows "
        f"written in {day_seconds:.1f} s",
        sc.table(["table", "MB before", "MB after", "KB per container after"], size_rows),
        f"history: {per_point:.0f} bytes per point (table and indexes), 24 points per container "
        f"a day: {per_point * 24 / 1024:.1f} KB per container per day, kept {HISTORY_DAYS} days "
        f"({per_point * 24 * HISTORY_DAYS / 1024:.0f} KB); the database "
        f"{total_a / containers / 1024:.0f} KB per container in the steady state, "
        f"{(total_a - total_b) / containers / 1024:+.1f} KB per container over the day",
        *padding_lines(args.padding, steps, pad),
    ]


def padding_lines(
    extra: int, steps: Sequence[Step], pad: tuple[int, int, int, list[str]] | None
) -> list[str]:
    if pad is None:
        return []
    rows, reload_examined, run_examined, scans = pad
    first = steps[0]
    return [
        "",
        f"then {extra} more clusters' rows copied in ({rows:,} recommendation and checkpoint rows "
        f"each, ANALYZEd): the first cluster's reload examines {reload_examined:,} rows "
        f"({reload_examined / first.reload_examined:.2f}x one cluster's), its run "
        f"{run_examined:,} ({run_examined / first.run_examined:.2f}x); scans:",
        *(f"  {scan}" for scan in scans),
    ]


def flatness(steps: Sequence[Step]) -> dict[str, float]:
    """The last count's figures over the first's: 1.0 is flat in the number of clusters."""
    first, last = steps[0], steps[-1]
    return {
        "reload_cpu": last.reload_cpu / first.reload_cpu,
        "reload_wall": last.reload_wall / first.reload_wall,
        "reload_examined": last.reload_examined / first.reload_examined,
        "run_examined": last.run_examined / first.run_examined,
        "run_seconds": statistics.median(last.run_seconds) / statistics.median(first.run_seconds),
    }


def run(args: argparse.Namespace) -> tuple[list[Step], Any, list[str]]:
    from sqlalchemy import event

    counts = sorted({c for c in args.counts if c <= args.clusters} | {args.clusters})
    workloads = max(1, args.pods // REPLICAS)
    with own_database(args.database_url, args.database_name) as url:
        app = sc.make_app(url)
        from app.store.extensions import db

        with app.app_context():
            engine = db.engine
        counter, recorder = RowCounter(), Recorder()
        event.listen(engine, "after_cursor_execute", counter)
        event.listen(engine, "before_cursor_execute", recorder)
        fleet = Fleet(app, engine, counter, recorder, random.Random(48), args.changed)
        try:
            steps = [measure(fleet, n, workloads, args.runs, args.reloads) for n in counts]
            day = simulated_day(fleet)
            pad = padded(fleet, args.padding) if args.padding else None
        finally:
            engine.dispose()
    return steps, day, report(args, steps, day, workloads, pad)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clusters", type=int, default=20)
    p.add_argument("--pods", type=int, default=1500, help="per cluster")
    p.add_argument("--counts", type=int, nargs="+", default=[1, 5, 10, 20])
    p.add_argument("--runs", type=int, default=3, help="timed minute runs per count")
    p.add_argument("--reloads", type=int, default=30)
    p.add_argument("--changed", type=float, default=0.1, help="share of targets new each run")
    p.add_argument(
        "--database-url",
        default=os.environ.get(
            "RIGHTSIZER_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
        ),
        help="a PostgreSQL server (the benchmark creates --database-name on it)",
    )
    p.add_argument("--database-name", default="rightsizer_fleet_bench")
    p.add_argument(
        "--padding",
        type=int,
        default=1000,
        help="then this many clusters' rows copied in, and the reads examined again (0: none)",
    )
    p.add_argument("--output", type=Path)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    _, _, lines = run(args)
    return sc.emit(lines, args.output)


if __name__ == "__main__":
    sys.exit(main())
