"""rightsizer beside the real Vertical Pod Autoscaler (1.7.1, tests/realkube/vpa.py), on the same
real cluster, fed the same usage: kwok's emulated usage through the real metrics-server.

The workloads get VerticalPodAutoscaler objects (updateMode Off), and rightsizer the policies
`rightsizer policy import --from-cluster` makes of them, applied with `rightsizer policy apply`:
the migration a user makes. Both recommenders read metrics.k8s.io every 1-2 s, more often than
metrics-server scrapes (every 10 s), so each sees every scrape, and a sample's time is the
scrape's (PodMetrics `timestamp`), not the reader's: the sampling instants are the same. Then the
scrapes of the workloads' node are stopped (its metrics path made to answer 404, so metrics-server
drops its pods) midway between two scrapes, and both have the same samples: the test checks that
(VPA's checkpoints against rightsizer's sample counts) before comparing. So target, lower and
upper bounds must be equal, exactly: no bucket of tolerance is needed, and none is given. The
bounds widen as 1 / the samples' time span (VPA's confidence), so one scrape more on one side
would show at once.

Both round memory up to whole MiB (VPA's --round-memory-bytes set to rightsizer's default) and
track only workloads a VPA object or policy covers (--memory-saver, RIGHTSIZER_TRACK=policies).
On every release (RELEASES): VPA 1.7.1 supports Kubernetes 1.33 and later.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.utils import parse_quantity

from tests.realkube import metrics, vpa
from tests.realkube.cluster import RealCluster
from tests.realkube.kubelet import report_oom_kill
from tests.support.json_bodies import plain
from tests.support.processes import AppProcess, recommendations, wait_for

NS, OWN_NS, NODE = "peers", "rightsizer-peers", "peers-node"
# on NODE only these tests' pods (its scrapes are stopped: another test's pod there would have no
# metrics), and it is deleted after them
TAINT = "rightsizer.test/peers"
PAUSE = "registry.k8s.io/pause:3.10"
TOKEN = "peers-admin-token-0123456789"
# name: (requests, limits, usage cpu, usage memory, VPA container policies)
WORKLOADS: dict[str, tuple[dict[str, str], dict[str, str], str, str, list[dict[str, Any]]]] = {
    "steady": ({"cpu": "100m", "memory": "64Mi"}, {}, "250m", "300Mi", []),
    "capped": (
        {"cpu": "100m", "memory": "64Mi"},
        {},
        "400m",
        "200Mi",
        [{"containerName": "*", "maxAllowed": {"cpu": "300m"}, "minAllowed": {"memory": "400Mi"}}],
    ),
    # OOM-killed later: VPA bumps the memory request (observer.go reads the pod's requests)
    "leaky": ({"cpu": "100m", "memory": "600Mi"}, {"memory": "800Mi"}, "50m", "100Mi", []),
}
FIELDS = ("target", "lowerBound", "upperBound", "uncappedTarget")


def deployment(name: str) -> dict[str, Any]:
    requests, limits, cpu, memory, _ = WORKLOADS[name]
    resources: dict[str, Any] = {"requests": requests, **({"limits": limits} if limits else {})}
    return {
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {
                    "labels": {"app": name},
                    "annotations": metrics.usage_annotations(cpu, memory),
                },
                "spec": {
                    "nodeSelector": {"kubernetes.io/hostname": NODE},
                    "tolerations": [{"key": TAINT, "operator": "Exists", "effect": "NoSchedule"}],
                    "containers": [{"name": "app", "image": PAUSE, "resources": resources}],
                },
            },
        },
    }


def cli(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def amounts(rec: dict[str, Any]) -> dict[str, dict[str, Decimal]]:
    return {
        f: {r: parse_quantity(v) for r, v in (rec.get(f) or {}).items()} for f in FIELDS if f in rec
    }


def both(cluster: RealCluster, app: AppProcess) -> tuple[dict[str, Any], dict[str, Any]]:
    """(rightsizer's, VPA's) recommendation of each workload's container, as amounts."""
    ours = {
        k[2]: amounts(dict(v))
        for k, v in recommendations(app).items()
        if k[0] == NS and k[3] == "app"
    }
    theirs = {n: amounts(c["app"]) for n, c in vpa.recommendations(cluster, NS).items() if c}
    return ours, theirs


