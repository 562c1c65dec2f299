"""Benchmark: AdmissionReviews per second and latency over HTTPS, beside GET /healthz.

Starts the server as `rightsizer serve` does (`python -m app.cli serve`: gunicorn with
app.serving.gunicorn_conf, gthread workers, TLS, gc.freeze() after load; jobs off, nothing to
register) on
a free loopback port, serving a throw-away SQLite database (or --database-url) holding a policy and
recommendations for --workloads Deployments. Meanwhile a recommender process rewrites every
recommendation and checkpoint every --recommender-every seconds through the recommender's own
save path (app.store.recommendations.save_all, in batches), so the webhook's cache keeps reloading
changed rows during the measurement. The server is driven from client processes (one keep-alive
TLS connection per thread, HTTP/1.1 requests built once before the measurement, answers read by
their Content-Length: the same small per-request work for both endpoints, so the figures compare
the server's work; each phase prints the CPU time per request of the server's processes and of the
client's):

1. closed loop: every connection sends its next request as soon as the previous answer arrives,
   for --seconds: the most the server answers per second at that concurrency;
2. fixed rate: --rate requests per second (default: half the capacity /mutate showed in step 1)
   spread over the connections, each request's latency measured from the moment it was due (so a
   stalled server is not hidden by requests never sent).

Each step measures /mutate and /healthz in --rounds alternating slices, so that other load on
the machine weighs on both alike.

With --slow-clients N, step 2 runs a second time while another process holds N slow connections
of each kind (headers sent in part, a body sent in part, a TLS handshake stalled after part of a
ClientHello, and an idle kept-alive connection), opening again each one the server closes, as an
attacker would (CONTRIBUTING.md, "Slow and stalled clients"); the p99 with and without them is
printed.

Both for POST /mutate and GET /healthz on the same server; the ratio shows what the webhook's own
work costs over gunicorn + TLS (/healthz also goes through Flask's request handling, which /mutate
skips: app.webhook.route). The client runs on the same machine and takes its share of
the CPU: the figures are a floor for a server with the machine to itself.

    .venv/bin/python benchmarks/webhook.py [--seconds 60] [--rate N] [--workers 2] ...

Targets (issue 22): /mutate at least 0.8x the /healthz throughput, p99 at most 10 ms at half
the measured capacity.

The run fails (exit 1) when any request errs or the fixed-rate p99 misses the goal.

Not run by the tests. Sends traffic to 127.0.0.1 only and stops by itself.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MI = 1024 * 1024


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def seed_database(url: str, workloads: int) -> None:
    from flask_migrate import upgrade

    from app import create_app
    from app.store.extensions import db
    from app.store.models import Policy, Recommendation

    app = create_app({"SQLALCHEMY_DATABASE_URI": url, "TESTING": True})
    with app.app_context():
        upgrade()
        db.session.add(Policy(name="bench", namespace="bench", update_mode="Recreate"))
        for i in range(workloads):
            for container, cpu, mem in (("app", 250 + i, 300 * MI), ("envoy", 50, 64 * MI)):
                db.session.add(
                    Recommendation(
                        namespace="bench",
                        kind="Deployment",
                        name=f"web-{i}",
                        container=container,
                        target_cpu=cpu,
                        target_memory=mem,
                        lower_bound_cpu=cpu // 2,
                        lower_bound_memory=mem // 2,
                        upper_bound_cpu=cpu * 2,
                        upper_bound_memory=mem * 2,
                        uncapped_target_cpu=cpu,
                        uncapped_target_memory=mem,
                    )
                )
        db.session.commit()
        db.engine.dispose()


def pod(i: int) -> dict[str, Any]:
    """A typical Deployment pod after API defaulting: two containers, env, probes, volumes."""
    name = f"web-{i}"
    env = [{"name": f"SETTING_{k}", "value": f"value-{k}"} for k in range(8)]
    mounts = [{"name": "config", "mountPath": "/etc/app", "readOnly": True}]

    def c(cname: str, image: str, cpu: str, mem: str) -> dict[str, Any]:
        return {
            "name": cname,
            "image": image,
            "ports": [{"containerPort": 8080, "protocol": "TCP"}],
            "env": env,
            "resources": {
                "requests": {"cpu": cpu, "memory": mem},
                "limits": {"cpu": "1", "memory": "512Mi"},
            },
            "volumeMounts": mounts,
            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "periodSeconds": 10},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "imagePullPolicy": "IfNotPresent",
        }

    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": f"{name}-7c9d8f6b5d-",
            "namespace": "bench",
            "labels": {"app": name, "pod-template-hash": "7c9d8f6b5d"},
            "annotations": {"example.com/team": "checkout"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"{name}-7c9d8f6b5d",
                    "uid": "1f0c2b7e-0000-4000-8000-000000000001",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "containers": [
                c("app", "registry.example/shop/web:1.2.3", "100m", "128Mi"),
                c("envoy", "registry.example/envoy:1.30", "50m", "64Mi"),
            ],
            "volumes": [{"name": "config", "configMap": {"name": f"{name}-config"}}],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "schedulerName": "default-scheduler",
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
            ],
        },
    }


def review_body(i: int) -> bytes:
    return json.dumps(
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": f"00000000-0000-4000-8000-{i:012d}",
                "kind": {"group": "", "version": "v1", "kind": "Pod"},
                "resource": {"group": "", "version": "v1", "resource": "pods"},
                "namespace": "bench",
                "operation": "CREATE",
                "userInfo": {"username": "system:serviceaccount:kube-system:replicaset-controller"},
                "object": pod(i),
                "oldObject": None,
                "dryRun": False,
            },
        }
    ).encode()


def http_request(path: str, body: bytes | None) -> bytes:
    """The request's bytes, built once: the client's per-request work is then the same for both
    endpoints (send these bytes, read one answer), whatever the body."""
    if body is None:
        return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


class Connection:
    """One keep-alive HTTP/1.1 connection over TLS, as small a client as answers allow: sends
    prebuilt requests, reads an answer by its Content-Length (the server always sends one). An
    answer with `Connection: close` (a worker handing the connection over to one holding fewer,
    app.serving.accept_gate) has the next request sent on a new connection, as kube-apiserver's
    client does; that request's time includes the new connection's."""

    def __init__(self, port: int, ctx: ssl.SSLContext) -> None:
        self.port, self.ctx = port, ctx
        self.reopened = 0  # connections opened again after a Connection: close
        self._connect()

    def _connect(self) -> None:
        raw = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = self.ctx.wrap_socket(raw, server_hostname="127.0.0.1")
        self.buf = b""
        self.closing = False

    def exchange(self, request: bytes) -> tuple[int, bytes]:
        """(status, body) of the answer to `request`."""
        if self.closing:
            self.sock.close()
            self._connect()
            self.reopened += 1
        self.sock.sendall(request)
        buf = self.buf
        end = buf.find(b"\r\n\r\n")
        while end < 0:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed by the server")
            buf += chunk
            end = buf.find(b"\r\n\r\n")
        head = buf[:end].lower()
        at = head.find(b"\r\ncontent-length:")
        if at < 0:
            raise http.client.HTTPException("an answer without Content-Length")
        stop = head.find(b"\r\n", at + 2)
        length = int(head[at + 17 : stop if stop >= 0 else len(head)])
        total = end + 4 + length
        self.closing = b"\r\nconnection: close" in head
        while len(buf) < total:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed by the server")
            buf += chunk
        self.buf = buf[total:]
        return int(buf[9:12]), buf[end + 4 : total]

    def close(self) -> None:
        self.sock.close()


def client_process(
    port: int,
    ca: str,
    path: str,
    threads: int,
    seconds: float,
    rate: float,
    workloads: int,
    start_at: float,
    out: Any,
) -> None:
    """Runs `threads` connections; puts (latencies in seconds, errors, answers with a patch, this
    process's CPU seconds while measuring)."""
    import threading

    # Python hands the GIL over every 5 ms by default: a thread whose answer has arrived would
    # wait that long behind another one parsing. The client's own delay is not the server's.
    sys.setswitchinterval(0.0002)

    ctx = ssl.create_default_context(cafile=ca)
    if path == "/mutate":
        requests = [http_request(path, review_body(i)) for i in range(workloads)]
    else:
        requests = [http_request(path, None)]
    results: list[tuple[list[float], int, int, int]] = []
    lock = threading.Lock()

    def run(t: int) -> None:
        conn = Connection(port, ctx)
        lat: list[float] = []
        errors = patched = reopened = 0
        interval = threads * PROCS / rate if rate else 0.0
        due = start_at + (t / threads) * interval
        end = start_at + seconds
        i = t
        time.sleep(max(0.0, start_at - time.perf_counter()))  # all connections start together
        while True:
            now = time.perf_counter()
            if rate:
                if due >= end:
                    break
                if due > now:
                    time.sleep(due - now)
                begin = due
                due += interval
            else:
                if now >= end:
                    break
                begin = now
            try:
                status, data = conn.exchange(requests[i % len(requests)])
                if status != 200:
                    errors += 1
                elif b'"patch"' in data:  # the same test for both: /healthz never has one
                    patched += 1
            except (OSError, ValueError, http.client.HTTPException):
                errors += 1
                conn.close()
                reopened += conn.reopened
                conn = Connection(port, ctx)
            lat.append(time.perf_counter() - begin)
            i += threads
        conn.close()
        with lock:
            results.append((lat, errors, patched, reopened + conn.reopened))

    workers = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    time.sleep(max(0.0, start_at - time.perf_counter()))
    cpu = time.process_time()  # this process's CPU from the start of the measurement
    for w in workers:
        w.join()
    out.put(
        (
            [x for r in results for x in r[0]],
            sum(r[1] for r in results),
            sum(r[2] for r in results),
            time.process_time() - cpu,
            sum(r[3] for r in results),
        )
    )


PROCS = 2  # client processes (set from --client-procs before forking)


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system, all threads) a process has used so far; 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def worker_cpu(master: int) -> dict[int, float]:
    """CPU seconds used so far by each of gunicorn's workers (Linux /proc), by pid."""
    try:
        children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    except OSError:
        children = []
    return {int(c): process_cpu(int(c)) for c in children}


