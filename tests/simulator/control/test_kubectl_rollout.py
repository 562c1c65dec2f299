"""The real kubectl's `scale` and `rollout status|restart|history|undo|pause|resume` against the
simulator's Deployment, StatefulSet and DaemonSet controllers, checked on kubectl's output and on
the objects it leaves (official Python client). One cluster for the module: each test has its
own workloads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from app.simulator.apiserver.resources import POD, REPLICASET
from app.simulator.apiserver.store import WatchEvent
from app.simulator.simulator import Simulator
from tests.support.kubectl import WORKFLOWS, Kubectl, deployment, manifest, workload

NS = "demo"
REVISION = "deployment.kubernetes.io/revision"


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return WORKFLOWS


@pytest.fixture
def apps(module_sim: Simulator) -> Iterator[client.AppsV1Api]:
    api = module_sim.api_client()
    yield client.AppsV1Api(api)
    api.close()


@pytest.fixture
def core(module_sim: Simulator) -> Iterator[client.CoreV1Api]:
    api = module_sim.api_client()
    yield client.CoreV1Api(api)
    api.close()


def pods_of(core: client.CoreV1Api, app: str) -> list[Any]:
    pods = core.list_namespaced_pod(NS, label_selector=f"app={app}").items
    return [p for p in pods if p.metadata.deletion_timestamp is None]


def ready(pod: Any) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])


def replica_sets(apps: client.AppsV1Api, app: str) -> dict[int, Any]:
    """The Deployment's ReplicaSets by revision."""
    items = apps.list_namespaced_replica_set(NS, label_selector=f"app={app}").items
    return {int(rs.metadata.annotations[REVISION]): rs for rs in items}


def test_scale_a_deployment_a_statefulset_and_a_replicaset(
    module_kubectl: Kubectl,
    module_sim: Simulator,
    apps: client.AppsV1Api,
    core: client.CoreV1Api,
    tmp_path: Path,
) -> None:
    objs = [deployment("sc-web", replicas=2), workload("StatefulSet", "sc-db", replicas=1)]
    objs.append(workload("ReplicaSet", "sc-rs", replicas=1))
    module_kubectl("apply", "-f", manifest(tmp_path, *objs))
    module_sim.settle()

    out = module_kubectl.out("scale", "-n", NS, "deploy/sc-web", "--replicas=4")
    assert out.strip() == "deployment.apps/sc-web scaled"
    out = module_kubectl.out("scale", "-n", NS, "statefulset/sc-db", "--replicas=3")
    assert out.strip() == "statefulset.apps/sc-db scaled"
    out = module_kubectl.out("scale", "-n", NS, "rs/sc-rs", "--replicas=2")
    assert out.strip() == "replicaset.apps/sc-rs scaled"
    module_sim.settle()

    web = apps.read_namespaced_deployment("sc-web", NS)
    assert (web.spec.replicas, web.status.ready_replicas, web.status.updated_replicas) == (4, 4, 4)
    assert sorted(p.metadata.name for p in pods_of(core, "sc-db")) == [
        "sc-db-0",
        "sc-db-1",
        "sc-db-2",
    ]
    assert len(pods_of(core, "sc-rs")) == 2
    # --current-replicas is a precondition kubectl checks against the scale subresource.
    failed = module_kubectl(
        "scale", "-n", NS, "deploy/sc-web", "--current-replicas=3", "--replicas=1", check=False
    )
    assert failed.returncode != 0
    assert "Expected replicas to be 3, was 4" in failed.stderr
    assert apps.read_namespaced_deployment("sc-web", NS).spec.replicas == 4


