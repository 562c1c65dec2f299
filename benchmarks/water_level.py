"""Water-level placement (issue 45): the default scheduler, the extender and an oracle, in one run.

A cluster whose pods' requests predict their usage badly: each workload uses between a fifth
and twice what it requests, with a daily pattern of its own. Every run sees the same workloads,
the same usage and the same rollouts (every hour a few workloads are rolled: all their pods are
deleted and placed again, one by one), over simulated days at one-minute steps:

- default: kube-scheduler's scores by requests (NodeResourcesFit's LeastAllocated: the mean free
  share of CPU and memory after the pod's requests, 0-100), requests filtered to fit, as the
  simulated cluster schedules (app/simulator/control/scheduler.py);
- extender: the same, plus the extender's filter, and `weight x score x 10` added to each node's
  score as kube-scheduler adds an extender's (pkg/scheduler/schedule_one.go, prioritizeNodes:
  MaxNodeScore / MaxExtenderPriority). The extender's table is rebuilt from node levels sampled
  every minute (the leader's NodeMetrics, folded per window: app.core.placement.windows); each
  bind adds the pod's predicted usage as a hot spot, each deletion subtracts it, until the next
  sample covers them (app.core.placement.hotspots, as the watch of binds feeds them). A pod's
  predicted usage is its workload's recommendation: here its usage at the daily peak;
- clairvoyant: no scheduler, an oracle (benchmarks/water_level_oracle.py): it knows every pod's
  future usage and places each pod, among the nodes its requests fit on, where the mean CPU
  spread over the next --oracle-horizon hours (0: until the pod's next rollout) is least, with
  every pod counted where it stands. Greedy, so not a lower bound: what placement alone reaches
  with perfect knowledge of usage, pod by pod. It ignores memory, whose spread then grows;
  `clairv.+mem` adds the memory spread x --oracle-memory-weight to what it minimises;
- ext.windows: the extender as it was before the levels ahead, the windows alone
  (--ahead-weight 0).

Noisy usage (both 0 by default: usage then repeats exactly every day, and the profiles learned
on day 1 are exact): --noise F multiplies each pod's CPU usage at each minute by a lognormal
factor of mean 1 and sigma F, drawn per pod and minute (`Noise`); --day-jitter F scales each
workload's CPU, each day, by a factor drawn in [1 - F, 1 + F] and shifts its daily pattern by up
to F x 2 hours either way (`jitter`). Both are seeded from --seed, the same in every run. Memory
stays constant, and a pod's predicted usage stays its workload's noise-free daily peak. The
clairvoyant knows the jittered days but not the per-minute noise.

Printed: the spread of node CPU and memory levels (max - min, and standard deviation) over time
after the first day (with --noise also the CPU spread the same placements would have without
the minute's noise: what placement decides), the hottest node's level, pods placed, and the
extender's latency per call (`Extender.answer` on the request body: JSON in, scores, JSON out; no
HTTP), with prioritize's p99 over 5,000 node names and the machine's load average beside it (the
p99 of a millisecond call on a shared machine is mostly the other processes'), and the p99 of
the CPU time the call's thread took (`time.thread_time`: the call's own work, without the time
other processes held the CPU; --calls 0: no latency run).

    .venv/bin/python benchmarks/water_level.py [--nodes 20] [--days 3] [--fill 0.6]
        [--weight 5] [--window-weights 0.5 0.3 0.2] [--min-weight 1] [--oracle-horizon 6]
        [--oracle-memory-weight 0.2] [--ahead-hours 6] [--ahead-weight 1] [--calls 1000]
        [--noise 0] [--day-jitter 0] [--runs default extender ...] [--output FILE]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from water_level_oracle import Future

from app.core.placement.ahead import with_ahead
from app.core.placement.hotspots import HotSpots
from app.core.placement.profile import Profiles
from app.core.placement.table import LevelTable, PlacementOptions
from app.core.placement.windows import NodeLevel, fold

GI = 1 << 30
DAY = 86400.0
STEP = 60.0


@dataclass
class Workload:
    name: str
    replicas: int
    cpu_request: int  # millicores
    memory_request: int
    cpu_ratio: float  # usage / request at the daily mean
    memory_ratio: float
    amplitude: float  # daily swing of CPU around the mean
    phase: float
    days: list[tuple[float, float]] = field(default_factory=list)  # --day-jitter: (scale, shift)

    def usage(self, t: float) -> tuple[float, float]:
        """A pod's CPU (millicores) and memory (bytes) at `t`, before the pod's own noise."""
        if self.days:  # this day's pattern: scaled, and shifted by some minutes
            scale, shift = self.days[min(int(t // DAY), len(self.days) - 1)]
            swing = self.amplitude * math.sin(2 * math.pi * (t - shift) / DAY + self.phase)
            daily = scale * (1.0 + swing)
        else:
            daily = 1.0 + self.amplitude * math.sin(2 * math.pi * t / DAY + self.phase)
        return self.cpu_request * self.cpu_ratio * daily, self.memory_request * self.memory_ratio

    def predicted(self) -> tuple[int, int]:
        """The recommendation's target: the usage at the daily peak."""
        peak = 1.0 + self.amplitude
        return int(self.cpu_request * self.cpu_ratio * peak), int(
            self.memory_request * self.memory_ratio
        )