def server_cpu(master: int) -> float:
    """CPU seconds used so far by gunicorn's master and its workers."""
    return process_cpu(master) + sum(worker_cpu(master).values())


def busiest_share(before: dict[int, float], after: dict[int, float]) -> float:
    """The busiest worker's share of the workers' CPU between two readings: 1/workers when the
    connections' load is spread evenly, up to 1 when one worker does all the work."""
    used = [after[pid] - before.get(pid, 0.0) for pid in after]
    total = sum(used)
    return max(used) / total if total > 0 else float("nan")


PATHS = ("/mutate", "/healthz")
# one measurement: latencies, errors, answers with a patch, server CPU seconds, client CPU seconds,
# the busiest worker's share of the workers' CPU, connections handed over (opened again)
Slice = tuple[list[float], int, int, float, float, float, int]


def run_slice(
    port: int,
    ca: str,
    path: str,
    args: argparse.Namespace,
    rate: float,
    server: int,
    seconds: float,
) -> Slice:
    """One measurement of `seconds`: (latencies, errors, answers with a patch, server CPU
    seconds, client CPU seconds)."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    start_at = time.perf_counter() + 0.5
    per_proc_threads = max(1, args.connections // PROCS)
    procs = [
        ctx.Process(
            target=client_process,
            args=(
                port,
                ca,
                path,
                per_proc_threads,
                seconds,
                rate,
                args.workloads,
                start_at,
                q,
            ),
        )
        for _ in range(PROCS)
    ]
    for p in procs:
        p.start()
    time.sleep(max(0.0, start_at - time.perf_counter()))
    server_before = server_cpu(server)
    workers_before = worker_cpu(server)
    lat: list[float] = []
    errors = patched = reopened = 0
    client = 0.0
    for _ in procs:
        part, e, n, c, r = q.get(timeout=seconds + 120)
        lat += part
        errors += e
        patched += n
        client += c
        reopened += r
    server_used = server_cpu(server) - server_before
    busiest = busiest_share(workers_before, worker_cpu(server))
    for p in procs:
        p.join()
    if args.slices:
        ranked = sorted(lat)
        say(
            f"    slice {path:<8} {len(lat) / seconds:6.0f}/s  p99 "
            f"{ranked[int(0.99 * len(ranked))] * 1000:7.2f} ms  busiest worker {busiest:.0%}"
            + (f"  handed over {reopened}" if reopened else "")
        )
    return lat, errors, patched, server_used, client, busiest, reopened


def measure(
    port: int, ca: str, args: argparse.Namespace, rate: float, server: int
) -> dict[str, dict[str, float]]:
    """Both endpoints, each for --seconds, in --rounds alternating slices (the first endpoint
    of a round alternates too), so that both see the machine's other load alike."""
    slices: dict[str, list[Slice]] = {p: [] for p in PATHS}
    each = args.seconds / args.rounds
    for k in range(args.rounds):
        for path in PATHS if k % 2 == 0 else PATHS[::-1]:
            slices[path].append(run_slice(port, ca, path, args, rate, server, each))
    return {path: summary(parts, args.seconds) for path, parts in slices.items()}


