"""Benchmark: the leader's memory and state under continual rollouts, for a simulated day.

`rightsizer sim --nodes N --pods M --speed 0` runs in a child process (scale mode: Deployments of
5 to 15 replicas, 10 on average); this process is the leader: the informers (ClusterView), the
recommender job every step and the updater (dry run, a cluster-wide Recreate policy) every
`--updater-every` steps, on a throw-away SQLite database. Each step rolls the Deployments that
are due (a new pod-template annotation: the simulator's Deployment controller replaces every pod
through a new ReplicaSet, as kube's does), moves the simulated clock `--step` seconds on, waits
for the caches to follow, and runs the jobs. Each Deployment is rolled every `--roll-every`
seconds, so the whole day replaces about (24 h / roll-every) x pods pods.

Printed, each with its baseline: the leader's RSS after the warm-up and at the end (growth, target
at most 20 MB) beside VPA's recommender's published growth under rollouts (about 50 MB an hour,
10 Deployments x 10 replicas rolled every 30 s: deckhouse PR 12077, kubernetes/autoscaler issue
6368); the database's rows (recommendations and checkpoints bounded by the workloads, not the
pods); the per-pod state the jobs keep (the recommender's memory windows and restart counts, the
updater's resize watch) against the pods alive, counted once the pod cache holds the server's
pods and one more recommender run has passed (state of a gone pod is dropped at the next run),
and the pod cache against the server's pods; the informer caches' sizes after the warm-up and
at the end (bounded: old ReplicaSets are trimmed to revisionHistoryLimit). With `--tracemalloc
FRAMES`, also where the live allocations grew from the warm-up to the end.

    .venv/bin/python benchmarks/churn_soak.py [--deployments 100] [--hours 24] [--step 300]

Not run by the tests.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import scale_common as sc

from tests.support.json_bodies import raw_body

VPA_MB_PER_HOUR = 50.0


def rows(app: Any) -> dict[str, int]:
    from sqlalchemy import func, select

    from app.store.extensions import db
    from app.store.models import AuditEvent, Checkpoint, Recommendation

    out = {}
    with app.app_context():
        for name, model in (
            ("recommendations", Recommendation),
            ("checkpoints", Checkpoint),
            ("audit events", AuditEvent),
        ):
            out[name] = int(db.session.scalar(select(func.count()).select_from(model)) or 0)
        db.session.remove()
    return out


def soak(args: argparse.Namespace, sim: sc.SimProcess, app: Any) -> dict[str, Any]:
    from dataclasses import replace

    from kubernetes import client

    from app.core.placement.profile import Profiles
    from app.jobs.recommender import RecommenderJob
    from app.jobs.updater import UpdaterJob
    from app.kube.actions import PodActions
    from app.kube.cluster import ClusterView
    from app.settings import settings_of
    from app.store.session import app_sessions

    settings = settings_of(app)
    api = sim.api_client()
    apps = client.AppsV1Api(api)
    cluster = ClusterView(api).start()
    if not cluster.wait_synced(120):
        raise SystemExit("caches not synced")
    deployments = [
        (d.metadata.namespace, d.metadata.name)
        for d in apps.list_deployment_for_all_namespaces().items
        if d.metadata
    ]
    sim_now = [float(sim.now())]
    clock = lambda: sim_now[0]  # noqa: E731
    profiles = Profiles() if settings.placement.ahead_hours else None  # as the service keeps
    recommender = RecommenderJob(
        app_sessions(app), cluster, settings, clock=clock, profiles=profiles
    )
    updater = UpdaterJob(
        app_sessions(app),
        cluster,
        PodActions(api, dry_run=True),
        replace(
            settings,
            updater=replace(settings.updater, dry_run=True, min_history_seconds=0.0),
            webhook=replace(settings.webhook, cache_refresh_seconds=0.0),  # no policy settle
        ),
        webhook_registered=lambda: True,
        clock=clock,
    )
    from app.store.extensions import db
    from app.store.models import Policy

    with app.app_context():
        db.session.add(Policy(name="soak", namespace="*", update_mode="Recreate"))
        db.session.commit()
        db.session.remove()
    leader = lambda: True  # noqa: E731
    steps = int(args.hours * 3600 / args.step)
    warmup = int(args.warmup_hours * 3600 / args.step)
    per_step = max(1, round(len(deployments) * args.step / args.roll_every))
    samples: list[tuple[float, float]] = []
    rolled = 0
    res: dict[str, Any] = {"deployments": len(deployments), "steps": steps, "per step": per_step}
    began = time.perf_counter()
    traced: list[Any] = []  # --tracemalloc: the snapshots after the warm-up and at the end
    if args.tracemalloc:
        import tracemalloc

        tracemalloc.start(args.tracemalloc)
    for i in range(steps):
        for k in range(per_step):
            ns, name = deployments[(i * per_step + k) % len(deployments)]
            apps.patch_namespaced_deployment(
                name,
                ns,
                {"spec": {"template": {"metadata": {"annotations": {"soak/roll": str(i)}}}}},
            )
            rolled += 1
        sim.advance(args.step)
        sim_now[0] += args.step
        time.sleep(args.settle)  # the watch events of the step reach the caches
        recommender.run_once(leader)
        if i % args.updater_every == 0:
            updater.run_once(leader)
        hours = (i + 1) * args.step / 3600
        if i + 1 == warmup:
            res["rss warm"] = sc.settled_rss_mb()
            res["rows warm"] = rows(app)
            res["cached warm"] = {inf.name: len(inf.objects) for inf in cluster.informers}
            if args.tracemalloc:
                traced.append(tracemalloc.take_snapshot())
        if (i + 1) % max(1, steps // 24) == 0 or i + 1 == steps:
            rss = sc.settled_rss_mb()
            samples.append((hours, rss))
            print(f"  {hours:5.1f} h simulated: RSS {rss:6.0f} MB, {rolled} rollouts", flush=True)
    res["seconds"] = time.perf_counter() - began
    res["rss end"] = sc.settled_rss_mb()
    if args.tracemalloc and traced:
        res["grown"] = grown(traced[0], tracemalloc.take_snapshot())
        tracemalloc.stop()
    res["rss peak"] = sc.peak_rss_mb()
    res["rows end"] = rows(app)
    res["cached end"] = {inf.name: len(inf.objects) for inf in cluster.informers}
    res["samples"] = samples
    res["rolled"] = rolled
    # Per-pod state is forgotten at the run after its pod is gone (the grace): once the pod
    # cache holds what the server holds, one more recommender run, then the count.
    server_names = settled_pods(api, cluster)
    recommender.run_once(leader)
    live = cluster.pods.items()
    live_names = {(p.namespace, p.name) for p in live}
    live_uids = {(p.namespace, p.uid) for p in live}
    server_pods = len(server_names)
    res["state"] = {
        "pods alive (server)": server_pods,
        "pod cache": len(live),
        "recommender memory windows": len(recommender.model.pods),
        "  of them, of pods gone": sum(
            (w.namespace, name) not in live_names for w, name, *_ in recommender.model.pods
        ),
        "recommender restart counts": len(recommender.restarts_seen),
        "  of them, of pods gone ": sum(k[:2] not in live_uids for k in recommender.restarts_seen),
        "updater resize watch": len(updater.resizing.details),
        "workloads in the model": len(recommender.model.rows),
    }
    cluster.stop()
    api.close()
    return res


def settled_pods(api: Any, cluster: Any, timeout: float = 60.0) -> set[tuple[str, str]]:
    """The server's pods, once the pod cache holds the same ones (or after `timeout`)."""
    import json

    from kubernetes import client

    deadline = time.monotonic() + timeout
    while True:
        answer = client.CoreV1Api(api).list_pod_for_all_namespaces(_preload_content=False)
        items = json.loads(raw_body(answer))["items"]
        names = {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in items}
        cached = {(p.namespace, p.name) for p in cluster.pods.items()}
        if cached == names or time.monotonic() > deadline:
            return names
        time.sleep(0.5)