class Noise:
    """--noise: each pod's CPU usage at each minute times a lognormal factor of mean 1 and
    log-standard deviation `sigma`, drawn independently per pod and minute. A pod's factors come
    from a stream of its own, seeded with (seed, the pod's number), so every run of a seed sees
    the same usage whatever it places where."""

    def __init__(self, seed: int, sigma: float, steps: int) -> None:
        self.seed, self.sigma, self.steps = seed, sigma, steps
        self.series: dict[str, np.ndarray] = {}  # uid -> a factor per minute of the run

    def factor(self, uid: str, t: float) -> float:
        s = self.series.get(uid)
        if s is None:
            rng = np.random.default_rng([self.seed, int(uid[1:])])
            s = self.series[uid] = rng.lognormal(-(self.sigma**2) / 2, self.sigma, self.steps + 1)
        return float(s[round(t / STEP)])


@dataclass
class Cluster:
    nodes: list[str]
    cpu: int
    memory: int
    pods: dict[str, tuple[Workload, str]] = field(default_factory=dict)  # uid -> (w, node)
    started: dict[str, float] = field(default_factory=dict)  # uid -> when it was bound
    requested: dict[str, list[int]] = field(default_factory=dict)
    pending: int = 0
    noise: Noise | None = None

    def __post_init__(self) -> None:
        self.requested = {n: [0, 0] for n in self.nodes}

    def usage(self, uid: str, w: Workload, t: float) -> tuple[float, float]:
        """The pod's usage at `t`: its workload's, times its noise."""
        c, m = w.usage(t)
        if self.noise is not None:
            c *= self.noise.factor(uid, t)
        return c, m

    def used(self, t: float, noisy: bool = True) -> dict[str, tuple[float, float]]:
        """Each node's CPU and memory level at `t` (`noisy` False: without the pods' noise)."""
        out = {n: [0.0, 0.0] for n in self.nodes}
        for uid, (w, node) in self.pods.items():
            c, m = self.usage(uid, w, t) if noisy else w.usage(t)
            out[node][0] += c
            out[node][1] += m
        return {n: (c / self.cpu, m / self.memory) for n, (c, m) in out.items()}


def workloads(rng: random.Random, n: int, capacity: float) -> list[Workload]:
    out, total = [], 0.0
    i = 0
    while total < capacity:
        cpu = rng.choice([100, 200, 250, 500, 1000])
        ratio = rng.choice([rng.uniform(0.2, 0.5), rng.uniform(1.2, 2.0)])  # over or under
        w = Workload(
            f"w{i}",
            rng.randint(2, 6),
            cpu,
            cpu * 2 * (1 << 20) * rng.choice([1, 2]),
            ratio,
            rng.choice([rng.uniform(0.3, 0.6), rng.uniform(1.2, 1.6)]),
            rng.uniform(0.0, 0.5),
            rng.uniform(0, 2 * math.pi),
        )
        out.append(w)
        total += w.replicas * w.cpu_request
        i += 1
    return out