def test_rollout_restart_replaces_every_pod_within_max_surge_and_max_unavailable(
    module_kubectl: Kubectl,
    module_sim: Simulator,
    apps: client.AppsV1Api,
    core: client.CoreV1Api,
    tmp_path: Path,
) -> None:
    module_kubectl(
        "apply",
        "-f",
        manifest(tmp_path, deployment("rr", replicas=4, max_surge=1, max_unavailable=1)),
    )
    module_sim.settle()
    before = {p.metadata.name for p in pods_of(core, "rr")}
    seen: list[tuple[int, int]] = []
    store = module_sim.cluster.store
    recording = [True]

    def record(event: WatchEvent) -> None:
        """After every write: (ReplicaSets' desired pods, ready pods) of the Deployment."""
        if not recording[0] or event.rt not in (POD, REPLICASET):
            return
        rss = [
            e.obj
            for _, e in store.scan(REPLICASET, NS)[0]
            if e.obj["metadata"]["name"].startswith("rr-")
        ]
        pods = [
            e.obj
            for _, e in store.scan(POD, NS)[0]
            if (e.obj["metadata"].get("labels") or {}).get("app") == "rr"
        ]
        ready_pods = sum(
            1
            for p in pods
            if any(
                c["type"] == "Ready" and c["status"] == "True"
                for c in (p.get("status") or {}).get("conditions") or []
            )
        )
        seen.append((sum(rs["spec"]["replicas"] for rs in rss), ready_pods))

    store.add_listener(record)
    try:
        out = module_kubectl.out("rollout", "restart", "-n", NS, "deployment/rr")
        assert out.strip() == "deployment.apps/rr restarted"
        module_sim.settle()
    finally:
        recording[0] = False

    assert seen, "the rollout wrote nothing"
    assert max(desired for desired, _ in seen) <= 4 + 1  # replicas + maxSurge
    assert min(up for _, up in seen) >= 4 - 1  # replicas - maxUnavailable
    after = pods_of(core, "rr")
    assert len(after) == 4 and all(ready(p) for p in after)
    assert not before & {p.metadata.name for p in after}, "some pods were not replaced"
    d = apps.read_namespaced_deployment("rr", NS)
    assert "kubectl.kubernetes.io/restartedAt" in d.spec.template.metadata.annotations
    assert d.metadata.annotations[REVISION] == "2"
    status = module_kubectl.out("rollout", "status", "-n", NS, "deployment/rr", "--timeout=30s")
    assert status.strip() == 'deployment "rr" successfully rolled out'
    progressing = next(c for c in d.status.conditions if c.type == "Progressing")
    assert (progressing.status, progressing.reason) == ("True", "NewReplicaSetAvailable")
    rss = replica_sets(apps, "rr")
    assert (rss[1].spec.replicas, rss[2].spec.replicas) == (0, 4)
    events = module_kubectl.out(
        "get", "events", "-n", NS, "--field-selector", "involvedObject.name=rr"
    )
    assert f"Scaled up replica set {rss[2].metadata.name} from 0 to 1" in events


def test_rollout_history_and_undo_bring_back_the_previous_template_and_replicaset(
    module_kubectl: Kubectl,
    module_sim: Simulator,
    apps: client.AppsV1Api,
    tmp_path: Path,
) -> None:
    module_kubectl("apply", "-f", manifest(tmp_path, deployment("undo", replicas=2)))
    module_sim.settle()
    module_kubectl("set", "image", "-n", NS, "deployment/undo", "app=nginx:1.28")
    module_sim.settle()
    history = module_kubectl.out("rollout", "history", "-n", NS, "deployment/undo")
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
    first = replica_sets(apps, "undo")[1].metadata.name

    out = module_kubectl.out("rollout", "undo", "-n", NS, "deployment/undo")
    assert out.strip() == "deployment.apps/undo rolled back"
    module_sim.settle()
    d = apps.read_namespaced_deployment("undo", NS)
    assert d.spec.template.spec.containers[0].image == "nginx:1.27"
    # The first ReplicaSet runs again, as revision 3 that remembers it was 1.
    rss = replica_sets(apps, "undo")
    assert sorted(rss) == [2, 3]
    assert rss[3].metadata.name == first
    assert rss[3].metadata.annotations["deployment.kubernetes.io/revision-history"] == "1"
    assert (rss[3].spec.replicas, rss[2].spec.replicas) == (2, 0)
    assert d.metadata.annotations[REVISION] == "3"
    history = module_kubectl.out("rollout", "history", "-n", NS, "deployment/undo")
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["2", "3"]
    detail = module_kubectl.out("rollout", "history", "-n", NS, "deployment/undo", "--revision=2")
    assert "nginx:1.28" in detail
    # Undo to an explicit revision, and to one that does not exist.
    module_kubectl("rollout", "undo", "-n", NS, "deployment/undo", "--to-revision=2")
    module_sim.settle()
    assert apps.read_namespaced_deployment("undo", NS).spec.template.spec.containers[0].image == (
        "nginx:1.28"
    )
    missing = module_kubectl(
        "rollout", "undo", "-n", NS, "deployment/undo", "--to-revision=9", check=False
    )
    assert missing.returncode != 0 and "unable to find specified revision 9" in missing.stderr


def test_revision_history_limit_deletes_the_oldest_idle_replicasets(
    module_kubectl: Kubectl, module_sim: Simulator, apps: client.AppsV1Api, tmp_path: Path
) -> None:
    module_kubectl(
        "apply", "-f", manifest(tmp_path, deployment("hist", replicas=1, revisionHistoryLimit=1))
    )
    module_sim.settle()
    for tag in ("1.28", "1.29", "1.30"):
        module_kubectl("set", "image", "-n", NS, "deployment/hist", f"app=nginx:{tag}")
        module_sim.settle()
    assert sorted(replica_sets(apps, "hist")) == [3, 4]  # the new one and one old


