"""Benchmark: the scheduler extender's latency over the real HTTPS server (issue 45).

Starts the server as `rightsizer serve` does (`python -m app.cli serve`: gunicorn, gthread
workers, TLS; jobs off, no cluster to watch) on a free loopback port, serving a throw-away SQLite
database seeded with --nodes nodes' levels in `node_levels` (as the leader saves them from
NodeMetrics: app.store.node_levels.save_node_levels) and the recommendations of
benchmarks/webhook.py (the pod's workload has one, so the pod's predicted usage is its
recommendation, as in production). Each server process loads the levels in its own reload thread
(app.webhook.levels) and answers from them.

Then, over ONE kept-alive TLS connection (as kube-scheduler's extender client keeps one), it
sends --calls `POST /scheduler/prioritize` and then --calls `POST /scheduler/filter`, each with
the body kube-scheduler sends with `nodeCacheCapable: true`: `{"Pod": {...}, "Nodes": null,
"NodeNames": [...]}` with every node's name and a typical Deployment pod (benchmarks/webhook.py),
requests prebuilt, answers read by their Content-Length. Printed per verb: the wall time per call
(send to last byte of the answer) p50/p99/max, the server's CPU per call (user + system of
gunicorn's master and workers from /proc over the phase, divided by the calls; it includes what
the server spends while idle, its reload threads' and gunicorn's own, measured alone and printed
beside), and the machine's load average before and after. The client runs on the same machine
and takes its share of the CPU.

    .venv/bin/python benchmarks/extender_latency.py [--nodes 5000] [--calls 1000]
        [--refresh-seconds 5] [--output FILE]

Target (issue 45): `prioritize` over 5,000 node names, p99 at most 5 ms on this machine.

Not run by the tests. Sends traffic to 127.0.0.1 only and stops by itself.
"""

from __future__ import annotations

import argparse
import os
import random
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from webhook import (  # noqa: E402  (benchmarks/webhook.py)
    Connection,
    free_port,
    http_request,
    machine,
    pod,
    seed_database,
    serve_environment,
    server_cpu,
    wait_until_up,
)

GI = 1 << 30


def seed_levels(url: str, nodes: int, seed: int = 7, ahead: int = 6) -> list[str]:
    """`nodes` nodes' levels saved as the leader saves them, metrics taken now, with `ahead`
    hours of levels ahead (the default 6; 0: none, as before them). Their names."""
    from app import create_app
    from app.core.placement.windows import NodeLevel
    from app.store.extensions import db
    from app.store.node_levels import save_node_levels

    rng = random.Random(seed)
    now = time.time()
    levels = []
    for i in range(nodes):
        cpu, memory = rng.uniform(0.1, 0.8), rng.uniform(0.1, 0.8)
        levels.append(
            NodeLevel(
                f"node-{i:05d}",
                16000,
                64 * GI,
                (cpu, cpu * 0.9, cpu * 0.8),
                (memory,) * 3,
                now,
                cpu,
                memory,
                tuple(cpu + 0.02 * h for h in range(ahead)),  # RIGHTSIZER_PLACEMENT_AHEAD_HOURS
                (memory,) * ahead,
            )
        )
    app = create_app({"SQLALCHEMY_DATABASE_URI": url, "TESTING": True})
    with app.app_context():
        save_node_levels(db.session, levels, 0.0)
        db.engine.dispose()
    return [n.name for n in levels]


def body(names: list[str]) -> bytes:
    """ExtenderArgs as kube-scheduler sends them with nodeCacheCapable: true (its Go structs
    carry no json tags: the keys are the fields' names; a nil *NodeList is null)."""
    return orjson.dumps({"Pod": pod(0), "Nodes": None, "NodeNames": names})