def jitter(ws: list[Workload], seed: int, days: float, spread: float) -> None:
    """--day-jitter: each workload's CPU pattern, each day, scaled by a factor in
    [1 - spread, 1 + spread] and shifted by up to `spread` x 2 hours either way (0.1: 12
    minutes), drawn with `seed + 2`: no day is the one before."""
    draws = random.Random(seed + 2)
    for w in ws:
        w.days = [
            (draws.uniform(1 - spread, 1 + spread), draws.uniform(-spread, spread) * 7200)
            for _ in range(math.ceil(days) + 1)
        ]


class Placer:
    def __init__(
        self,
        extender: bool,
        weight: int,
        options: PlacementOptions,
        ahead_hours: int = 0,
    ) -> None:
        self.extender, self.weight, self.options = extender, weight, options
        self.hours = ahead_hours
        self.daily = Profiles()  # the workloads' daily profiles, as the leader keeps them
        self.table: LevelTable | None = None
        self.levels: dict[str, NodeLevel] = {}
        self.hot = HotSpots(lag=0.0)

    def sample(self, cluster: Cluster, t: float) -> None:
        if self.hours:  # the recommender's run: each pod's usage, by workload
            usage = {uid: cluster.usage(uid, w, t) for uid, (w, _) in cluster.pods.items()}
            self.daily.fold_run(
                (w.name, "default", uid, t, usage[uid][0] / 1000, usage[uid][1])
                for uid, (w, _) in cluster.pods.items()
            )
        for n, (c, m) in cluster.used(t).items():
            self.levels[n] = fold(
                self.levels.get(n),
                n,
                cluster.cpu,
                cluster.memory,
                int(c * cluster.cpu),
                int(m * cluster.memory),
                t,
            )
        if self.extender:
            rows = list(self.levels.values())
            if self.hours:  # the node-levels job: each node's level ahead from its pods'
                on_nodes = (
                    (node, "default", uid, cluster.started.get(uid))
                    for uid, (_, node) in cluster.pods.items()
                )
                rows = with_ahead(rows, on_nodes, self.daily, self.hours)
            self.table = LevelTable(rows, self.options)
            self.hot.covered({n: t for n in cluster.nodes}, t)

    def place(self, cluster: Cluster, uid: str, w: Workload, t: float) -> bool:
        fits, scores = by_requests(cluster, w)
        predicted = w.predicted()
        if self.extender and self.table is not None and fits:
            hot = self.hot.nodes()
            full = self.table.too_full(fits, predicted, hot)
            fits = [n for n, f in zip(fits, full, strict=True) if not f] or fits  # ignorable
            for n, s in zip(fits, self.table.scores(fits, predicted, hot), strict=True):
                scores[n] += self.weight * s * 10
        if not fits:
            cluster.pending += 1
            return False
        best = max(fits, key=lambda n: (scores[n], n))
        bind(cluster, uid, w, best, t)
        self.hot.bound(uid, best, predicted[0], predicted[1], t)
        return True

    def gone(self, uid: str, node: str, w: Workload, t: float) -> None:
        self.hot.gone(uid, node, *w.predicted(), t)


class Clairvoyant:
    """Places each pod on the node that minimises the CPU spread over the next hours, knowing
    every pod's future usage (benchmarks/water_level_oracle.py)."""

    def __init__(self, future: Future) -> None:
        self.future = future

    def sample(self, cluster: Cluster, t: float) -> None:
        pass

    def place(self, cluster: Cluster, uid: str, w: Workload, t: float) -> bool:
        fits, scores = by_requests(cluster, w)
        if not fits:
            cluster.pending += 1
            return False
        bind(cluster, uid, w, self.future.pick(w.name, w, t, fits, scores), t)
        return True

    def gone(self, uid: str, node: str, w: Workload, t: float) -> None:
        self.future.gone(w.name, node, t)


