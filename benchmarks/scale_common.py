"""Shared parts of the scale benchmarks: the simulated cluster in its own process, the app on a
throw-away database, memory and request accounting, tables.

The simulator runs as a separate `rightsizer sim` process (not in-process threads), so that the
memory and CPU figures of the benchmark process are rightsizer's alone, and the API server has a
core (and a GIL) of its own, as a real one would. Its request counters are read over HTTP
(`GET /sim/stats`), its clock moved with `POST /sim/clock?advance=`.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MB = 1024 * 1024


# Memory --------------------------------------------------------------------------------------
def rss_mb() -> float:
    """Resident set size of this process now."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MB


def peak_rss_mb() -> float:
    """Highest resident set size of this process so far (Linux: ru_maxrss is in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def proc_memory_mb(pid: int) -> tuple[float, float]:
    """(current, peak) resident set size of another process."""
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) / 1024
    return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)


def cpu_seconds(pid: int | None = None) -> float:
    """User plus system CPU seconds of a process so far, all its threads (this one by default)."""
    if pid is None:
        t = os.times()
        return t.user + t.system
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()  # after the command, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def settled_rss_mb() -> float:
    gc.collect()
    return rss_mb()


# The simulated cluster ------------------------------------------------------------------------
NODELAY_SIM = [
    "-c",
    "from app.simulator.endpoints import server; server._Handler.disable_nagle_algorithm = True; "
    "from app.cli import main; main()",
]


class SimProcess:
    """`rightsizer sim --nodes N --pods M --speed 0` on a free port, in a child process."""

    def __init__(
        self,
        nodes: int,
        pods: int,
        workdir: Path,
        nodelay: bool = True,
        version: str | None = None,
    ) -> None:
        self.nodes, self.pods, self.nodelay, self.version = nodes, pods, nodelay, version
        self.kubeconfig_path = str(workdir / "sim.kubeconfig")
        self._stderr = (workdir / "sim.log").open("w+b")
        began = time.monotonic()
        env = {**os.environ, "RIGHTSIZER_DATABASE_URL": f"sqlite:///{workdir}/unused.db"}
        # nodelay: the simulator's server writes headers and body in two send()s without
        # TCP_NODELAY, so every small response waits ~40 ms for the client's delayed ACK (Nagle).
        # kube-apiserver sets TCP_NODELAY; so does this, on the handler class, in the child only.
        start = NODELAY_SIM if nodelay else ["-m", "app.cli"]
        self.proc = subprocess.Popen(
            [
                sys.executable,
                *start,
                "sim",
                "--nodes",
                str(nodes),
                "--pods",
                str(pods),
                "--port",
                "0",
                "--speed",
                "0",
                "--kubeconfig",
                self.kubeconfig_path,
                *(["--kubernetes-version", version] if version else []),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # the kubeconfig path, once it is serving
        if not line:
            self._stderr.seek(0)
            raise RuntimeError(f"simulator exited: {self._stderr.read().decode(errors='replace')}")
        self.startup_seconds = time.monotonic() - began
        with open(self.kubeconfig_path) as f:
            cfg = yaml.safe_load(f)
        self.url: str = cfg["clusters"][0]["cluster"]["server"]

    def _call(self, method: str, path: str) -> Any:
        req = urllib.request.Request(f"{self.url}{path}", method=method)
        with urllib.request.urlopen(req, timeout=600) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def stats(self) -> dict[str, Any]:
        return dict(self._call("GET", "/sim/stats"))

    def reset_stats(self) -> None:
        self._call("DELETE", "/sim/stats")

    def advance(self, seconds: float) -> None:
        self._call("POST", f"/sim/clock?advance={seconds}")

    def now(self) -> float:
        """The simulated clock, unix seconds."""
        return float(self._call("GET", "/sim/clock")["now"])

    def memory_mb(self) -> tuple[float, float]:
        return proc_memory_mb(self.proc.pid)

    def api_client(self, qps: float = 0.0, burst: int = 10) -> Any:
        """The client as rightsizer builds it (app.kube.client: its request timeouts and rate
        limiter too; qps 0, the default here: no limit)."""
        from app.kube.client import api_client

        return api_client(self.kubeconfig_path, qps=qps, burst=burst)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        self._stderr.close()


# The database ---------------------------------------------------------------------------------
@contextlib.contextmanager
def database(url: str | None, workdir: Path) -> Iterator[str]:
    """A throw-away SQLite file, or a fresh schema in the PostgreSQL database `url`."""
    if not url:
        yield f"sqlite:///{workdir}/rightsizer.db"
        return
    if not url.startswith("postgresql"):
        yield url
        return
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    schema = "bench_" + uuid.uuid4().hex[:10]
    with engine.begin() as conn:
        conn.execute(sa.text(f"CREATE SCHEMA {schema}"))
    sep = "&" if "?" in url else "?"
    try:
        yield f"{url}{sep}options=-csearch_path%3D{schema}"
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text(f"DROP SCHEMA {schema} CASCADE"))
        engine.dispose()


def make_app(database_url: str) -> Any:
    """The Flask app, jobs off (the benchmark drives them), schema migrated; its API's reads
    answer without a token (the benchmarks read it through Flask's test client)."""
    from flask_migrate import upgrade

    from app import create_app

    app = create_app(
        {
            "SQLALCHEMY_DATABASE_URI": database_url,
            "JOBS": False,
            "PUBLIC_READS": True,
            "LOG_LEVEL": os.environ.get("RIGHTSIZER_LOG_LEVEL", "WARNING"),
        }
    )
    with app.app_context():
        upgrade()
    return app


def temp_workdir() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="rightsizer-bench-")