def scored(verb: str, answer: bytes, nodes: int) -> bool:
    """Whether an answer comes from the levels (not the neutral one of a process still
    loading them): prioritize with some score above 0, filter with every node passed or
    failed by name."""
    doc = orjson.loads(answer)
    if verb == "prioritize":
        return len(doc) == nodes and any(h["Score"] for h in doc)
    passed, failed = doc.get("NodeNames") or [], doc.get("FailedNodes") or {}
    return len(passed) + len(failed) == nodes and not doc.get("Error")


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def loads() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--calls", type=int, default=1000, help="per verb")
    ap.add_argument("--idle-seconds", type=float, default=10.0, help="the idle CPU's measure")
    ap.add_argument(
        "--refresh-seconds",
        type=float,
        default=5.0,
        help="RIGHTSIZER_PLACEMENT_REFRESH_SECONDS: each worker's reload of the levels (5: the"
        " default; a long one shows what the reloads cost the calls)",
    )
    ap.add_argument(
        "--ahead-hours",
        type=int,
        default=6,
        help="hours of levels ahead each node has (RIGHTSIZER_PLACEMENT_AHEAD_HOURS; 0: none)",
    )
    ap.add_argument("--output", type=Path, help="also write the report there")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="rightsizer-extender-bench-"))
    url = f"sqlite:///{tmp}/bench.db"
    seed_database(url, 200)
    names = seed_levels(url, args.nodes, ahead=args.ahead_hours)
    port = free_port()
    env, paths = serve_environment(url, tmp, port)
    env["RIGHTSIZER_WEBHOOK_WATCH_CLUSTER"] = "false"
    env["RIGHTSIZER_PLACEMENT_REFRESH_SECONDS"] = str(args.refresh_seconds)
    from app.config import from_environment

    served = from_environment(env)
    server = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--no-migrate"], cwd=ROOT, env=env
    )
    lines: list[str] = []

    def say(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    try:
        ca = str(paths.ca)
        wait_until_up(port, ca, server)
        ctx = ssl.create_default_context(cafile=ca)
        requests = {
            verb: http_request(f"/scheduler/{verb}", body(names))
            for verb in ("prioritize", "filter")
        }
        # every worker loads the levels on its first call: fresh connections reach each one
        for _ in range(served.serving.workers * 10):
            warm = Connection(port, ctx)
            warm.exchange(requests["prioritize"])
            warm.close()
        conn = Connection(port, ctx)
        for _ in range(50):
            for verb, request in requests.items():
                status, answer = conn.exchange(request)
                if status != 200 or not scored(verb, answer, args.nodes):
                    raise SystemExit(f"warm-up {verb}: {status} {answer[:200]!r}")
        say(
            f"rightsizer serve: {served.serving.workers} workers x {served.serving.threads}"
            f" threads (gthread), TLS, one kept-alive connection; {args.nodes} nodes' levels"
            f" ({args.ahead_hours} hours ahead) in SQLite, reloaded every"
            f" {args.refresh_seconds:g}s;"
            f" {len(requests['prioritize']):,} request bytes per call; " + machine()
        )
        idle_before = server_cpu(server.pid)
        time.sleep(args.idle_seconds)
        idle = (server_cpu(server.pid) - idle_before) / args.idle_seconds
        say(
            f"server CPU while idle (its reload threads, gunicorn's own): {idle * 1000:.1f} ms"
            " per second"
        )
        for verb, request in requests.items():
            load_before = loads()
            walls: list[float] = []
            cpu_before, client_before = server_cpu(server.pid), time.process_time()
            started = time.perf_counter()
            for _ in range(args.calls):
                t0 = time.perf_counter()
                status, answer = conn.exchange(request)
                walls.append(time.perf_counter() - t0)
                if status != 200:
                    raise SystemExit(f"{verb}: {status} {answer[:200]!r}")
            elapsed = time.perf_counter() - started
            cpu = server_cpu(server.pid) - cpu_before
            client = time.process_time() - client_before
            if not scored(verb, answer, args.nodes):
                raise SystemExit(f"{verb}: a neutral answer {answer[:200]!r}")
            say(
                f"{verb:10} over {args.nodes} names, {args.calls} calls: wall p50"
                f" {pct(walls, 0.5) * 1000:.2f} ms, p99 {pct(walls, 0.99) * 1000:.2f} ms, max"
                f" {max(walls) * 1000:.2f} ms; server CPU {cpu / args.calls * 1000:.2f} ms per"
                f" call (idle share ~{idle * elapsed / args.calls * 1000:.2f} ms),"
                f" client CPU {client / args.calls * 1000:.2f} ms per call;"
                f" load average (1/5/15 min) {load_before} before, {loads()} after;"
                f" connections reopened {conn.reopened}"
            )
        conn.close()
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    if args.output:
        args.output.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
