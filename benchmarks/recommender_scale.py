"""Benchmark: the recommender (and with --updater, the updater) against the simulator's scale mode.

Starts `rightsizer sim --nodes N --pods M --speed 0` in a child process, the app on a throw-away
SQLite database (or a fresh schema of --database-url), then in this process, as the leader would:

1. cache sync: a ClusterView (raw-JSON informers for pods, nodes, controllers, HPAs) and the
   updater's LimitRange cache do their initial LISTs (`resourceVersion=0`) and open their watches,
   through the API client rightsizer builds (app.kube.client, with its request timeouts);
2. recommender run 1: PodMetrics for all pods -> histograms -> a recommendation and a checkpoint
   row per workload container (every row is new: all inserts); with --policy-per-workload, a
   policy names each workload first (VPA's one VerticalPodAutoscaler per workload);
3. `--history-days` (default 8) of hourly recommendation history added for every container
   recommended (192 points each, as a recommender that has run for a week keeps: its save looks
   up and trims them every run), then `advance` seconds of simulated time, then recommender
   run 2 (every row is an update; the steady state), then `--steady` (default 3) more runs
   the same way, whose best and median are printed beside run 2 (one run varies by 10-15%;
   they run without run 2's per-step timers, benchmarks/run_phases.py);
4. with --updater: a cluster-wide Recreate policy, and UpdaterJob.run_once twice in dry run
   (the settings' updater.dry_run, PodActions(dry_run=True): evictions are sent with dryRun=All,
   so the API server validates them and changes nothing). The webhook check is bypassed
   (`webhook_registered=lambda: True`): nothing is registered in the benchmark cluster, and the
   updater would otherwise do nothing at all. --min-history (default 0: the recommendations are
   only `advance` seconds old, the setting's 1h would hold every workload back) and
   --min-lifetime (default: the setting, 12h; scale-mode pods have run for 1h) shape how many
   pods qualify. The second run finds nothing changed (a dry run evicts nothing): the steady
   state, where each pod shape's ranking is the previous run's (app.core.sizing.plan.SizedMemo);
5. baseline, side by side, each in a fresh process: all pods listed the way the informer does it
   (one raw-JSON LIST at resourceVersion=0, trimmed) against the client's typed models
   (`CoreV1Api().list_pod_for_all_namespaces(limit=500)`, pages deserialised to V1Pod), and
   raw-JSON pages of 500 to separate paging from parsing.

API requests come from the simulator's own counters (`/sim/stats`), reset between phases: after
start-up there is no LIST of pods, only the PodMetrics LIST of each run (watches stay open).

    .venv/bin/python benchmarks/recommender_scale.py [--nodes 5000 --pods 150000] [--updater]
        [--database-url postgresql+psycopg://postgres@127.0.0.1:5432/test] [--no-baseline]

Not run by the tests. Full scale needs about 2.5 GB for the simulator plus this process.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import pstats
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import scale_common as sc
from run_phases import BACKGROUND, recommender_phases

from app.core.gcpause import without_cyclic_gc
from app.store.session import app_sessions
from tests.support.json_bodies import raw_body

if TYPE_CHECKING:
    from app.core.recommend.podmetrics import PodMetrics


# Baseline: listing every pod, in a process of its own -----------------------------------------
def list_only(mode: str, kubeconfig: str) -> dict[str, Any]:
    """Lists all pods once and keeps them, as a cache would; prints time and memory."""
    from kubernetes import client, config

    from app.kube.cluster import ClusterView, trim_pod

    api = config.new_client_from_config(config_file=kubeconfig)
    core = client.CoreV1Api(api)
    before = sc.settled_rss_mb()
    began = time.perf_counter()
    kept: list[Any] = []
    pages = 0
    if mode == "informer":
        view = ClusterView(api)
        view.pods._list()  # exactly what the pods informer does before it watches
        kept = list(view.pods.objects.values())
        pages = 1
    else:
        cont: str | None = None
        while True:
            kwargs: dict[str, Any] = {"limit": 500}
            if cont:
                kwargs["_continue"] = cont
            if mode == "typed":
                page = core.list_pod_for_all_namespaces(**kwargs)
                kept.extend(page.items)
                cont = page.metadata._continue if page.metadata else None
            else:  # raw-paged
                resp = core.list_pod_for_all_namespaces(_preload_content=False, **kwargs)
                body = json.loads(raw_body(resp))
                kept.extend(trim_pod(p) for p in body.get("items") or [])
                cont = (body.get("metadata") or {}).get("continue")
            pages += 1
            if not cont:
                break
    seconds = time.perf_counter() - began
    peak = sc.peak_rss_mb()
    after = sc.settled_rss_mb()
    api.close()
    return {
        "mode": mode,
        "pods": len(kept),
        "requests": pages,
        "seconds": seconds,
        "peak_extra_mb": peak - before,
        "kept_mb": after - before,
    }


def run_baseline(sim: sc.SimProcess, modes: Sequence[str]) -> list[dict[str, Any]]:
    out = []
    for mode in modes:
        sim.reset_stats()
        proc = subprocess.run(
            [sys.executable, __file__, "--list-only", mode, "--kubeconfig", sim.kubeconfig_path],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            print(f"baseline {mode} failed:\n{proc.stderr}", file=sys.stderr)
            continue
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        result["server_pod_lists"] = sc.pod_lists(sim.stats())
        out.append(result)
        print(f"  baseline {mode}: {result['seconds']:.1f}s", flush=True)
    return out


# The jobs ------------------------------------------------------------------------------------
def timed(label: str, fn: Callable[[], str], profile_dir: Path | None) -> tuple[float, str, float]:
    """(seconds, the job's summary line, peak RSS after) of one run."""
    prof = cProfile.Profile() if profile_dir else None
    pauses: list[float] = []  # the cyclic garbage collector's passes during the run

    def gc_pass(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            pauses.append(-time.perf_counter())
        elif pauses:
            pauses[-1] += time.perf_counter()

    gc.callbacks.append(gc_pass)
    began = time.perf_counter()
    if prof:
        prof.enable()
    try:
        summary = fn()
        # counted with the run: the young generation's pass a run that pauses the collector
        # (app.jobs.recommender) leaves for its first allocation after it
        deferred = -time.perf_counter()
        gc.collect(0)
        deferred += time.perf_counter()
    finally:
        if prof:
            prof.disable()
        seconds = time.perf_counter() - began
        gc.callbacks.remove(gc_pass)
    summary += (
        f" [gc: {len(pauses)} passes, {sum(p for p in pauses if p > 0):.2f}s, of them "
        f"{deferred:.2f}s after the run]"
    )
    if prof and profile_dir:
        profile_dir.mkdir(parents=True, exist_ok=True)
        path = profile_dir / f"{label.replace(' ', '_')}.prof"
        prof.dump_stats(path)
        print(f"  profile of {label}: {path}")
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
    print(f"  {label}: {seconds:.2f}s -- {summary}", flush=True)
    return seconds, summary, sc.peak_rss_mb()


def podmetrics_baseline(cluster: Any) -> dict[str, float]:
    """The recommender's baseline: json.loads of the same PodMetrics LIST bytes (fetched once
    more, not counted as the recommender's), the best of three, and the fetch itself. The
    cyclic collector is paused meanwhile, as during a recommender run (app.core.gcpause): with
    it running, the full collections the 2 million new objects set off walk the whole heap
    (the informer caches) and made it 0.56 to 1.23 s from one run of this benchmark to the next."""
    began = time.perf_counter()
    resp = cluster.custom.list_cluster_custom_object(
        "metrics.k8s.io", "v1beta1", "pods", _preload_content=False
    )
    body = resp.data
    fetch = time.perf_counter() - began
    loads = []
    with without_cyclic_gc():
        for _ in range(3):
            began = time.perf_counter()
            json.loads(body)
            loads.append(time.perf_counter() - began)
    return {"bytes": float(len(body)), "fetch": fetch, "loads": min(loads)}


def row_counts(app: Any) -> tuple[int, int, int]:
    from sqlalchemy import func, select

    from app.store.extensions import db
    from app.store.models import Checkpoint, Recommendation, RecommendationPoint

    with app.app_context():
        counts = [
            db.session.scalar(select(func.count()).select_from(table)) or 0
            for table in (Recommendation, Checkpoint, RecommendationPoint)
        ]
        db.session.remove()
    return int(counts[0]), int(counts[1]), int(counts[2])


def add_history(app: Any, days: int) -> int:
    """Hourly history points for every recommendation row, from an hour before its newest point
    back `days` days (the history the recommender keeps: 8 days); returns the points added."""
    from datetime import timedelta

    from sqlalchemy import func, insert, select

    from app.store.clusters import cluster_key
    from app.store.extensions import db
    from app.store.models import Recommendation as R
    from app.store.models import RecommendationPoint as H

    added = 0
    with app.app_context():
        newest = db.session.scalar(select(func.max(H.time)))
        keys = db.session.execute(select(R.namespace, R.kind, R.name, R.container)).all()
        if newest is None:
            return 0
        rows: list[dict[str, Any]] = []
        cluster = cluster_key(db.session)
        for ns, kind, name, container in keys:
            for h in range(1, days * 24):
                rows.append(
                    {"cluster_id": cluster, "namespace": ns, "kind": kind, "name": name}
                    | {"container": container}
                    | {"time": newest - timedelta(hours=h), "target_cpu": 100}
                    | {"target_memory": 10**8}
                )
            if len(rows) >= 50000:
                db.session.execute(insert(H.__table__), rows)
                added, rows = added + len(rows), []
        if rows:
            db.session.execute(insert(H.__table__), rows)
            added += len(rows)
        db.session.commit()
        db.session.remove()
    return added


def add_cluster_policy(app: Any, mode: str) -> None:
    from app.store.extensions import db
    from app.store.models import Policy

    with app.app_context():
        db.session.add(Policy(name="bench-cluster-default", namespace="*", update_mode=mode))
        db.session.commit()
        db.session.remove()


def add_workload_policies(app: Any, cluster: Any) -> int:
    """A policy naming each workload with a pod (VPA's one VerticalPodAutoscaler per workload),
    update mode Off; returns how many."""
    from sqlalchemy import insert

    from app.store.extensions import db
    from app.store.models import Policy

    workloads = {w for p in cluster.pods.items() if (w := cluster.workload_of(p)) is not None}
    rows = [
        {"name": f"{w.name}-{w.kind.lower()}", "namespace": w.namespace}
        | {"target_kind": w.kind, "target_name": w.name, "update_mode": "Off"}
        | {"container_policies": [], "version": 1}
        for w in sorted(workloads)
    ]
    with app.app_context():
        if rows:
            db.session.execute(insert(Policy.__table__), rows)
        db.session.commit()
        db.session.remove()
    return len(rows)


def benchmark(args: argparse.Namespace, sim: sc.SimProcess, app: Any) -> dict[str, Any]:
    from dataclasses import replace

    from app.core.placement.profile import Profiles
    from app.jobs.recommender import RecommenderJob
    from app.jobs.updater import UpdaterJob
    from app.kube.actions import PodActions
    from app.kube.cluster import ClusterView
    from app.kube.limitranges import LimitRangeCache
    from app.settings import settings_of

    settings = settings_of(app)
    res: dict[str, Any] = {"phases": {}, "times": {}, "memory": {}, "stats": {}, "cpu": {}}

    def cpu_timed(label: str, fn: Callable[[], str]) -> tuple[float, str, float]:
        """timed(), with the CPU both processes spent meanwhile kept in res["cpu"]."""
        own, other = sc.cpu_seconds(), sc.cpu_seconds(sim.proc.pid)
        out = timed(label, fn, args.profile)
        res["cpu"][label] = (sc.cpu_seconds() - own, sc.cpu_seconds(sim.proc.pid) - other)
        return out

    api = sim.api_client()
    cluster = ClusterView(api)
    sim.reset_stats()
    res["memory"]["before sync"] = (sc.settled_rss_mb(), sc.peak_rss_mb())
    # /sim/stats keys PodMetrics as pods.metrics.k8s.io; counting our own calls too cross-checks it.
    metrics_calls = [0]
    fetch_metrics = cluster.pod_metrics

    def counted_pod_metrics() -> list[PodMetrics]:
        metrics_calls[0] += 1
        return fetch_metrics()

    cluster.pod_metrics = counted_pod_metrics  # type: ignore[method-assign]
    res["podmetrics"] = {"start-up": 0}

    began = time.perf_counter()
    cluster.start()
    limit_ranges = LimitRangeCache(api).start()  # the updater's, as app.jobs.startup starts it
    if not (
        cluster.wait_synced(timeout=args.sync_timeout)
        and limit_ranges.wait_synced(timeout=args.sync_timeout)
    ):
        raise SystemExit(f"caches not synced after {args.sync_timeout}s")
    res["times"]["cache sync (initial LISTs)"] = time.perf_counter() - began
    res["memory"]["after cache sync"] = (sc.settled_rss_mb(), sc.peak_rss_mb())
    informers = [*cluster.informers, limit_ranges.informer]
    res["informers"] = [(inf.name, len(inf.objects), inf.lists) for inf in informers]
    res["watch lists"] = {inf.name: inf.watch_lists for inf in informers}
    print(f"  cache sync: {res['times']['cache sync (initial LISTs)']:.2f}s", flush=True)
    time.sleep(0.5)  # let the watch requests land before the counters are read
    res["stats"]["start-up"] = sim.stats()
    sim.reset_stats()

    if args.policy_per_workload:
        res["workload policies"] = add_workload_policies(app, cluster)
        print(f"  policies: one for each of {res['workload policies']} workloads")
    # the workloads' daily profiles fed as the service feeds them (RIGHTSIZER_PLACEMENT_AHEAD_HOURS)
    profiles = Profiles() if settings.placement.ahead_hours else None
    job = RecommenderJob(app_sessions(app), cluster, settings, profiles=profiles)
    leader = lambda: True  # noqa: E731
    phases = recommender_phases(job)

    secs, summary, _ = cpu_timed("recommender run 1", lambda: job.run_once(leader))
    res["times"]["recommender run 1 (all rows inserted)"] = secs
    res["run phases"] = {"run 1": (phases.take(), secs)}
    res["summaries"] = {"run 1": summary}
    res["rows after run 1"] = row_counts(app)
    res["memory"]["after run 1"] = (sc.settled_rss_mb(), sc.peak_rss_mb())
    res["stats"]["run 1"] = sim.stats()
    res["podmetrics"]["run 1"], metrics_calls[0] = metrics_calls[0], 0

    if args.history_days > 0:
        began = time.perf_counter()
        res["history added"] = (add_history(app, args.history_days), time.perf_counter() - began)
        res["history days"] = args.history_days
        print(f"  history: {res['history added'][0]} points in {res['history added'][1]:.0f}s")

    began = time.perf_counter()
    sim.advance(args.advance)
    res["times"][f"simulator advance {args.advance:g}s (not rightsizer)"] = (
        time.perf_counter() - began
    )
    time.sleep(0.5)  # watch events of the advance (restarts, OOM kills) reach the caches
    sim.reset_stats()
    secs, summary, _ = cpu_timed("recommender run 2", lambda: job.run_once(leader))
    history = f", {args.history_days} days of history" if args.history_days > 0 else ""
    res["times"][f"recommender run 2 (+{args.advance:g}s, rows updated{history})"] = secs
    res["summaries"]["run 2"] = summary
    res["run phases"]["run 2"] = (phases.take(), secs)
    phases.restore()
    res["rows after run 2"] = row_counts(app)
    res["memory"]["after run 2"] = (sc.settled_rss_mb(), sc.peak_rss_mb())
    res["stats"]["run 2"] = sim.stats()
    res["podmetrics"]["run 2"], metrics_calls[0] = metrics_calls[0], 0

    # The steady state again, the same way, --steady more times: one run's time moves 10-15%
    # from one run to the next on a shared machine; the best and the median of several do not.
    steady = []
    for n in range(3, 3 + args.steady):
        sim.advance(args.advance)
        time.sleep(0.5)
        steady.append(timed(f"recommender run {n}", lambda: job.run_once(leader), None)[0])
    res["steady"] = steady

    res["podmetrics baseline"] = podmetrics_baseline(cluster)

    if args.updater:
        add_cluster_policy(app, "Recreate")
        sizing = settings.updater.sizing
        if args.min_lifetime is not None:
            sizing = replace(sizing, min_lifetime_seconds=args.min_lifetime)
        options = replace(
            settings.updater, dry_run=True, min_history_seconds=args.min_history, sizing=sizing
        )
        if args.evictions_in_flight is not None:
            options = replace(options, evictions_in_flight=args.evictions_in_flight)
        updater = UpdaterJob(
            app_sessions(app),
            cluster,
            PodActions(api, dry_run=True),
            # no wait for the webhook processes' policy reload (twice its refresh): none here
            replace(
                settings,
                updater=options,
                webhook=replace(settings.webhook, cache_refresh_seconds=0.0),
            ),
            webhook_registered=lambda: True,  # benchmark: no webhook in the simulated cluster
            limit_ranges=limit_ranges,
        )
        res["evictions in flight"] = options.evictions_in_flight
        res["updater options"] = (
            "Recreate (cluster-wide policy), dry run, "
            f"min history {options.min_history_seconds:g}s, "
            f"min lifetime {sizing.min_lifetime_seconds:g}s, min change {sizing.min_change:g}, "
            f"tolerance {sizing.eviction_tolerance:g}, "
            f"evictions/s {options.evictions_per_second:g} (0 = no limit), "
            f"evictions in flight {options.evictions_in_flight}"
        )
        sim.reset_stats()
        secs, summary, _ = cpu_timed("updater run", lambda: updater.run_once(leader))
        res["times"]["updater run (dry run)"] = secs
        res["summaries"]["updater"] = summary
        res["memory"]["after updater run"] = (sc.settled_rss_mb(), sc.peak_rss_mb())
        res["stats"]["updater"] = sim.stats()
        res["podmetrics"]["updater"], metrics_calls[0] = metrics_calls[0], 0
        # The next run with nothing changed (a dry run evicted nothing): the steady state, where
        # the snapshot is carried forward and each pod shape's ranking kept (plan.SizedMemo).
        memo = getattr(updater, "sized_memo", None)  # None: a commit before it, side by side
        hits, misses = (memo.hits, memo.misses) if memo is not None else (0, 0)
        secs, summary, _ = cpu_timed("updater run 2", lambda: updater.run_once(leader))
        res["times"]["updater run 2 (dry run, nothing changed)"] = secs
        if memo is not None:
            summary += (
                f"; pod shapes ranked from the previous run {memo.hits - hits}, "
                f"ranked anew {memo.misses - misses}"
            )
        res["summaries"]["updater run 2"] = summary
        res["memory"]["after updater run 2"] = (sc.settled_rss_mb(), sc.peak_rss_mb())

    res["lists per informer"] = [(inf.name, inf.lists) for inf in informers]
    res["sim memory"] = sim.memory_mb()
    cluster.stop()
    limit_ranges.stop()
    api.close()
    return res


# Report --------------------------------------------------------------------------------------
def apart(steps: set[str]) -> list[str]:
    """The steps timed in another thread (run_phases.BACKGROUND)."""
    return [s for s in steps if s.startswith(BACKGROUND)]


def phase_table(runs: dict[str, tuple[dict[str, float], float]]) -> str:
    """Each run's exclusive seconds per step (benchmarks/run_phases.py), in the order of run 2's
    largest first, with what no step covers as "other"; the steps of another thread after the
    whole run, as they overlap it."""
    names = list(runs)
    last, _ = runs[names[-1]]
    every = {s for times, _ in runs.values() for s in times}
    steps = sorted(every - set(apart(every)), key=lambda s: -last.get(s, 0))
    rows = [(s, *(f"{runs[n][0].get(s, 0.0):.2f}" for n in names)) for s in steps]
    rows.append(
        (
            "other (policies, caches, leadership, gc)",
            *(
                f"{total - sum(t for s, t in times.items() if s in steps):.2f}"
                for times, total in runs.values()
            ),
        )
    )
    rows.append(("the whole run", *(f"{total:.2f}" for _, total in runs.values())))
    # steps of another thread, overlapping the ones above: shown, not added
    rows += [(s, *(f"{runs[n][0].get(s, 0.0):.2f}" for n in names)) for s in sorted(apart(every))]
    return sc.table(
        ["step (exclusive wall seconds)", *names], rows, "where each recommender run's time goes:"
    )


def report(args: argparse.Namespace, sim: sc.SimProcess, res: dict[str, Any]) -> str:
    out = [
        f"rightsizer scale benchmark: {sim.nodes} nodes, {sim.pods} pods, "
        f"database {res['database']}",
        f"machine: {sc.machine()}",
        f"simulator start-up {sim.startup_seconds:.1f}s (separate process; peak RSS "
        f"{res['sim memory'][1]:.0f} MB, not counted below; TCP_NODELAY "
        f"{'set' if sim.nodelay else 'not set (as shipped)'})",
        "",
    ]
    out.append(sc.table(["phase", "seconds"], [(k, f"{v:.2f}") for k, v in res["times"].items()]))
    out.append("")
    out.append(
        sc.table(
            ["run", "rightsizer CPU s", "simulator CPU s"],
            [(k, f"{a:.2f}", f"{b:.2f}") for k, (a, b) in res["cpu"].items()],
            "CPU seconds (user + system, all threads) each process spent during each run:",
        )
    )
    out.append("")
    out.append(
        sc.table(
            ["benchmark process", "RSS now MB", "peak RSS MB"],
            [(k, f"{a:.0f}", f"{b:.0f}") for k, (a, b) in res["memory"].items()],
        )
    )
    (before, _), (kept, peak) = res["memory"]["before sync"], res["memory"]["after cache sync"]
    out.append(
        f"informer caches: kept {kept - before:.0f} MB (RSS growth through the sync; target "
        f"<= 600 MB at 150000 pods), peak {peak - before:.0f} MB above the start (target <= 1 GB)"
    )
    out.append("")
    out.append(
        sc.table(
            ["informer", "objects cached", "full syncs", "of them watch-list streams"],
            [
                (n, o, dict(res["lists per informer"])[n], res["watch lists"].get(n, 0))
                for n, o, _ in res["informers"]
            ],
            f"simulator serving Kubernetes {sim.version or 'its default'}",
        )
    )
    out.append("")
    if "workload policies" in res:
        out.append(f"policies: one naming each of the {res['workload policies']} workloads")
    if "history added" in res:
        out.append(
            f"history: {res['history added'][0]} points added after run 1 ("
            f"{res['history days']} days hourly for each container; "
            f"{res['history added'][1]:.0f} s)"
        )
    out.append(
        sc.table(
            ["rows in the database", "recommendations", "checkpoints", "history points"],
            [("after run 1", *res["rows after run 1"]), ("after run 2", *res["rows after run 2"])],
        )
    )
    out.append(phase_table(res["run phases"]))
    out.append("")
    for k, v in res["summaries"].items():
        out.append(f"{k}: {v}")
    base = res.get("podmetrics baseline")
    if base:
        loads = base["loads"]
        runs = {k: v for k, v in res["times"].items() if k.startswith("recommender run")}
        out.append(
            f"baseline: json.loads of the same PodMetrics LIST ({base['bytes'] / 1e6:.1f} MB) "
            f"{loads:.2f}s (best of 3); fetching it from the simulator {base['fetch']:.2f}s"
        )
        for k, v in runs.items():
            out.append(f"  {k}: {v:.2f}s = {v / loads:.1f}x json.loads (target <= 3x, <= 15 s)")
        steady = res.get("steady") or []
        if steady:
            best, median = min(steady), statistics.median(steady)
            which = f"runs 3-{2 + len(steady)}" if len(steady) > 1 else "run 3"
            out.append(
                f"  recommender {which} (as run 2, +{args.advance:g}s each): "
                f"best {best:.2f}s = {best / loads:.1f}x json.loads, median {median:.2f}s = "
                f"{median / loads:.1f}x ({', '.join(f'{v:.2f}' for v in steady)})"
            )
    if "updater options" in res:
        out.append(f"updater: {res['updater options']}")
    out.append("")
    headers, rows = sc.request_rows(res["stats"])
    out.append(sc.table(headers, rows, "API requests seen by the simulator, per phase:"))
    out.append(
        sc.table(
            ["pods LISTs by phase", *res["stats"]],
            [
                [
                    "core/v1 pod LISTs seen by the simulator",
                    *(sc.pod_lists(v) for v in res["stats"].values()),
                ],
                ["PodMetrics LISTs by the recommender", *res["podmetrics"].values()],
            ],
        )
    )
    repeated = sum(sc.pod_lists(v) for k, v in res["stats"].items() if k != "start-up")
    pods_inf = dict(res["lists per informer"])["pods"]
    out.append(
        f"core pod LISTs after start-up: {repeated}; the pods informer did {pods_inf} full "
        "sync(s) in all -> "
        + ("no repeated sync (watches only)" if not repeated and pods_inf == 1 else "REPEATED")
    )
    run2 = res["stats"]["run 2"]
    if "updater" in res["stats"]:
        ev = res["stats"]["updater"].get("byResource", {}).get("pods/eviction", {}).get("create", 0)
        upd = res["times"]["updater run (dry run)"]
        out.append(
            f"updater: {ev} dry-run evictions (POST pods/eviction?dryRun=All, "
            f"{res['evictions in flight']} in flight at most) in {upd:.1f}s"
        )
    out.append(
        f"steady state: {run2['total']} API request(s) per recommender run "
        f"(= per minute at the default 60s interval), plus one WATCH per informer every "
        f"300s (watch timeout) and a LIST every 300s per resource the server lacks"
    )
    if res.get("baseline"):
        out.append("")
        base = {b["mode"]: b for b in res["baseline"]}
        ref = base.get("informer")
        baseline: list[tuple[Any, ...]] = []  # not `rows`: that one holds lists of str
        for b in res["baseline"]:
            ratio = f"{b['seconds'] / ref['seconds']:.1f}x" if ref else "-"
            baseline.append(
                (
                    b["mode"],
                    b["pods"],
                    b["server_pod_lists"],
                    f"{b['seconds']:.2f}",
                    f"{b['pods'] / b['seconds']:.0f}" if b["seconds"] else "-",
                    f"{b['peak_extra_mb']:.0f}",
                    f"{b['kept_mb']:.0f}",
                    ratio,
                )
            )
        out.append(
            sc.table(
                [
                    "list all pods (fresh process)",
                    "pods",
                    "requests",
                    "seconds",
                    "pods/s",
                    "peak +MB",
                    "kept MB",
                    "time vs informer",
                ],
                baseline,
                "Baseline, side by side: what listing every pod costs the client",
            )
        )
        out.append(
            "informer = our raw-JSON LIST (resourceVersion=0, one response) trimmed to the fields "
            "used; typed = CoreV1Api().list_pod_for_all_namespaces(limit=500) with V1Pod models; "
            "raw-paged = the same pages of 500 parsed with json and trimmed. 'kept MB' = RSS "
            "growth holding the result, 'peak +MB' = highest RSS growth while listing."
        )
        if ref and "typed" in base:
            t = base["typed"]
            out.append(
                f"ratio typed / informer: time {t['seconds'] / ref['seconds']:.1f}x, "
                f"memory kept {t['kept_mb'] / max(ref['kept_mb'], 1):.1f}x"
            )
    return "\n".join(out)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--pods", type=int, default=150000)
    p.add_argument("--database-url", help="default: a temporary SQLite file")
    p.add_argument("--advance", type=float, default=60.0, help="simulated seconds between runs")
    p.add_argument(
        "--policy-per-workload",
        action="store_true",
        help="a policy naming each workload (VPA's one VerticalPodAutoscaler per workload)",
    )
    p.add_argument(
        "--history-days",
        type=int,
        default=8,
        help="days of hourly history added before run 2 (8: as kept; 0: none, as before)",
    )
    p.add_argument(
        "--steady",
        type=int,
        default=3,
        help="runs after run 2, each as run 2 (+advance): their best and median are printed",
    )
    p.add_argument("--updater", action="store_true", help="also time one updater run (dry run)")
    p.add_argument("--min-history", type=float, default=0.0, help="updater: seconds of history")
    p.add_argument("--min-lifetime", type=float, help="updater: pod lifetime for the 10%% rule")
    p.add_argument(
        "--evictions-in-flight",
        type=int,
        help="updater: evictions sent at once (default: RIGHTSIZER_UPDATER_EVICTIONS_IN_FLIGHT, 4)",
    )
    p.add_argument("--no-baseline", action="store_true", help="skip the list-all-pods baseline")
    p.add_argument("--baseline-modes", default="informer,raw-paged,typed", help="comma-separated")
    p.add_argument(
        "--no-sim-nodelay",
        action="store_true",
        help="run the simulator as shipped (small responses stall ~40 ms: Nagle + delayed ACK)",
    )
    p.add_argument(
        "--kubernetes-version",
        default="1.34",
        help="the release the simulator serves (1.34: WatchList on, the caches stream their "
        "state; 1.33 turned it off: they LIST)",
    )
    p.add_argument("--sync-timeout", type=float, default=600.0)
    p.add_argument("--profile", type=Path, help="write cProfile stats of each run here")
    p.add_argument("--output", type=Path, help="also write the report to this file")
    p.add_argument("--list-only", help=argparse.SUPPRESS)
    p.add_argument("--kubeconfig", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list_only:
        print(json.dumps(list_only(args.list_only, args.kubeconfig)))
        return 0
    with sc.temp_workdir() as tmp:
        print(f"starting the simulator: {args.nodes} nodes, {args.pods} pods", flush=True)
        sim = sc.SimProcess(
            args.nodes,
            args.pods,
            Path(tmp),
            nodelay=not args.no_sim_nodelay,
            version=args.kubernetes_version,
        )
        print(f"  simulator up in {sim.startup_seconds:.1f}s at {sim.url}", flush=True)
        try:
            with sc.database(args.database_url, Path(tmp)) as url:
                app = sc.make_app(url)
                res = benchmark(args, sim, app)
                res["database"] = url.split(":", 1)[0]
                from app.store.extensions import db

                with app.app_context():
                    db.engine.dispose()
            if not args.no_baseline:
                print("baseline: listing all pods in fresh processes", flush=True)
                res["baseline"] = run_baseline(sim, args.baseline_modes.split(","))
        finally:
            sim.stop()
    text = report(args, sim, res)
    print("\n" + text)
    if args.output:
        args.output.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