# Requests ------------------------------------------------------------------------------------
def request_rows(
    phases: Mapping[str, Mapping[str, Any]],
) -> tuple[list[str], list[list[str]]]:
    """One row per (verb, resource) seen in any phase, one column per phase; class totals last."""
    keys: dict[tuple[str, str, str], None] = {}
    counts: dict[str, dict[tuple[str, str, str], int]] = {}
    for phase, snap in phases.items():
        counts[phase] = {}
        for r in snap.get("requests", []):
            k = (r["class"], r["verb"], r["resource"])
            keys[k] = None
            counts[phase][k] = r["count"]
    order = {"LIST": 0, "WATCH": 1, "other": 2}
    headers = ["class", "verb", "resource", *phases]
    rows = [
        [cls, verb, res, *(str(counts[p].get((cls, verb, res), 0)) for p in phases)]
        for cls, verb, res in sorted(keys, key=lambda k: (order.get(k[0], 9), k[1], k[2]))
    ]
    for cls in ("LIST", "WATCH", "other"):
        rows.append(
            ["total", cls, "", *(str(phases[p].get("byClass", {}).get(cls, 0)) for p in phases)]
        )
    rows.append(["total", "all", "", *(str(phases[p].get("total", 0)) for p in phases)])
    return headers, rows


def pod_lists(snapshot: Mapping[str, Any]) -> int:
    return int(snapshot.get("byResource", {}).get("pods", {}).get("list", 0))


# Output --------------------------------------------------------------------------------------
def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str = "") -> str:
    cells = [[str(h) for h in headers], *[[str(c) for c in r] for r in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def fmt(r: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 or not _numeric(c) else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()

    lines = [title] if title else []
    lines += [fmt(cells[0]), "  ".join("-" * w for w in widths)]
    lines += [fmt(r) for r in cells[1:]]
    return "\n".join(lines)


def _numeric(s: str) -> bool:
    try:
        float(s.rstrip("sx%").replace(",", ""))
        return True
    except ValueError:
        return False


def machine() -> str:
    model = ""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem = ""
    with contextlib.suppress(OSError), open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / MB:.0f} GB RAM"
                break
    py = ".".join(map(str, sys.version_info[:3]))
    return f"{os.cpu_count()} cores ({model or 'unknown CPU'}), {mem}, Python {py}"


def best_update_by_id(table: Any, runs: Sequence[Sequence[Mapping[str, Any]]]) -> float:
    """The shortest of one executemany UPDATE of `table` by row id (each row's `_id`) per run,
    its parameters built beforehand, each committed: a save's floor. In an app context."""
    from sqlalchemy import bindparam, update

    from app.store.extensions import db

    remaining = iter(runs)

    def write() -> None:
        db.session.execute(update(table).where(table.c.id == bindparam("_id")), next(remaining))
        db.session.commit()

    return best_of(write, len(runs))


def best_of(fn: Callable[[], object], rounds: int) -> float:
    """The shortest of `rounds` timed calls of `fn`, in seconds."""
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return min(times)


def emit(lines: Sequence[str], output: Path | None) -> int:
    """A benchmark's report: its lines printed, and kept in `output` when given; exit status 0."""
    text = "\n".join(lines)
    print(text)
    if output:
        output.write_text(text + "\n")
    return 0
