"""Benchmark: a small fleet of real processes, beside benchmarks/fleet.py's in-process clusters.

`--clusters` pairs of a simulated cluster (`rightsizer sim` in scale mode, `--pods` pods) and a
`rightsizer serve` (one worker, jobs on, its own RIGHTSIZER_CLUSTER_ID), all writing to one
PostgreSQL database (created as `--database-name` on the server of `--database-url`, dropped at
the end). Each serve's recommender runs every `--interval` seconds and each simulated cluster's
clock moves a minute as often, so every run sees a minute of new samples, as a real cluster's
minute runs do; checkpoints are rewritten every ten intervals (600 s at 60 s). After every
cluster's first runs (every row inserted), the rows written to the recommender's tables over
`--seconds` (PostgreSQL's own counters, pg_stat_user_tables: inserted, updated, deleted) are
divided by the recommender runs the logs report in that window: rows per cluster run, the
figure to compare with benchmarks/fleet.py's (rows/s times run seconds there). The logs' run
times are whole recommender runs (the model, the caches and the save), not the save alone.

    .venv/bin/python benchmarks/fleet_processes.py [--clusters 2] [--pods 1500] [--seconds 120]

Not run by the tests.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import fleet
import scale_common as sc

from tests.support.json_bodies import plain

RUN = re.compile(r"recommender run: .*?saved (\d+), failed (\d+).* in ([0-9.]+)s")
TABLES = ("recommendations", "checkpoints", "recommendation_history", "workload_conditions")


class Serve:
    """One `rightsizer serve` of cluster `k`, its log in `workdir`."""

    def __init__(self, k: int, sim: sc.SimProcess, url: str, workdir: Path, interval: float):
        self.port = _free_port()
        self.log_path = workdir / f"serve-{k}.log"
        env = {
            **{k2: v for k2, v in os.environ.items() if not k2.startswith("RIGHTSIZER_")},
            "RIGHTSIZER_KUBECONFIG": sim.kubeconfig_path,
            "RIGHTSIZER_DATABASE_URL": url,
            "RIGHTSIZER_CLUSTER_ID": f"fleet-procs-{k}",
            "RIGHTSIZER_CLUSTER_NAME": f"cluster-{k}",
            "RIGHTSIZER_BIND": f"127.0.0.1:{self.port}",
            "RIGHTSIZER_WEBHOOK_PROBE_ADDRESS": f"127.0.0.1:{self.port}",
            "RIGHTSIZER_WORKERS": "1",
            "RIGHTSIZER_ACCESS_LOG": "false",
            "RIGHTSIZER_JOBS": "true",
            "RIGHTSIZER_LOG_LEVEL": "INFO",
            "RIGHTSIZER_RECOMMENDER_INTERVAL": str(interval),
            "RIGHTSIZER_CHECKPOINT_INTERVAL_SECONDS": str(interval * 10),
        }
        self._log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve"],
            cwd=sc.ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_ready(self, timeout: float = 180.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"serve exited:\n{self.log()[-3000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/readyz", timeout=2):
                    return
            except OSError:
                time.sleep(1)
        raise SystemExit(f"serve not ready in {timeout:.0f} s:\n{self.log()[-3000:]}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def runs(self) -> list[tuple[int, float]]:
        """(saved, seconds) of each recommender run logged so far."""
        return [(int(m[1]), float(m[3])) for m in RUN.finditer(self.log())]

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        self._log.close()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def written(engine: Any) -> dict[str, int]:
    """Rows inserted, updated and deleted in each of the recommender's tables, by PostgreSQL's
    counters."""
    import sqlalchemy as sa

    q = sa.text(
        "SELECT relname, n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_user_tables "
        "WHERE relname IN :tables"
    ).bindparams(sa.bindparam("tables", expanding=True))
    with engine.connect() as conn:
        conn.execute(sa.text("SELECT pg_stat_clear_snapshot()"))
        found = {str(t): int(n) for t, n in conn.execute(q, {"tables": list(TABLES)})}
    return {t: found.get(t, 0) for t in TABLES}


def wait_for(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(1)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clusters", type=int, default=2)
    p.add_argument("--pods", type=int, default=1500)
    p.add_argument("--nodes", type=int, default=50)
    p.add_argument("--seconds", type=float, default=120.0)
    p.add_argument("--interval", type=float, default=10.0)
    p.add_argument("--database-url", default=fleet.parser().get_default("database_url"))
    p.add_argument("--database-name", default="rightsizer_fleet_procs")
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)
    import sqlalchemy as sa
    from kubernetes import client

    sims: list[sc.SimProcess] = []
    serves: list[Serve] = []
    with sc.temp_workdir() as tmp, fleet.own_database(args.database_url, args.database_name) as url:
        engine = sa.create_engine(url)
        try:
            for k in range(args.clusters):
                workdir = Path(tmp) / f"cluster-{k}"
                workdir.mkdir()
                sim = sc.SimProcess(args.nodes, args.pods, workdir)
                sims.append(sim)
                api = sim.api_client()
                client.CoreV1Api(api).create_namespace(plain({"metadata": {"name": "rightsizer"}}))
                api.close()
                serve = Serve(k, sim, url, workdir, args.interval)
                serves.append(serve)
                serve.wait_ready()  # the first migrates the database before the others start

            def advance() -> None:
                for sim in sims:
                    sim.advance(60)

            def everyone_saved() -> bool:
                advance()
                time.sleep(args.interval)
                return all(len([r for r in s.runs() if r[0]]) >= 2 for s in serves)

            wait_for(everyone_saved, 600, "every cluster's first runs")
            before, runs_before = written(engine), [len(s.runs()) for s in serves]
            began = time.monotonic()
            while time.monotonic() - began < args.seconds:
                advance()
                time.sleep(args.interval)
            for s in serves:
                s.stop()
            elapsed = time.monotonic() - began
            time.sleep(2)  # the backends' counters, flushed as their connections closed
            after = written(engine)
            by_table = {t: after[t] - before[t] for t in TABLES}
            window = [s.runs()[n:] for s, n in zip(serves, runs_before, strict=True)]
        finally:
            for s in serves:
                s.stop()
            for sim in sims:
                sim.stop()
            engine.dispose()
    rows = sum(by_table.values())
    runs = sum(len(w) for w in window)
    seconds = [t for w in window for _, t in w]
    saved = [n for w in window for n, _ in w]
    return sc.emit(
        [
            f"rightsizer fleet, real processes: {args.clusters} pairs of `rightsizer sim` "
            f"({args.pods} pods, {args.nodes} nodes) and `rightsizer serve` (its own cluster id, "
            f"recommender every {args.interval:.0f} s, each simulated clock a minute ahead as "
            f"often) writing to one PostgreSQL database, measured over {elapsed:.0f} s",
            f"machine: {sc.machine()}; load average {fleet.load()}; commit {fleet.commit()}",
            "",
            sc.table(
                ["measure", "value"],
                [
                    ("recommender runs in the window (all clusters)", str(runs)),
                    ("containers saved per run (median)", f"{statistics.median(saved):.0f}"),
                    ("rows written to the recommender's tables", f"{rows:,}"),
                    ("rows per cluster run", f"{rows / max(runs, 1):.0f}"),
                    *((f"  {t}", f"{n / max(runs, 1):.1f}") for t, n in by_table.items()),
                    ("rows/s (all clusters)", f"{rows / elapsed:.0f}"),
                    ("whole recommender run s (median)", f"{statistics.median(seconds):.2f}"),
                    ("whole recommender run s (max)", f"{max(seconds):.2f}"),
                ],
            ),
        ],
        args.output,
    )


if __name__ == "__main__":
    sys.exit(main())
