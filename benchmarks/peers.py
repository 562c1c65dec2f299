"""rightsizer beside the real VPA 1.7.1 (recommender, admission, updater), on the same real cluster.

One real control plane (tests/realkube/cluster.py: etcd, kube-apiserver, controller-manager,
scheduler, kwok, metrics-server; binaries from tools/build.py), `--nodes` kwok nodes and `--pods`
pods of Deployments of ten replicas, each with its own emulated usage, each under a
VerticalPodAutoscaler (updateMode Off) and under the policy `rightsizer policy import
--from-cluster` makes of it. VPA's recommender (`--memory-saver`) and `rightsizer serve` (jobs on,
RIGHTSIZER_TRACK=policies; the scaler and updater every hour, so nearly only the recommender runs)
then run every `--interval` seconds side by side, each as a ServiceAccount of its own (bound to
cluster-admin), so kube-apiserver's audit log tells their requests apart. Each keeps its client's
shipped rate limit (VPA: 50 QPS, burst 100; rightsizer: RIGHTSIZER_KUBE_API_QPS, 5 / 10).

After two loops each (the first fills the caches), over `--window` seconds:
- CPU seconds per loop: the process group's user + system CPU (/proc) over the window, divided by
  the loops it ran (VPA: `vpa_recommender_execution_latency_seconds{step="total"}`, rightsizer:
  `rightsizer_job_run_duration_seconds{job="recommender"}`, from each one's /metrics);
- wall time per loop: the same histograms' sum / count over the window;
- peak RSS (VmHWM, summed over the group's processes), kept RSS (VmRSS at the end) and kept PSS
  (at the end: a page gunicorn's master and worker share counted once, split between them);
- API requests per loop: the audit log's events of each ServiceAccount in the window / its loops
  (a watch counts once, when it ends).

    .venv/bin/python benchmarks/peers.py --nodes 50 --pods 1500 \
        --output benchmarks/results/peers-50-nodes-1500-pods.txt

Then admission (`--admission N`, 300 by default; 0 skips it): the recommender side stopped, N
creations of a pod of the first Deployment (its ReplicaSet's template, owned by it) with
dryRun=All, one after the other from one client (20 unmeasured first), with no webhook, then
with VPA's admission-controller alone (registered by URL, as itself), then with `rightsizer
serve`'s /mutate alone (registered by its own code); the workload in updateMode Initial on both
sides, so each sets the pod's requests (the table says how many came back changed). Printed:
latency p50/p99, what each webhook adds to the no-webhook case, creations per second and the
ratios.

Then the updaters (`--updater D` Deployments of `--replicas` pods, 20 x 5 by default; 0 skips
it; benchmarks/peers_updater.py): VPA's and rightsizer's, one after the other, acting on the same
workloads from the same state: seconds until every pod is updated, evictions, API requests.
`--pods 0` runs the updater stage alone.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import peers_updater  # noqa: E402
import requests  # noqa: E402
from kubernetes import client  # noqa: E402
from scale_common import emit, machine, table  # noqa: E402

from tests.realkube import metrics, vpa  # noqa: E402
from tests.realkube.cluster import RealCluster, built_tools, free_port  # noqa: E402
from tests.realkube.serve import serving  # noqa: E402
from tests.support.json_bodies import plain  # noqa: E402
from tests.support.processes import AppProcess  # noqa: E402

NS, OWN_NS, SA_NS = "bench", "rightsizer-bench", "peers-bench"
TOKEN = "peers-bench-token-0123456789"
PAUSE = "registry.k8s.io/pause:3.10"


def group_stats(pgid: int) -> tuple[float, float, float, float]:
    """(CPU seconds, RSS MB, peak RSS MB, PSS MB) of the processes of group `pgid`, summed. RSS
    counts a page shared by two processes (gunicorn's master and worker) in both; PSS splits it
    between them, so its sum is the memory the group holds."""
    cpu = rss = peak = pss = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rpartition(")")[2].split()
            if int(fields[2]) != pgid:
                continue
            cpu += (int(fields[11]) + int(fields[12])) / tick
            with open(f"/proc/{entry}/status") as f:
                for line in f:
                    key, _, rest = line.partition(":")
                    if key == "VmRSS":
                        rss += int(rest.split()[0]) / 1024
                    elif key == "VmHWM":
                        peak += int(rest.split()[0]) / 1024
            with open(f"/proc/{entry}/smaps_rollup") as f:
                for line in f:
                    key, _, rest = line.partition(":")
                    if key == "Pss":
                        pss += int(rest.split()[0]) / 1024
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
    return cpu, rss, peak, pss


def histogram(url: str, name: str, labels: str) -> tuple[float, float]:
    """(sum, count) of a Prometheus histogram series with `labels` (a substring of its labels)."""
    text = requests.get(url, timeout=10, verify=False).text
    found = {}
    for suffix in ("sum", "count"):
        pattern = rf"^{name}_{suffix}{{([^}}]*)}} (\S+)$"
        found[suffix] = sum(
            float(m.group(2)) for m in re.finditer(pattern, text, re.M) if labels in m.group(1)
        )
    return found["sum"], found["count"]


def audit_counts(path: Path, offset: int, users: list[str]) -> tuple[dict[str, int], int]:
    counts = dict.fromkeys(users, 0)
    with path.open("rb") as f:
        f.seek(offset)
        data = f.read()
    for line in data.splitlines():
        try:
            user = json.loads(line).get("user", {}).get("username")
        except ValueError:
            continue
        if user in counts:
            counts[user] += 1
    return counts, offset + len(data)


def deployment(i: int) -> dict[str, Any]:
    name = f"app-{i}"
    cpu, memory = f"{20 + (i * 37) % 400}m", f"{64 + (i * 53) % 900}Mi"
    return {
        "metadata": {"name": name},
        "spec": {
            "replicas": 10,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {
                    "labels": {"app": name},
                    "annotations": metrics.usage_annotations(cpu, memory),
                },
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": PAUSE,
                            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                        }
                    ]
                },
            },
        },
    }


def setup(cluster: RealCluster, nodes: int, deployments: int, workdir: Path) -> dict[str, str]:
    """Nodes, Deployments, VPA objects, the two ServiceAccounts: their kubeconfigs."""
    for i in range(nodes):
        cluster.add_node(f"kwok-{i}", cpu="32", memory="256Gi")
    cluster.wait_nodes_ready(nodes, timeout=600)
    vpa.install_crds(cluster)
    kubeconfigs = {}
    with cluster.api() as api:
        core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
        rbac = client.RbacAuthorizationV1Api(api)
        for ns in (NS, OWN_NS, SA_NS):
            core.create_namespace(plain({"metadata": {"name": ns}}))
        for who in ("vpa-recommender", "vpa-updater", "rightsizer"):
            core.create_namespaced_service_account(SA_NS, plain({"metadata": {"name": who}}))
            rbac.create_cluster_role_binding(
                plain(
                    {
                        "metadata": {"name": f"bench-{who}"},
                        "roleRef": {
                            "apiGroup": "rbac.authorization.k8s.io",
                            "kind": "ClusterRole",
                            "name": "cluster-admin",
                        },
                        "subjects": [{"kind": "ServiceAccount", "name": who, "namespace": SA_NS}],
                    }
                )
            )
            path = cluster.service_account_kubeconfig(SA_NS, who, workdir / f"{who}.kubeconfig")
            kubeconfigs[who] = str(path)
        for i in range(deployments):
            vpa.create(cluster, vpa.vpa(NS, f"app-{i}"))
            apps.create_namespaced_deployment(NS, plain(deployment(i)))
    return kubeconfigs


def wait_running(cluster: RealCluster, pods: int, timeout: float) -> float:
    started = time.monotonic()
    with cluster.api() as api:
        core = client.CoreV1Api(api)
        while time.monotonic() - started < timeout:
            running = len(core.list_namespaced_pod(NS, field_selector="status.phase=Running").items)
            if running >= pods:
                return time.monotonic() - started
            time.sleep(5)
    raise SystemExit(f"fewer than {pods} pods Running after {timeout:.0f} s")


def pod_of(cluster: RealCluster, workload: str) -> dict[str, Any]:
    """A pod as the workload's ReplicaSet makes it (its template, owned by the ReplicaSet)."""
    with cluster.api() as api:
        [rs] = (
            client.AppsV1Api(api)
            .list_namespaced_replica_set(NS, label_selector=f"app={workload}")
            .items
        )
        template = api.sanitize_for_serialization(rs.spec.template)
    meta = rs.metadata
    assert meta is not None  # a ReplicaSet the API server lists has its metadata
    template["metadata"]["generateName"] = f"{meta.name}-"
    template["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": meta.name,
            "uid": meta.uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    return {"apiVersion": "v1", "kind": "Pod", **template}


def creations(cluster: RealCluster, pod: dict[str, Any], count: int) -> tuple[list[float], int]:
    """`count` creations of `pod` with dryRun=All (admission runs whole, webhooks included,
    nothing is stored): each one's latency in ms, and how many came back with other requests."""
    wanted = pod["spec"]["containers"][0]["resources"]["requests"]
    latencies, changed = [], 0
    with cluster.api() as api:
        core: Any = client.CoreV1Api(api)
        for _ in range(count):
            began = time.perf_counter()
            made = core.create_namespaced_pod(NS, pod, dry_run="All")
            latencies.append((time.perf_counter() - began) * 1000)
            changed += made.spec.containers[0].resources.requests != wanted
    return latencies, changed


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def wait_webhook(cluster: RealCluster, pod: dict[str, Any], timeout: float = 120) -> None:
    """Until a creation comes back changed (the webhook is registered and has its numbers)."""
    deadline = time.monotonic() + timeout
    while creations(cluster, pod, 1)[1] == 0:
        if time.monotonic() > deadline:
            raise SystemExit(
                "the webhook did not change a pod:\n" + cluster.logs("admission-controller")
            )
        time.sleep(2)


def admission(
    cluster: RealCluster, workdir: Path, count: int, kubeconfigs: dict[str, str]
) -> list[str]:
    """Pod creations with no webhook, with VPA's admission-controller, with rightsizer's /mutate
    (each alone, the workload in updateMode Initial on both sides): latency p50/p99 and the
    latency each adds, and creations per second (one client, one after the other)."""
    with cluster.api() as api:
        client.CustomObjectsApi(api).patch_namespaced_custom_object(
            vpa.GROUP,
            vpa.VERSION,
            NS,
            "verticalpodautoscalers",
            "app-0",
            {"spec": {"updatePolicy": {"updateMode": "Initial"}}},
        )
    pod = pod_of(cluster, "app-0")
    creations(cluster, pod, 20)  # connections and caches warm before the first measured case
    results = {"no webhook": creations(cluster, pod, count)}
    vpa.start_admission_controller(cluster, workdir, kubeconfigs["vpa-recommender"])
    wait_webhook(cluster, pod)
    creations(cluster, pod, 20)
    results["VPA admission-controller"] = creations(cluster, pod, count)
    vpa.stop(cluster, vpa.ADMISSION)
    cluster.delete_webhook_configuration(vpa.WEBHOOK_CONFIG)
    with serving(
        cluster,
        workdir,
        OWN_NS,
        "rightsizer-bench",
        kubeconfig=kubeconfigs["rightsizer"],
        RIGHTSIZER_TRACK="policies",
    ):
        wait_webhook(cluster, pod)
        creations(cluster, pod, 20)
        results["rightsizer /mutate"] = creations(cluster, pod, count)
    return results_table(results, count)


def results_table(results: dict[str, tuple[list[float], int]], count: int) -> list[str]:
    base50 = percentile(results["no webhook"][0], 0.5)
    base99 = percentile(results["no webhook"][0], 0.99)
    rows, added = [], {}
    for name, (latencies, changed) in results.items():
        p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
        added[name] = (p50 - base50, p99 - base99)
        rows.append(
            [
                name,
                f"{changed}/{count}",
                f"{p50:.1f}",
                f"{p99:.1f}",
                f"{p50 - base50:.1f}",
                f"{p99 - base99:.1f}",
                f"{1000 * len(latencies) / sum(latencies):.0f}",
            ]
        )
    ours, theirs = added["rightsizer /mutate"], added["VPA admission-controller"]
    rows.append(
        [
            "ratio rightsizer / VPA (added)",
            "",
            "",
            "",
            f"{ours[0] / theirs[0]:.2f}x" if theirs[0] > 0 else "-",
            f"{ours[1] / theirs[1]:.2f}x" if theirs[1] > 0 else "-",
            "",
        ]
    )
    headers = [
        "pod creation (dryRun=All)",
        "changed",
        "p50 ms",
        "p99 ms",
        "added p50 ms",
        "added p99 ms",
        "creations/s",
    ]
    return ["", table(headers, rows)]


def recommender_stage(
    cluster: RealCluster, args: argparse.Namespace, kubeconfigs: dict[str, str], workdir: Path
) -> tuple[list[str], AppProcess]:
    """Both recommenders every `--interval` over the `--pods` pods: the table's lines, and
    `rightsizer serve` still running (its policies serve the admission stage)."""
    vpa_port = free_port()
    vpa.start_recommender(cluster, f"{args.interval}s", kubeconfigs["vpa-recommender"], vpa_port)
    (workdir / "tokens.csv").write_text(f"{TOKEN},bench,*\n")
    app = AppProcess(
        kubeconfigs["rightsizer"],
        f"sqlite:///{workdir}/rightsizer.db",
        workdir / "app.log",
        RIGHTSIZER_NAMESPACE=OWN_NS,
        RIGHTSIZER_TRACK="policies",
        RIGHTSIZER_AUTH_TOKEN_FILE=str(workdir / "tokens.csv"),
        RIGHTSIZER_RECOMMENDER_INTERVAL=str(args.interval),
        RIGHTSIZER_SCALER_INTERVAL="3600",
        RIGHTSIZER_UPDATER_INTERVAL="3600",
    )
    try:
        app.wait_ready(timeout=300)
        vpa.migrate(cluster.kubeconfig_path, app.url, TOKEN, NS)
        return measure(cluster, args, app, vpa_port), app
    except BaseException:
        app.stop()
        raise


def measure(
    cluster: RealCluster, args: argparse.Namespace, app: AppProcess, vpa_port: int
) -> list[str]:
    """Both recommenders' figures over `--window`, once each has run twice."""
    sides = {
        "VPA 1.7.1": (
            cluster.procs[vpa.RECOMMENDER].pid,
            f"http://127.0.0.1:{vpa_port}/metrics",
            "vpa_recommender_execution_latency_seconds",
            'step="total"',
            f"system:serviceaccount:{SA_NS}:vpa-recommender",
        ),
        "rightsizer": (
            app.proc.pid,
            f"{app.url}/metrics",
            "rightsizer_job_run_duration_seconds",
            'job="recommender"',
            f"system:serviceaccount:{SA_NS}:rightsizer",
        ),
    }
    deadline = time.monotonic() + 20 * args.interval + 600
    while any(histogram(url, name, labels)[1] < 2 for _, url, name, labels, _ in sides.values()):
        if time.monotonic() > deadline:
            raise SystemExit("a recommender did not run twice:\n" + cluster.logs(vpa.RECOMMENDER))
        time.sleep(2)
    users = [s[4] for s in sides.values()]
    _, offset = audit_counts(cluster.audit_log, 0, users)
    before = {k: (group_stats(s[0]), histogram(s[1], s[2], s[3])) for k, s in sides.items()}
    time.sleep(args.window)
    after = {k: (group_stats(s[0]), histogram(s[1], s[2], s[3])) for k, s in sides.items()}
    requests_by, _ = audit_counts(cluster.audit_log, offset, users)
    rows, figures = [], {}
    for k, s in sides.items():
        (cpu0, _, _, _), (sum0, n0) = before[k]
        (cpu1, rss, peak, pss), (sum1, n1) = after[k]
        loops = n1 - n0
        figures[k] = (
            (cpu1 - cpu0) / loops if loops else float("nan"),
            (sum1 - sum0) / loops if loops else float("nan"),
            peak,
            rss,
            pss,
            requests_by[s[4]] / loops if loops else float("nan"),
        )
        rows.append(
            [
                k,
                f"{loops:.0f}",
                *(f"{v:.2f}" if i < 2 else f"{v:.0f}" for i, v in enumerate(figures[k])),
            ]
        )
    ours, theirs = figures["rightsizer"], figures["VPA 1.7.1"]
    rows.append(
        [
            "ratio rightsizer / VPA",
            "",
            *(f"{a / b:.2f}x" if b else "-" for a, b in zip(ours, theirs, strict=True)),
        ]
    )
    lines = [
        f"recommender: {args.pods} pods ({args.pods // 10} Deployments, each under a VPA and a "
        f"policy), loop every {args.interval} s, {args.window} s measured",
        "",
        table(
            [
                "recommender",
                "loops",
                "CPU s/loop",
                "wall s/loop",
                "peak RSS MB",
                "kept RSS MB",
                "kept PSS MB",
                "API requests/loop",
            ],
            rows,
        ),
    ]
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=15000, help="a multiple of 10")
    parser.add_argument("--interval", type=int, default=30, help="both recommenders' loop, s")
    parser.add_argument("--window", type=int, default=180, help="measured seconds")
    parser.add_argument(
        "--admission", type=int, default=300, help="pod creations per case (0: none)"
    )
    parser.add_argument(
        "--updater", type=int, default=20, help="Deployments for the updaters (0: none)"
    )
    parser.add_argument("--replicas", type=int, default=5, help="pods of each of those")
    parser.add_argument("--updater-interval", type=int, default=10, help="every loop's, s")
    parser.add_argument("--keep", action="store_true", help="keep the logs (the folder printed)")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    bins = built_tools()
    if isinstance(bins, str):
        raise SystemExit(bins)
    workdir = Path(tempfile.mkdtemp(prefix="peers-bench-"))
    print(f"working in {workdir}", file=sys.stderr, flush=True)
    cluster = RealCluster(workdir / "cluster", bins, "kube")
    app: AppProcess | None = None
    try:
        cluster.start()
        metrics.wait_available(cluster)
        began = time.monotonic()
        kubeconfigs = setup(cluster, args.nodes, args.pods // 10, workdir)
        ready = wait_running(cluster, args.pods, timeout=3600)
        setup_s = time.monotonic() - began
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        lines = [
            f"peers: {args.nodes} kwok nodes; "
            f"machine: {machine()}, load {os.getloadavg()[0]:.1f}; commit {commit}",
            f"setup (nodes, objects, pods Running): {setup_s:.0f} s "
            f"(pods Running after {ready:.0f} s)",
            "",
        ]
        if args.pods:
            stage, app = recommender_stage(cluster, args, kubeconfigs, workdir)
            lines += stage
        if args.admission and app is not None:
            cli_run = [sys.executable, "-m", "app.cli", "policy", "set-mode", f"{NS}/app-0"]
            subprocess.run(
                [*cli_run, "Initial", "--server", app.url, "--token", TOKEN],
                capture_output=True,
                text=True,
                check=True,
            )
            app.stop()
            app = None
            lines += admission(cluster, workdir, args.admission, kubeconfigs)
        if args.updater:
            lines += peers_updater.compare(
                cluster,
                workdir,
                kubeconfigs,
                args.updater,
                args.replicas,
                interval=args.updater_interval,
                timeout=1800,
                token=TOKEN,
                own_namespace=OWN_NS,
                users={
                    who: f"system:serviceaccount:{SA_NS}:{who}"
                    for who in ("vpa-recommender", "vpa-updater", "rightsizer")
                },
            )
            lines.append(f"load at the end: {os.getloadavg()[0]:.1f}")
        return emit(lines, args.output)
    finally:
        if app is not None:
            app.stop()
        cluster.stop()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