def same_samples(cluster: RealCluster, app: AppProcess) -> dict[str, Any] | None:
    """Each workload's sample count and span on both sides, once they are the same for all."""
    ours = {k[2]: v for k, v in recommendations(app).items() if k[0] == NS}
    theirs = {name: cp for (name, _), cp in vpa.checkpoints(cluster, NS).items()}
    seen = {}
    for name in WORKLOADS:
        if name not in ours or name not in theirs:
            return None
        mine = (
            ours[name]["sampleCount"],
            _time(ours[name]["firstSampleTime"]),
            _time(ours[name]["lastSampleTime"]),
        )
        cp = theirs[name]
        peer = (
            cp.get("totalSamplesCount"),
            _time(cp.get("firstSampleStart")),
            _time(cp.get("lastSampleStart")),
        )
        if mine != peer:
            return None
        seen[name] = mine
    return seen


def _time(text: str | None) -> float | None:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() if text else None


@pytest.fixture(scope="module")
def peers(real_cluster: RealCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    directory = Path(tmp_path_factory.mktemp("peers"))
    metrics.wait_available(real_cluster)
    vpa.install_crds(real_cluster)
    vpa.start_recommender(real_cluster)
    real_cluster.add_node(NODE)
    with real_cluster.api() as api:
        core = client.CoreV1Api(api)
        core.patch_node(NODE, {"spec": {"taints": [{"key": TAINT, "effect": "NoSchedule"}]}})
        core.create_namespace(plain({"metadata": {"name": NS}}))
        core.create_namespace(plain({"metadata": {"name": OWN_NS}}))
    for name, (_, _, _, _, containers) in WORKLOADS.items():
        vpa.create(real_cluster, vpa.vpa(NS, name, containers))
    tokens = directory / "tokens.csv"
    tokens.write_text(f"{TOKEN},peers,*\n")
    app = AppProcess(
        real_cluster.kubeconfig_path,
        f"sqlite:///{directory}/rightsizer.db",
        directory / "app.log",
        RIGHTSIZER_NAMESPACE=OWN_NS,
        RIGHTSIZER_TRACK="policies",
        RIGHTSIZER_AUTH_TOKEN_FILE=str(tokens),
    )
    try:
        app.wait_ready()
        # the migration: VPA objects read from the cluster, turned into policies, applied
        vpa.migrate(real_cluster.kubeconfig_path, app.url, TOKEN)
        with real_cluster.api() as api:
            for name in WORKLOADS:
                client.AppsV1Api(api).create_namespaced_deployment(NS, plain(deployment(name)))
        # a few scrapes on both sides
        wait_for(
            lambda: (
                all(
                    r.get("sampleCount", 0) >= 4
                    for k, r in recommendations(app).items()
                    if k[0] == NS
                )
                and len([k for k in recommendations(app) if k[0] == NS]) == len(WORKLOADS)
            ),
            240,
            "4 samples of each workload in rightsizer",
            interval=1,
        )
        freeze(real_cluster)
        yield real_cluster, app
    finally:
        app.stop()
        if vpa.RECOMMENDER in real_cluster.procs:
            vpa.stop(real_cluster, vpa.RECOMMENDER)
        with real_cluster.api() as api, contextlib.suppress(client.ApiException):
            core = client.CoreV1Api(api)
            core.delete_namespace(NS)
            core.delete_node(NODE)


def freeze(cluster: RealCluster) -> None:
    """Stops the scrapes of NODE's pods, about 5 s after a scrape (both recommenders have read
    it; the next one is 5 s away): its metrics path answers 404 from the next scrape on."""
    stamp = _time(metrics.wait_pod_metrics(cluster, NS, _pod(cluster, "steady"))["timestamp"])
    assert stamp is not None
    wait = (stamp + 5 - time.time()) % 10
    time.sleep(wait)
    with cluster.api() as api:
        client.CoreV1Api(api).patch_node(
            NODE, {"metadata": {"annotations": {metrics.PATH_ANNOTATION: "/frozen"}}}
        )
    time.sleep(12)  # the next scrape drops the node's pods


def _pod(cluster: RealCluster, workload: str) -> str:
    with cluster.api() as api:
        pods = client.CoreV1Api(api).list_namespaced_pod(NS, label_selector=f"app={workload}")
    [pod] = [p.metadata.name for p in pods.items if not p.metadata.deletion_timestamp]
    return pod


def agreed(cluster: RealCluster, app: AppProcess) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both sides' recommendations once their samples are the same (each side's sample count,
    first and last sample time of every workload)."""
    deadline = time.monotonic() + 90
    while same_samples(cluster, app) is None:
        if time.monotonic() > deadline:
            mine = {k[2]: v for k, v in recommendations(app).items() if k[0] == NS}
            raise AssertionError(
                "not the same samples after 90 s: rightsizer "
                + json.dumps({n: [r["sampleCount"], r["lastSampleTime"]] for n, r in mine.items()})
                + ", VPA "
                + json.dumps(
                    {
                        k[0]: [v.get("totalSamplesCount"), v.get("lastSampleStart")]
                        for k, v in vpa.checkpoints(cluster, NS).items()
                    }
                )
            )
        time.sleep(1)
    time.sleep(5)  # each has written what it computed from them (a loop or two)
    return both(cluster, app)


def test_recommendations_equal_vpa_on_the_same_samples(peers: Any) -> None:
    cluster, app = peers
    ours, theirs = agreed(cluster, app)
    assert set(theirs) == set(WORKLOADS), theirs
    for name in WORKLOADS:
        assert ours[name] == theirs[name], f"{name}: rightsizer {ours[name]} != VPA {theirs[name]}"
    # the import carried the container policy: VPA's caps are rightsizer's
    assert theirs["capped"]["target"]["cpu"] == Decimal("0.3")
    assert theirs["capped"]["target"]["memory"] == parse_quantity("400Mi")


def test_an_oom_kill_bumps_both_the_same(peers: Any) -> None:
    cluster, app = peers
    before = both(cluster, app)[1]["leaky"]["target"]["memory"]
    with cluster.api() as api:
        report_oom_kill(api, NS, _pod(cluster, "leaky"), "app")
    wait_for(
        lambda: all(side["leaky"]["target"]["memory"] > before for side in both(cluster, app)),
        90,
        "the leaky workload's memory target raised by both after the OOM kill",
        interval=1,
    )
    time.sleep(5)
    ours, theirs = both(cluster, app)
    for name in WORKLOADS:
        assert ours[name] == theirs[name], f"{name}: rightsizer {ours[name]} != VPA {theirs[name]}"


def test_vpa_turned_off_rightsizer_keeps_its_recommendations(peers: Any) -> None:
    cluster, app = peers
    _, last = both(cluster, app)
    vpa.stop(cluster, vpa.RECOMMENDER)
    with cluster.api() as api:
        custom = client.CustomObjectsApi(api)
        for name in WORKLOADS:
            custom.delete_namespaced_custom_object(
                vpa.GROUP, vpa.VERSION, NS, "verticalpodautoscalers", name
            )
    time.sleep(5)  # a few runs of rightsizer's recommender without VPA
    ours, _ = both(cluster, app)
    assert ours == last
    policies = json.loads(
        cli("policy", "list", "-o", "json", "--server", app.url, "--token", TOKEN)
    )
    assert sorted(p["name"] for p in policies) == sorted(WORKLOADS), policies