def summary(parts: list[Slice], seconds: float) -> dict[str, float]:
    lat = sorted(x for part in parts for x in part[0])
    n = len(lat)

    def pct(p: float) -> float:
        return lat[min(n - 1, int(p * n))] * 1000 if n else float("nan")

    return {
        "requests": n,
        "per_second": n / seconds,
        "p50_ms": pct(0.50),
        "p99_ms": pct(0.99),
        "max_ms": lat[-1] * 1000 if n else float("nan"),
        "errors": sum(part[1] for part in parts),
        "patched": sum(part[2] for part in parts),
        # CPU per request: gunicorn's processes, the client's
        "server_us": sum(part[3] for part in parts) / max(n, 1) * 1e6,
        "client_us": sum(part[4] for part in parts) / max(n, 1) * 1e6,
        # how evenly the connections' load fell on the workers: the busiest one's share, worst slice
        "busiest": max(part[5] for part in parts),
        # connections opened again after a Connection: close (a worker handing one over)
        "reopened": sum(part[6] for part in parts),
    }


def serve_environment(url: str, tmp: Path, port: int) -> tuple[dict[str, str], Any]:
    """`rightsizer serve`'s environment for a benchmark: the database at `url`, TLS with a
    certificate made in `tmp`, bound to 127.0.0.1:`port`, no jobs, no webhook registration, no
    access log; and the certificate's paths (`.ca` for the client)."""
    from app.serving.certs import ensure

    paths, _ = ensure(tmp / "certs", ["localhost", "127.0.0.1"])
    env = {
        **os.environ,
        "RIGHTSIZER_DATABASE_URL": url,
        "RIGHTSIZER_BIND": f"127.0.0.1:{port}",
        "RIGHTSIZER_TLS_CERT_FILE": str(paths.cert),
        "RIGHTSIZER_TLS_KEY_FILE": str(paths.key),
        "RIGHTSIZER_CERT_DIR": str(paths.directory),
        "RIGHTSIZER_JOBS": "false",
        "RIGHTSIZER_WEBHOOK_REGISTER": "false",
        "RIGHTSIZER_ACCESS_LOG": "false",
        "RIGHTSIZER_LOG_LEVEL": "WARNING",
    }
    return env, paths


