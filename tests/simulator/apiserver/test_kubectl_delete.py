"""The real kubectl's `delete --cascade=foreground|orphan|background` and finalizers against the
simulator's registry DELETE and garbage collector, checked on kubectl's output, on the order in
which objects go (a watch on the store) and on what the official Python client reads after."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.simulator.apiserver.resources import DEPLOYMENT, POD, REPLICASET
from app.simulator.apiserver.store import WatchEvent
from app.simulator.simulator import Simulator
from tests.support.json_bodies import plain
from tests.support.kubectl import WORKFLOWS, Kubectl, deployment, manifest

NS = "demo"


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return WORKFLOWS


def owned(api: client.ApiClient, app: str) -> tuple[list[Any], list[Any]]:
    """(ReplicaSets, pods) labelled app=<app> that are not being deleted."""
    rss = client.AppsV1Api(api).list_namespaced_replica_set(NS, label_selector=f"app={app}").items
    pods = client.CoreV1Api(api).list_namespaced_pod(NS, label_selector=f"app={app}").items
    return rss, [p for p in pods if p.metadata.deletion_timestamp is None]


def create(kubectl: Kubectl, sim: Simulator, tmp_path: Path, name: str) -> None:
    kubectl("apply", "-f", manifest(tmp_path, deployment(name, replicas=2)))
    sim.settle()


def record_deletions(sim: Simulator) -> list[tuple[str, str, str]]:
    """(type, kind, name) of every Deployment, ReplicaSet and pod change from now on."""
    seen: list[tuple[str, str, str]] = []

    def listen(event: WatchEvent) -> None:
        if event.rt in (DEPLOYMENT, REPLICASET, POD):
            meta = event.entry.obj["metadata"]
            kind = "marked" if meta.get("deletionTimestamp") and event.type != "DELETED" else ""
            seen.append((kind or event.type, event.rt.kind, meta["name"]))

    sim.cluster.store.add_listener(listen)
    return seen


def test_delete_cascade_foreground_removes_dependents_before_the_owner(
    module_kubectl: Kubectl, module_sim: Simulator, module_api: client.ApiClient, tmp_path: Path
) -> None:
    create(module_kubectl, module_sim, tmp_path, "fg")
    rs = owned(module_api, "fg")[0][0].metadata.name
    seen = record_deletions(module_sim)
    out = module_kubectl.out("delete", "-n", NS, "deployment/fg", "--cascade=foreground")
    assert out.strip() == 'deployment.apps "fg" deleted'  # kubectl waited until it was gone
    module_sim.settle()
    with pytest.raises(ApiException) as gone:
        client.AppsV1Api(module_api).read_namespaced_deployment("fg", NS)
    assert gone.value.status == 404
    assert owned(module_api, "fg") == ([], [])
    fg = [s for s in seen if s[2] == "fg" or s[2].startswith("fg-")]
    # The Deployment is first marked (deletionTimestamp, foregroundDeletion finalizer), then its
    # ReplicaSet, whose pods go before it does, and the Deployment goes last.
    assert fg[0] == ("marked", "Deployment", "fg")
    assert fg[-1] == ("DELETED", "Deployment", "fg")
    rs_gone = fg.index(("DELETED", "ReplicaSet", rs))
    pods_gone = [i for i, s in enumerate(fg) if s[0] == "DELETED" and s[1] == "Pod"]
    assert len(pods_gone) == 2 and max(pods_gone) < rs_gone
    assert ("marked", "ReplicaSet", rs) in fg[:rs_gone]


def test_delete_cascade_orphan_leaves_the_replicaset_and_pods_without_owner(
    module_kubectl: Kubectl, module_sim: Simulator, module_api: client.ApiClient, tmp_path: Path
) -> None:
    create(module_kubectl, module_sim, tmp_path, "orph")
    out = module_kubectl.out("delete", "-n", NS, "deployment/orph", "--cascade=orphan")
    assert out.strip() == 'deployment.apps "orph" deleted'
    module_sim.settle()
    rss, pods = owned(module_api, "orph")
    assert len(rss) == 1 and len(pods) == 2
    assert rss[0].metadata.owner_references is None
    assert rss[0].metadata.finalizers is None
    # The ReplicaSet still runs its pods: one deleted comes back.
    client.CoreV1Api(module_api).delete_namespaced_pod(pods[0].metadata.name, NS)
    module_sim.settle()
    assert len(owned(module_api, "orph")[1]) == 2
    module_kubectl("delete", "-n", NS, f"rs/{rss[0].metadata.name}")


def test_delete_in_the_background_is_immediate_and_dependents_follow(
    module_kubectl: Kubectl, module_sim: Simulator, module_api: client.ApiClient, tmp_path: Path
) -> None:
    create(module_kubectl, module_sim, tmp_path, "bg")
    seen = record_deletions(module_sim)
    out = module_kubectl.out("delete", "-n", NS, "deployment/bg")
    assert out.strip() == 'deployment.apps "bg" deleted'
    module_sim.settle()
    assert owned(module_api, "bg") == ([], [])
    bg = [s for s in seen if s[2] == "bg" or s[2].startswith("bg-")]
    assert bg[0] == ("DELETED", "Deployment", "bg")  # never marked: gone at once
    assert not [s for s in bg if s[0] == "marked"]


def test_a_finalizer_holds_an_object_until_it_is_removed(
    module_kubectl: Kubectl, module_sim: Simulator, module_api: client.ApiClient, tmp_path: Path
) -> None:
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "held", "namespace": NS, "finalizers": ["example.com/hold"]},
        "data": {"k": "v"},
    }
    module_kubectl("apply", "-f", manifest(tmp_path, cm))
    module_kubectl("delete", "-n", NS, "configmap/held", "--wait=false")
    core = client.CoreV1Api(module_api)
    held = core.read_namespaced_config_map("held", NS)
    assert held.metadata.deletion_timestamp is not None
    assert held.metadata.finalizers == ["example.com/hold"]
    # Finalizers cannot be added to an object being deleted.
    more = json.dumps({"metadata": {"finalizers": ["example.com/hold", "example.com/more"]}})
    refused = module_kubectl("patch", "-n", NS, "configmap/held", "-p", more, check=False)
    assert refused.returncode != 0
    assert "no new finalizers can be added if the object is being deleted" in refused.stderr
    waiting = module_kubectl.watching(
        "configmaps", "wait", "-n", NS, "--for=delete", "configmap/held", "--timeout=30s"
    )
    module_kubectl(
        "patch",
        "-n",
        NS,
        "configmap/held",
        "--type=json",
        "-p",
        '[{"op": "remove", "path": "/metadata/finalizers"}]',
    )
    done = waiting.result()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "configmap/held condition met"
    with pytest.raises(ApiException) as gone:
        core.read_namespaced_config_map("held", NS)
    assert gone.value.status == 404


def test_delete_options_are_validated_and_preconditions_checked(
    module_sim: Simulator, module_api: client.ApiClient
) -> None:
    core = client.CoreV1Api(module_api)
    core.create_namespaced_config_map(NS, plain({"metadata": {"name": "opts"}}))
    with pytest.raises(ApiException) as bad:
        core.delete_namespaced_config_map("opts", NS, propagation_policy="Sometimes")
    assert bad.value.status == 422
    assert json.loads(bad.value.body)["message"] == (
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
        '"Sometimes": supported values: "Foreground", "Background", "Orphan", "nil"'
    )
    with pytest.raises(ApiException) as stale:
        core.delete_namespaced_config_map(
            "opts",
            NS,
            body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid="not-its-uid")),
        )
    assert stale.value.status == 409
    assert "Precondition failed: UID in precondition: not-its-uid" in stale.value.body
    core.delete_namespaced_config_map("opts", NS)


def test_dependents_of_an_owner_that_never_existed_are_collected(
    module_sim: Simulator, module_api: client.ApiClient
) -> None:
    core = client.CoreV1Api(module_api)
    ghost = {"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost", "uid": "no-such-uid"}
    core.create_namespaced_config_map(
        NS, plain({"metadata": {"name": "dep", "ownerReferences": [ghost]}})
    )
    module_sim.settle()
    with pytest.raises(ApiException) as gone:
        core.read_namespaced_config_map("dep", NS)
    assert gone.value.status == 404