def grown(warm: Any, end: Any, top: int = 15) -> list[tuple[str, str, str]]:
    """The places whose live allocations grew most from the warm-up to the end (tracemalloc),
    with each one's growth in KB and in blocks, innermost frame first."""
    import tracemalloc

    keep = tracemalloc.Filter(False, tracemalloc.__file__)
    stats = end.filter_traces([keep]).compare_to(warm.filter_traces([keep]), "traceback")
    out = []
    for stat in stats[:top]:
        frames = " <- ".join(
            f"{Path(f.filename).name}:{f.lineno}" for f in reversed(stat.traceback)
        )
        out.append((frames, f"{stat.size_diff / 1024:+.0f}", f"{stat.count_diff:+d}"))
    return out


def report(args: argparse.Namespace, sim: sc.SimProcess, res: dict[str, Any]) -> str:
    warm, end = res["rss warm"], res["rss end"]
    growth = end - warm
    hours = args.hours - args.warmup_hours
    out = [
        f"rightsizer churn soak: {res['deployments']} Deployments ({sim.pods} pods), each rolled "
        f"every {args.roll_every:g} s, {args.hours:g} h simulated in steps of {args.step:g} s "
        f"({res['steps']} steps, {res['rolled']} rollouts) in {res['seconds']:.0f} s",
        f"machine: {sc.machine()}",
        "",
        sc.table(
            ["leader RSS", "MB"],
            [
                (f"after the warm-up ({args.warmup_hours:g} h)", f"{warm:.0f}"),
                (f"at the end ({args.hours:g} h)", f"{end:.0f}"),
                ("peak", f"{res['rss peak']:.0f}"),
                (f"growth over {hours:g} h after the warm-up", f"{growth:+.0f}"),
            ],
        ),
        f"target: growth <= 20 MB -> {'met' if growth <= 20 else 'NOT met'}",
        f"baseline: VPA's recommender grows by about {VPA_MB_PER_HOUR:g} MB an hour under "
        f"rollouts (10 Deployments x 10 replicas rolled every 30 s; deckhouse PR 12077, "
        f"kubernetes/autoscaler issue 6368): {VPA_MB_PER_HOUR * hours:.0f} MB over {hours:g} h; "
        f"rightsizer {growth / hours if hours else 0:+.2f} MB an hour",
        "",
        sc.table(
            ["RSS through the day", "MB"],
            [(f"{h:.2f} h", f"{r:.0f}") for h, r in res["samples"]],
        ),
        "",
        sc.table(
            ["rows in the database", "after the warm-up", "at the end"],
            [(k, res["rows warm"][k], v) for k, v in res["rows end"].items()],
        ),
        "",
        sc.table(["per-pod state at the end", "entries"], list(res["state"].items())),
        "",
        sc.table(
            ["informer caches", "after the warm-up", "at the end"],
            [(k, res["cached warm"][k], v) for k, v in res["cached end"].items()],
        ),
    ]
    if "grown" in res:
        out += [
            "",
            "live allocations grown most from the warm-up to the end (tracemalloc, "
            f"{args.tracemalloc} frames, innermost first):",
            sc.table(["where", "KB", "blocks"], res["grown"]),
        ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--deployments", type=int, default=100)
    p.add_argument("--hours", type=float, default=24.0, help="simulated hours")
    p.add_argument("--warmup-hours", type=float, default=2.0)
    p.add_argument("--step", type=float, default=300.0, help="simulated seconds per step")
    p.add_argument("--roll-every", type=float, default=600.0, help="seconds between rollouts")
    p.add_argument("--updater-every", type=int, default=3, help="steps between updater runs")
    p.add_argument("--settle", type=float, default=0.3, help="real seconds after each step")
    p.add_argument(
        "--tracemalloc",
        type=int,
        default=0,
        metavar="FRAMES",
        help="also print where live allocations grew from the warm-up to the end, FRAMES deep "
        "(slower; the RSS figures then include tracemalloc's own)",
    )
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)
    pods = args.deployments * 10
    with sc.temp_workdir() as tmp:
        sim = sc.SimProcess(max(4, pods // 25), pods, Path(tmp))
        try:
            with sc.database(None, Path(tmp)) as url:
                app = sc.make_app(url)
                res = soak(args, sim, app)
        finally:
            sim.stop()
    text = report(args, sim, res)
    print("\n" + text)
    if args.output:
        args.output.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