def wait_until_up(port: int, ca: str, proc: subprocess.Popen[bytes]) -> None:
    ctx = ssl.create_default_context(cafile=ca)
    for _ in range(300):
        if proc.poll() is not None:
            raise SystemExit(f"gunicorn exited with {proc.returncode}")
        try:
            conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                conn.close()
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit("gunicorn did not come up")


def warm_up(port: int, ca: str, workers: int) -> None:
    """Enough reviews that every worker has started its cache thread and loaded it."""
    ctx = ssl.create_default_context(cafile=ca)
    for i in range(workers * 20):
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=10)
        conn.request("POST", "/mutate", body=review_body(i), headers={"Content-Type": "x"})
        data = conn.getresponse().read()
        conn.close()
        if i >= workers * 10 and b'"patch"' not in data:
            raise SystemExit(f"warm-up review {i} got no patch: {data[:300]!r}")


REPORT: list[str] = []  # every line printed, for --output


def say(text: str) -> None:
    print(text, flush=True)
    REPORT.append(text)


def machine() -> str:
    """Machine, commit and load average, for the results file's header."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "unknown CPU",
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    tree = " (other files of the tree modified)" if dirty else ""
    return f"commit {commit}{tree}; {os.cpu_count()} CPUs ({model}); load average {load}"


def show(label: str, r: dict[str, float]) -> None:
    say(
        f"  {label:<26} {r['per_second']:8.0f}/s   p50 {r['p50_ms']:6.2f} ms   "
        f"p99 {r['p99_ms']:6.2f} ms   max {r['max_ms']:7.2f} ms   "
        f"errors {r['errors']:.0f}   n {r['requests']:.0f}   "
        f"CPU/request: server {r['server_us']:.0f} us, client {r['client_us']:.0f} us   "
        f"busiest worker {r['busiest']:.0%} of the server CPU   "
        f"connections handed over {r['reopened']:.0f}"
    )


def slow_connection(kind: str, port: int, ctx: ssl.SSLContext) -> socket.socket:
    """One slow client's connection of `kind`, left waiting."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    if kind == "handshake":  # a TLS record of 512 bytes announced, 6 sent
        raw.sendall(b"\x16\x03\x01\x02\x00\x01")
        return raw
    sock = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
    post = b"POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    if kind == "headers":
        sock.sendall(post)
    elif kind == "body":
        sock.sendall(post + b"Content-Length: 4096\r\n\r\n" + review_body(0)[:100])
    else:  # idle: one answer, then nothing
        conn = Connection.__new__(Connection)  # the measurement's client, on this socket
        conn.sock, conn.buf, conn.closing = sock, b"", False
        conn.exchange(http_request("/healthz", None))
    return sock


