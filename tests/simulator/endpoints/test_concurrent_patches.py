"""A patch of the scale or resize subresource that names no resourceVersion, sent while a
controller writes the same object, is applied to the newest version, as kube-apiserver applies
it inside the storage's GuaranteedUpdate and applies it again when the object changed meanwhile
(k8s.io/apiserver pkg/endpoints/handlers/patch.go, pkg/registry/generic/registry/store.go
Update): no 409 Conflict, and the controller's write kept. A resourceVersion the patch itself
names stays a precondition.

The controller's write is made to land between the handler's read and its write: the first
application of the patch makes it (the store lock is free there, as it is for the controllers'
worker thread in a running simulator)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.simulator.apiserver import patches
from app.simulator.apiserver.resources import DEPLOYMENT, POD, ResourceType
from app.simulator.simulator import Simulator

NS = "shop"


def write_once_before_patching(
    monkeypatch: pytest.MonkeyPatch, sim: Simulator, rt: ResourceType, name: str
) -> Callable[[], int]:
    """The next application of a patch first writes `rt` `name` as a controller would (an
    annotation); returns how many times patches were applied."""
    real = patches.apply_patch
    calls = [0]

    def mark(obj: dict[str, Any]) -> None:
        obj["metadata"].setdefault("annotations", {})["controller"] = "wrote"

    def apply_patch(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == 1:
            sim.cluster.store.update(rt, NS, name, mark)
        return real(*args, **kwargs)

    monkeypatch.setattr(patches, "apply_patch", apply_patch)
    return lambda: calls[0]


def test_a_scale_patch_during_a_controllers_write_is_applied_to_the_new_version(
    sim: Simulator, apps: client.AppsV1Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    applied = write_once_before_patching(monkeypatch, sim, DEPLOYMENT, "web")
    scale = apps.patch_namespaced_deployment_scale("web", NS, {"spec": {"replicas": 5}})
    assert scale.spec.replicas == 5
    assert applied() == 2  # once on the version it read, again on the controller's
    web = apps.read_namespaced_deployment("web", NS)
    assert web.spec.replicas == 5
    assert web.metadata.annotations["controller"] == "wrote"


def test_a_scale_patch_naming_an_old_resource_version_is_still_a_conflict(
    sim: Simulator, apps: client.AppsV1Api
) -> None:
    old = apps.read_namespaced_deployment_scale("web", NS).metadata.resource_version
    apps.patch_namespaced_deployment_scale("web", NS, {"spec": {"replicas": 4}})
    with pytest.raises(ApiException) as e:
        apps.patch_namespaced_deployment_scale(
            "web", NS, {"metadata": {"resourceVersion": old}, "spec": {"replicas": 6}}
        )
    assert e.value.status == 409
    assert apps.read_namespaced_deployment_scale("web", NS).spec.replicas == 4


def test_a_resize_patch_during_a_kubelets_write_is_applied_to_the_new_version(
    sim: Simulator, core: client.CoreV1Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = core.list_namespaced_pod(NS, label_selector="app=web").items[0].metadata.name
    applied = write_once_before_patching(monkeypatch, sim, POD, name)
    body = {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "300m"}}}]}}
    out = core.patch_namespaced_pod_resize(name, NS, body)
    assert out.spec.containers[0].resources.requests["cpu"] == "300m"
    assert applied() == 2
    assert core.read_namespaced_pod(name, NS).metadata.annotations["controller"] == "wrote"