def test_rollout_status_waits_and_reports_a_progress_deadline_exceeded(
    module_kubectl: Kubectl, module_sim: Simulator, apps: client.AppsV1Api, tmp_path: Path
) -> None:
    huge = deployment("stuck", replicas=1, cpu="64", progressDeadlineSeconds=60)
    module_kubectl("apply", "-f", manifest(tmp_path, huge))
    module_sim.settle()
    waiting = module_kubectl(
        "rollout", "status", "-n", NS, "deployment/stuck", "--timeout=1s", check=False
    )
    assert waiting.returncode != 0
    assert (
        'Waiting for deployment "stuck" rollout to finish: 0 of 1 updated replicas are available'
        in (waiting.stdout)
    )
    module_sim.advance(61)
    failed = module_kubectl(
        "rollout", "status", "-n", NS, "deployment/stuck", "--timeout=30s", check=False
    )
    assert failed.returncode != 0
    assert 'deployment "stuck" exceeded its progress deadline' in failed.stderr
    cond = next(
        c
        for c in apps.read_namespaced_deployment("stuck", NS).status.conditions
        if c.type == "Progressing"
    )
    assert (cond.status, cond.reason) == ("False", "ProgressDeadlineExceeded")
    module_kubectl("delete", "-n", NS, "deployment/stuck")


def test_a_paused_deployment_rolls_out_only_when_resumed(
    module_kubectl: Kubectl, module_sim: Simulator, apps: client.AppsV1Api, tmp_path: Path
) -> None:
    module_kubectl("apply", "-f", manifest(tmp_path, deployment("paused", replicas=1)))
    module_sim.settle()
    module_kubectl("rollout", "pause", "-n", NS, "deployment/paused")
    module_kubectl("set", "image", "-n", NS, "deployment/paused", "app=nginx:1.28")
    module_sim.settle()
    assert sorted(replica_sets(apps, "paused")) == [1]
    cond = next(
        c
        for c in apps.read_namespaced_deployment("paused", NS).status.conditions
        if c.type == "Progressing"
    )
    assert (cond.status, cond.reason) == ("Unknown", "DeploymentPaused")
    module_kubectl("rollout", "resume", "-n", NS, "deployment/paused")
    module_sim.settle()
    assert sorted(replica_sets(apps, "paused")) == [1, 2]
    status = module_kubectl.out("rollout", "status", "-n", NS, "deployment/paused")
    assert "successfully rolled out" in status


def test_rollout_of_a_statefulset_and_a_daemonset(
    module_kubectl: Kubectl,
    module_sim: Simulator,
    apps: client.AppsV1Api,
    core: client.CoreV1Api,
    tmp_path: Path,
) -> None:
    objs = workload("StatefulSet", "ro-db", replicas=3), workload("DaemonSet", "ro-agent")
    module_kubectl("apply", "-f", manifest(tmp_path, *objs))
    module_sim.settle()
    before = {p.metadata.uid for p in pods_of(core, "ro-db") + pods_of(core, "ro-agent")}

    for kind, name in (("statefulset", "ro-db"), ("daemonset", "ro-agent")):
        out = module_kubectl.out("rollout", "restart", "-n", NS, f"{kind}/{name}")
        assert out.strip() == f"{kind}.apps/{name} restarted"
    module_sim.settle()
    db = apps.read_namespaced_stateful_set("ro-db", NS)
    assert db.status.current_revision == db.status.update_revision
    assert (db.status.updated_replicas, db.status.ready_replicas) == (3, 3)
    pods = pods_of(core, "ro-db") + pods_of(core, "ro-agent")
    assert len(pods) == 3 + 3  # a daemon on each of the 3 nodes
    assert not before & {p.metadata.uid for p in pods}, "some pods were not replaced"
    labels = {p.metadata.labels["controller-revision-hash"] for p in pods_of(core, "ro-db")}
    assert labels == {db.status.update_revision}
    status = module_kubectl.out("rollout", "status", "-n", NS, "statefulset/ro-db")
    assert status.strip() == "partitioned roll out complete: 3 new pods have been updated..."
    status = module_kubectl.out("rollout", "status", "-n", NS, "daemonset/ro-agent")
    assert status.strip() == 'daemon set "ro-agent" successfully rolled out'

    for kind, name in (("statefulset", "ro-db"), ("daemonset", "ro-agent")):
        history = module_kubectl.out("rollout", "history", "-n", NS, f"{kind}/{name}")
        assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
        module_kubectl("rollout", "undo", "-n", NS, f"{kind}/{name}")
    module_sim.settle()
    for template in (
        apps.read_namespaced_stateful_set("ro-db", NS).spec.template,
        apps.read_namespaced_daemon_set("ro-agent", NS).spec.template,
    ):
        assert "kubectl.kubernetes.io/restartedAt" not in (template.metadata.annotations or {})
    revisions = apps.list_namespaced_controller_revision(NS, label_selector="app=ro-db").items
    assert sorted(r.revision for r in revisions) == [2, 3]
    table = module_kubectl.out("get", "controllerrevisions", "-n", NS, "-l", "app=ro-db")
    printed = [line.split() for line in table.splitlines()]
    assert printed[0] == ["NAME", "CONTROLLER", "REVISION", "AGE"]
    assert sorted((row[1], row[2]) for row in printed[1:]) == [
        ("statefulset.apps/ro-db", "2"),
        ("statefulset.apps/ro-db", "3"),
    ]