SLOW_KINDS = ("headers", "body", "handshake", "idle")


def closed(sock: socket.socket) -> bool:
    """Whether the server closed `sock`, found readable: TLS session tickets arriving after the
    handshake make a connection readable too, and are no close."""
    sock.setblocking(False)
    try:
        return sock.recv(4096) == b""
    except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
        return False
    except OSError:
        return True
    finally:
        sock.setblocking(True)


def slow_clients_process(port: int, ca: str, each: int, stop: Any, ready: Any, out: Any) -> None:
    """Holds `each` slow connections of every kind until `stop`, opening again any the server
    closed (looked at every 0.2 s); puts how many it had to open again."""
    import select

    ctx = ssl.create_default_context(cafile=ca)
    kinds = [kind for kind in SLOW_KINDS for _ in range(each)]
    held: list[socket.socket | None] = [slow_connection(kind, port, ctx) for kind in kinds]
    ready.set()
    reopened = 0
    while not stop.wait(0.2):
        readable, _, _ = select.select([s for s in held if s is not None], [], [], 0)
        for i, sock in enumerate(held):
            if sock is None or (sock in readable and closed(sock)):
                if sock is not None:
                    sock.close()
                    reopened += 1
                try:
                    held[i] = slow_connection(kinds[i], port, ctx)
                except OSError:
                    held[i] = None  # tried again at the next look
    for sock in held:
        if sock is not None:
            sock.close()
    out.put(reopened)