def by_requests(cluster: Cluster, w: Workload) -> tuple[list[str], dict[str, float]]:
    """The nodes the pod's requests fit on, and kube-scheduler's LeastAllocated score of each."""
    fits = [
        n
        for n in cluster.nodes
        if cluster.requested[n][0] + w.cpu_request <= cluster.cpu
        and cluster.requested[n][1] + w.memory_request <= cluster.memory
    ]
    scores = {
        n: 100
        * (
            (cluster.cpu - cluster.requested[n][0] - w.cpu_request) / cluster.cpu
            + (cluster.memory - cluster.requested[n][1] - w.memory_request) / cluster.memory
        )
        / 2
        for n in fits
    }
    return fits, scores


def bind(cluster: Cluster, uid: str, w: Workload, node: str, t: float) -> None:
    cluster.pods[uid] = (w, node)
    cluster.started[uid] = t  # it runs from the minute it is bound
    cluster.requested[node][0] += w.cpu_request
    cluster.requested[node][1] += w.memory_request


def remove(cluster: Cluster, uid: str) -> None:
    w, node = cluster.pods.pop(uid)
    cluster.started.pop(uid, None)
    if cluster.noise is not None:
        cluster.noise.series.pop(uid, None)
    cluster.requested[node][0] -= w.cpu_request
    cluster.requested[node][1] -= w.memory_request