def recommender_process(url: str, workloads: int, every: float, stop: Any, out: Any) -> None:
    """Rewrites every workload's recommendations and checkpoints every `every` seconds, as the
    recommender job does (save_all in batches of 500), with usage that changes from round to
    round. Puts (rounds, rows saved, rows failed) when told to stop."""
    from datetime import UTC, datetime

    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session

    from app.core.recommend.array_model import ArrayModel
    from app.core.recommend.settings import RecommenderSettings
    from app.core.workload_key import WorkloadKey
    from app.store.recommendations import save_all
    from app.store.results import results_from_model

    session = Session(create_engine(url))
    model = ArrayModel(RecommenderSettings())
    t0 = time.time() - 2 * 86400
    rounds = saved = failed = 0
    while not stop.is_set():
        for i in range(workloads):
            w = WorkloadKey("bench", "Deployment", f"web-{i}")
            for c, base in (("app", 0.25), ("envoy", 0.05)):
                t = t0 + rounds * 60
                model.add_cpu(w, f"web-{i}-x", c, t, base * (1 + (rounds % 7) / 10), 0.1)
                model.add_memory(w, f"web-{i}-x", c, t, 3e8 + (rounds % 5) * 1e7)
        report = save_all(session, results_from_model(model), datetime.now(UTC), 500)
        s, f = report.saved, report.failed
        rounds, saved, failed = rounds + 1, saved + s, failed + f
        stop.wait(every)
    out.put((rounds, saved, failed))