def rollouts(ws: list[Workload], seed: int, days: float) -> dict[float, list[Workload]]:
    """The workloads rolled at each hour of the run: a tenth of them, drawn with `seed + 1`."""
    events = random.Random(seed + 1)
    out, t = {}, 0.0
    while t < days * DAY:
        t += STEP
        if int(t) % 3600 == 0:
            out[t] = events.sample(ws, max(1, len(ws) // 10))
    return out


def run(kind: str, args: argparse.Namespace, memory_weight: float = 0.0) -> dict[str, Any]:
    """One run: `kind` is default, extender, windows (the extender without the levels ahead)
    or clairvoyant (weighing the memory spread too
    with `memory_weight` > 0: benchmarks/water_level_oracle.py)."""
    rng = random.Random(args.seed)
    nodes = [f"node-{i}" for i in range(args.nodes)]
    cluster = Cluster(nodes, 16000, 64 * GI)
    if args.noise:
        cluster.noise = Noise(args.seed + 3, args.noise, math.ceil(args.days * DAY / STEP))
    ws = workloads(rng, args.nodes, args.fill * args.nodes * cluster.cpu)
    if args.day_jitter:
        jitter(ws, args.seed, args.days, args.day_jitter)
    schedule = rollouts(ws, args.seed, args.days)
    placer: Placer | Clairvoyant
    if kind == "clairvoyant":
        rolled: dict[str, list[int]] = {}
        for at, group in schedule.items():
            for w in group:
                rolled.setdefault(w.name, []).append(round(at / STEP))
        end = round(max(schedule, default=0.0) / STEP)
        steps = max(end, math.ceil(args.days * DAY / STEP))
        horizon = round(args.oracle_horizon * 3600 / STEP)
        future = Future(
            nodes, cluster.cpu, cluster.memory, steps, STEP, rolled, horizon, memory_weight
        )
        placer = Clairvoyant(future)
    else:
        options = PlacementOptions(
            tuple(args.window_weights),
            args.min_weight,
            args.threshold,
            args.ahead_weight,
            args.spread_weight,
            args.spread_memory_weight,
        )
        ahead = args.ahead_hours if kind == "extender" else 0
        placer = Placer(kind != "default", args.weight, options, ahead)
    t, uid = 0.0, 0
    placer.sample(cluster, t)
    for w in ws:
        for _ in range(w.replicas):
            placer.place(cluster, f"p{uid}", w, t)
            uid += 1
    cpu_spread, mem_spread, cpu_sd, mem_sd, hottest = [], [], [], [], []
    noise_free = []  # with --noise, the CPU spread of the same placements without it
    placed = 0
    while t < args.days * DAY:
        t += STEP
        placer.sample(cluster, t)
        for w in schedule.get(t, ()):  # rollouts: a few workloads re-created pod by pod
            for p in [p for p, (pw, _) in cluster.pods.items() if pw is w]:
                node = cluster.pods[p][1]
                remove(cluster, p)
                placer.gone(p, node, w, t)
                placed += placer.place(cluster, f"p{uid}", w, t)
                uid += 1
        if t >= DAY:
            levels = cluster.used(t)
            cpus = [c for c, _ in levels.values()]
            mems = [m for _, m in levels.values()]
            cpu_spread.append(max(cpus) - min(cpus))
            mem_spread.append(max(mems) - min(mems))
            cpu_sd.append(statistics.pstdev(cpus))
            mem_sd.append(statistics.pstdev(mems))
            hottest.append(max(cpus))
            if cluster.noise is not None:
                smooth = [c for c, _ in cluster.used(t, noisy=False).values()]
                noise_free.append(max(smooth) - min(smooth))
    return {
        "cpu_spread": cpu_spread,
        "mem_spread": mem_spread,
        "cpu_sd": cpu_sd,
        "mem_sd": mem_sd,
        "hottest": hottest,
        "noise_free": noise_free,
        "placed": placed,
        "pending": cluster.pending,
        "pods": len(cluster.pods),
    }


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def latency(n_nodes: int, calls: int, hours: int) -> dict[str, dict[str, float]]:
    """Extender.answer per verb over `n_nodes` names, the real code behind the WSGI route, each
    node with `hours` levels ahead (as the leader saves them: RIGHTSIZER_PLACEMENT_AHEAD_HOURS)."""
    from app.webhook.extender import Extender

    class Cache:
        def state(self) -> tuple[None, str]:
            return None, "cache_empty"

    class Hook:
        cache, owner_lookup, scalable, autostart = Cache(), None, None, False

    class Levels:
        def __init__(self, table: LevelTable) -> None:
            self.table = table

        def current(self) -> LevelTable:
            return self.table

    rng = random.Random(7)
    levels = [
        NodeLevel(
            f"node-{i}",
            16000,
            64 * GI,
            (c := rng.random(),) * 3,
            (m := rng.random(),) * 3,
            0.0,
            c,
            m,
            tuple(c + 0.1 * rng.random() for _ in range(hours)),
            (m,) * hours,
        )
        for i in range(n_nodes)
    ]
    ext = Extender(Hook(), Levels(LevelTable(levels, PlacementOptions())), autostart=False)  # type: ignore[arg-type]
    pod = {
        "metadata": {"namespace": "shop", "name": "web-1"},
        "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "1"}}}]},
    }
    body = orjson.dumps({"Pod": pod, "Nodes": None, "NodeNames": [n.name for n in levels]})
    out = {}
    for verb in ("filter", "prioritize"):
        times, cpu = [], []
        for _ in range(calls):
            started, started_cpu = time.perf_counter(), time.thread_time()
            ext.answer(verb, body)
            times.append(time.perf_counter() - started)
            cpu.append(time.thread_time() - started_cpu)
        out[verb] = {
            "p50": pct(times, 0.5) * 1000,
            "p99": pct(times, 0.99) * 1000,
            "cpu_p99": pct(cpu, 0.99) * 1000,
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=20)
    parser.add_argument("--days", type=float, default=3.0)
    parser.add_argument("--fill", type=float, default=0.6, help="requests / allocatable CPU")
    parser.add_argument("--weight", type=int, default=5, help="the extender's weight")
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--window-weights", type=float, nargs=3, default=[0.5, 0.3, 0.2])
    parser.add_argument("--min-weight", type=float, default=1.0)
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument(
        "--oracle-horizon",
        type=float,
        default=6.0,
        help="hours the clairvoyant placement weighs (0: until the pod's next rollout)",
    )
    parser.add_argument(
        "--oracle-memory-weight",
        type=float,
        default=0.2,
        help="the memory spread's weight in the second clairvoyant run (clairv.+mem)",
    )
    parser.add_argument(
        "--ahead-hours",
        type=int,
        default=6,
        help="hours of levels ahead (RIGHTSIZER_PLACEMENT_AHEAD_HOURS)",
    )
    parser.add_argument(
        "--ahead-weight",
        type=float,
        default=1.0,
        help="their weight against the windows' (RIGHTSIZER_PLACEMENT_AHEAD_WEIGHT)",
    )
    parser.add_argument(
        "--spread-weight",
        type=float,
        default=0.8,
        help="the spread ahead's share of the score (RIGHTSIZER_PLACEMENT_SPREAD_WEIGHT)",
    )
    parser.add_argument(
        "--spread-memory-weight",
        type=float,
        default=0.3,
        help="the memory spread's weight in it (RIGHTSIZER_PLACEMENT_SPREAD_MEMORY_WEIGHT)",
    )
    parser.add_argument(
        "--runs",
        nargs="+",
        default=["default", "extender", "ext.windows", "clairvoyant", "clairv.+mem"],
        help="which runs (any of the default list)",
    )
    parser.add_argument(
        "--noise",
        type=float,
        default=0.0,
        help="each pod's CPU usage each minute times a lognormal factor of mean 1, this sigma",
    )
    parser.add_argument(
        "--day-jitter",
        type=float,
        default=0.0,
        help="each workload's day scaled by 1 +- this, shifted by up to this x 2 hours",
    )
    parser.add_argument("--latency-nodes", type=int, default=5000)
    parser.add_argument("--calls", type=int, default=1000, help="0: no latency run")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    lines = [
        f"water-level placement: {args.nodes} nodes of 16 CPU / 64 GiB, requests {args.fill:.0%}"
        f" of CPU, {args.days:g} days at 1-minute steps, hourly rollouts of a tenth of the"
        f" workloads, extender weight {args.weight}, seed {args.seed}"
        + (f", noise {args.noise:g}" if args.noise else "")
        + (f", day jitter {args.day_jitter:g}" if args.day_jitter else ""),
        "spread and levels over days 2..end (after the 1-day window has filled):",
        f"{'':12} {'CPU max-min p50/p95/max':>26} {'CPU sd p50':>11} {'mem max-min p50/max':>21}"
        f" {'mem sd p50':>11} {'hottest CPU p50/max':>21} {'placed':>7} {'pending':>8}"
        + (f" {'noise-free CPU max-min p50/p95':>31}" if args.noise else ""),
    ]
    for name, kind, memory_weight in (
        ("default", "default", 0.0),
        ("extender", "extender", 0.0),
        ("ext.windows", "windows", 0.0),
        ("clairvoyant", "clairvoyant", 0.0),
        ("clairv.+mem", "clairvoyant", args.oracle_memory_weight),
    ):
        if name not in args.runs:
            continue
        r = run(kind, args, memory_weight)
        c, m = r["cpu_spread"], r["mem_spread"]
        lines.append(
            f"{name:12} {pct(c, 0.5):8.1%} {pct(c, 0.95):7.1%} {max(c):7.1%}"
            f" {pct(r['cpu_sd'], 0.5):11.1%} {pct(m, 0.5):11.1%} {max(m):8.1%}"
            f" {pct(r['mem_sd'], 0.5):11.1%} {pct(r['hottest'], 0.5):11.1%}"
            f" {max(r['hottest']):8.1%} {r['placed']:7} {r['pending']:8}"
            + (f" {pct(f, 0.5):23.1%} {pct(f, 0.95):7.1%}" if (f := r["noise_free"]) else "")
        )
    if args.calls:
        load_before = os.getloadavg()[0]
        lat = latency(args.latency_nodes, args.calls, args.ahead_hours)
        lines.append(
            f"extender call over {args.latency_nodes} node names with {args.ahead_hours} hours"
            f" ahead ({args.calls} calls each, in process, body bytes to answer bytes): "
            + ", ".join(
                f"{v} p50 {x['p50']:.2f} ms p99 {x['p99']:.2f} ms"
                f" (CPU time p99 {x['cpu_p99']:.2f} ms)"
                for v, x in lat.items()
            )
            + f"; machine load (1-min average, {os.cpu_count()} CPUs) {load_before:.1f} before,"
            f" {os.getloadavg()[0]:.1f} after"
        )
    text = "\n".join(lines)
    print(text)
    if args.output:
        args.output.write_text(text + "\n")


if __name__ == "__main__":
    main()