def main() -> None:
    global PROCS
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="per measurement")
    ap.add_argument(
        "--rounds",
        type=int,
        default=6,
        help="each measurement in this many slices, alternating /mutate and /healthz",
    )
    ap.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="fixed-rate phase, requests/s (0: half the /mutate capacity measured in this run)",
    )
    ap.add_argument("--connections", type=int, default=8, help="keep-alive connections")
    ap.add_argument("--client-procs", type=int, default=4)
    ap.add_argument("--workers", type=int, help="RIGHTSIZER_WORKERS (default: serve's)")
    ap.add_argument("--threads", type=int, help="RIGHTSIZER_THREADS (default: serve's)")
    ap.add_argument("--workloads", type=int, default=200)
    ap.add_argument(
        "--recommender-every",
        type=float,
        default=10.0,
        help="seconds between the concurrent recommender's saves (0: no recommender)",
    )
    ap.add_argument(
        "--slices",
        action="store_true",
        help="also print each slice's rate, p99 and busiest worker's share as it ends",
    )
    ap.add_argument(
        "--max-only",
        action="store_true",
        help="skip the closed-loop phases: only the fixed-rate /mutate and /healthz",
    )
    ap.add_argument(
        "--slow-clients",
        type=int,
        default=0,
        help="run the fixed-rate phase again while holding this many slow connections of each "
        "kind (partial headers, partial body, stalled TLS handshake, idle keep-alive)",
    )
    ap.add_argument("--database-url", help="default: a SQLite file in a temporary directory")
    ap.add_argument("--output", type=Path, help="also write the report there, with its header")
    args = ap.parse_args()
    PROCS = args.client_procs

    tmp = Path(tempfile.mkdtemp(prefix="rightsizer-bench-"))
    url = args.database_url or f"sqlite:///{tmp}/bench.db"
    seed_database(url, args.workloads)
    port = free_port()
    env, paths = serve_environment(url, tmp, port)
    if args.workers:
        env["RIGHTSIZER_WORKERS"] = str(args.workers)
    if args.threads:
        env["RIGHTSIZER_THREADS"] = str(args.threads)
    from app.config import from_environment

    served = from_environment(env)
    workers, threads = served.serving.workers, served.serving.threads
    # Exactly `rightsizer serve`, which execs gunicorn -c python:app.serving.gunicorn_conf.
    server = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--no-migrate"], cwd=ROOT, env=env
    )
    ctx = mp.get_context("fork")
    stop, out = ctx.Event(), ctx.Queue()
    writer = None
    failed = False
    try:
        ca = str(paths.ca)
        wait_until_up(port, ca, server)
        warm_up(port, ca, workers)
        at_start = machine()
        if args.recommender_every > 0:
            writer = ctx.Process(
                target=recommender_process,
                args=(url, args.workloads, args.recommender_every, stop, out),
            )
            writer.start()
        say(
            f"rightsizer serve: {workers} workers x {threads} threads (gthread), TLS, "
            f"keep-alive; client: {PROCS} processes, {args.connections} connections, "
            "prebuilt requests (the same per-request work for both endpoints); "
            f"{os.cpu_count()} CPUs; recommender saving every "
            f"{args.recommender_every:g}s" + (" (off)" if args.recommender_every <= 0 else "")
        )
        results = {}
        if not args.max_only:
            for path, r in measure(port, ca, args, 0.0, server.pid).items():
                results[(path, "max")] = r
            if args.rate <= 0:  # half of the capacity /mutate showed in this run
                args.rate = round(results[("/mutate", "max")]["per_second"] / 2)
        for path, r in measure(port, ca, args, args.rate, server.pid).items():
            results[(path, "rate")] = r
        reopened_slow = 0
        if args.slow_clients > 0:
            ready, slow_stop, slow_out = ctx.Event(), ctx.Event(), ctx.Queue()
            slow = ctx.Process(
                target=slow_clients_process,
                args=(port, ca, args.slow_clients, slow_stop, ready, slow_out),
            )
            slow.start()
            if not ready.wait(120):
                raise SystemExit("the slow clients did not connect")
            try:
                for path, r in measure(port, ca, args, args.rate, server.pid).items():
                    results[(path, "slow")] = r
            finally:
                slow_stop.set()
                reopened_slow = slow_out.get(timeout=60)
                slow.join(30)
        if not args.max_only:
            say("closed loop (as fast as answers come):")
            show("POST /mutate", results[("/mutate", "max")])
            show("GET /healthz", results[("/healthz", "max")])
        say(f"fixed rate {args.rate:.0f}/s (latency from when each request was due):")
        show("POST /mutate", results[("/mutate", "rate")])
        show("GET /healthz", results[("/healthz", "rate")])
        if args.slow_clients > 0:
            say(
                f"fixed rate {args.rate:.0f}/s while {args.slow_clients} slow connections of each "
                f"kind ({', '.join(SLOW_KINDS)}) are held; the server closed {reopened_slow} "
                "(each opened again at once):"
            )
            show("POST /mutate", results[("/mutate", "slow")])
            show("GET /healthz", results[("/healthz", "slow")])
            for path in PATHS:
                without, held = results[(path, "rate")], results[(path, "slow")]
                say(
                    f"p99 {path}: {without['p99_ms']:.2f} ms without slow clients, "
                    f"{held['p99_ms']:.2f} ms with {4 * args.slow_clients} held"
                )
        if not args.max_only:
            m, h = results[("/mutate", "max")], results[("/healthz", "max")]
            say(
                f"ratio /mutate : /healthz throughput {m['per_second'] / h['per_second']:.2f}; "
                f"server CPU per request /healthz : /mutate {h['server_us'] / m['server_us']:.2f}; "
                f"reviews with a patch {m['patched']:.0f} of {m['requests']:.0f}"
            )
        if writer is not None:
            stop.set()
            rounds, saved, lost = out.get(timeout=120)
            writer.join(30)
            writer = None
            say(f"recommender: {rounds} saves of {saved // max(rounds, 1)} rows, {lost} failed")
            failed |= lost > 0
        r = results[("/mutate", "rate")]
        errors = sum(x["errors"] for x in results.values())
        ok = r["per_second"] >= 0.98 * args.rate and r["p99_ms"] <= 10 and errors == 0
        say(
            f"goal (>= {args.rate:.0f} reviews/s at p99 <= 10 ms, no error): "
            f"{'met' if ok else 'NOT met'}"
        )
        if not args.max_only:
            m, h = results[("/mutate", "max")], results[("/healthz", "max")]
            ratio = m["per_second"] / h["per_second"]
            say(
                f"target: /mutate >= 0.8x /healthz throughput on the same server -> {ratio:.2f}x: "
                f"{'met' if ratio >= 0.8 else 'NOT met'}"
            )
        failed |= not ok
        if args.output:
            load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
            when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            header = [
                f"# benchmarks/webhook.py {' '.join(sys.argv[1:])}",
                f"# run ended {when}; at its start: {at_start}; load average at its end {load}",
            ]
            args.output.write_text("\n".join([*header, "", *REPORT]) + "\n")
    finally:
        if writer is not None:
            stop.set()
            writer.join(30)
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
