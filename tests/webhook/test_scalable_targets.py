"""Targets beyond the six well-known kinds, against the simulated cluster with its
Argo-Rollouts-like custom resource: discovery finds the kinds with a /scale subresource
(app/kube/scalable.py), the owner chain ends at the Rollout (app.core.owners), and the webhook
sizes a Rollout's pods by a policy naming the Rollout (apiVersion argoproj.io/v1alpha1),
answering from its caches only."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from kubernetes import client as k8s

from app.core.workload_key import WorkloadKey
from app.kube.cluster import ClusterView
from app.kube.owners import OwnerCache
from app.kube.scalable import ScalableKinds
from app.simulator.simulator import Simulator
from app.simulator.testing import EMPTY
from app.webhook import webhook_of
from app.webhook.sources import ClusterSources
from tests.support.json_bodies import plain
from tests.support.pods import amounts, apply_strictly
from tests.support.processes import wait_for
from tests.support.reviews import (
    MI,
    add_policy,
    add_recommendation,
    app_pod,
    patch_of,
    post,
    refresh,
    review,
)
from tests.support.rollouts import create_rollout, install_rollouts, rollout

ROLLOUT_KEY = WorkloadKey("shop", "Rollout.argoproj.io", "web")


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return EMPTY


@pytest.fixture(scope="module")
def sim_namespaces() -> tuple[str, ...]:
    return ("shop",)


@pytest.fixture(scope="module")
def installed(module_sim: Simulator) -> Simulator:
    api = module_sim.api_client()
    install_rollouts(api)
    create_rollout(api, rollout("web", "shop", replicas=2, cpu="1", memory="1Gi"))
    api.close()
    for _ in range(3):
        module_sim.settle()
    return module_sim


@pytest.fixture
def api(installed: Simulator) -> Iterator[k8s.ApiClient]:
    a = installed.api_client()
    yield a
    a.close()


def rollout_pod(api: k8s.ApiClient) -> dict[str, Any]:
    """A pod as the Rollout's ReplicaSet asks for it: generateName, owner, template labels."""
    pods = k8s.CoreV1Api(api).list_namespaced_pod("shop", label_selector="app=web").items
    live = pods[0]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": live.metadata.generate_name,
            "namespace": "shop",
            "labels": dict(live.metadata.labels),
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": live.metadata.owner_references[0].name,
                    "uid": live.metadata.owner_references[0].uid,
                    "controller": True,
                }
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "nginx:1.27",
                    "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                }
            ]
        },
    }


def test_discovery_finds_the_kinds_with_a_scale_subresource(api: k8s.ApiClient) -> None:
    kinds = ScalableKinds(api)
    assert kinds("argoproj.io", "Rollout")
    assert kinds("apps", "Deployment")
    assert not kinds("", "Pod")
    assert not kinds("apps", "DaemonSet")  # no /scale
    where = kinds.resource("argoproj.io", "Rollout")
    assert where is not None
    assert (where.version, where.plural, where.namespaced) == ("v1alpha1", "rollouts", True)
    scale = kinds.scale("shop", "argoproj.io", "Rollout", "web")
    assert scale is not None and scale["spec"]["replicas"] == 2
    assert scale["status"]["selector"] == "app=web"
    assert kinds.scale("shop", "argoproj.io", "Rollout", "missing") is None


def test_a_definition_installed_later_is_found_on_the_next_miss(
    installed: Simulator, api: k8s.ApiClient
) -> None:
    kinds = ScalableKinds(api, min_refresh_seconds=0)
    assert kinds.refresh()  # listed before the definition exists
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.io"},
        "spec": {
            "group": "example.io",
            "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                    "subresources": {
                        "scale": {
                            "specReplicasPath": ".spec.replicas",
                            "statusReplicasPath": ".status.replicas",
                        }
                    },
                }
            ],
        },
    }
    k8s.ApiextensionsV1Api(api).create_custom_resource_definition(plain(crd))
    assert kinds("example.io", "Widget")  # not listed then: the first question lists again
    assert not kinds("example.io", "Gadget")  # asked in vain: not listed again for a while
    before = kinds.refreshes
    assert not kinds("example.io", "Gadget")
    assert kinds.refreshes == before


def test_in_the_background_a_miss_never_calls_the_api_server(api: k8s.ApiClient) -> None:
    kinds = ScalableKinds(api, refresh_seconds=3600, min_refresh_seconds=0.05).start()
    try:
        wait_for(lambda: kinds.listed, 10, "the first listing")
        before = kinds.refreshes
        assert not kinds("nowhere.example.io", "Ghost")  # answered from the last listing
        assert kinds.refreshes == before  # nothing was listed while answering
        wait_for(lambda: kinds.refreshes > before, 10, "the miss wakes the refresher")
    finally:
        kinds.stop()


def test_the_cluster_view_resolves_a_rollouts_pods_to_the_rollout(
    installed: Simulator, api: k8s.ApiClient
) -> None:
    view = ClusterView(api).start()
    try:
        assert view.wait_synced(10)
        workloads = {view.workload_of(p) for p in view.pods.items()}
        assert workloads == {ROLLOUT_KEY}
        assert view.workload_exists(ROLLOUT_KEY)
        assert not view.workload_exists(WorkloadKey("shop", "Rollout.argoproj.io", "gone"))
        source = view.replicas_source(ROLLOUT_KEY)
        assert source is not None and source["spec"]["replicas"] == 2
    finally:
        view.stop()


def test_the_webhook_sizes_a_rollouts_pod_by_the_policy_naming_the_rollout(
    app: Flask, client: FlaskClient, api: k8s.ApiClient
) -> None:
    hook = webhook_of(app)
    hook.sources = ClusterSources(api_client=api)
    add_policy(
        name="web",
        target_kind="Rollout.argoproj.io",
        target_name="web",
        target_options={"apiVersion": "argoproj.io/v1alpha1"},
    )
    add_recommendation(workload=("shop", "Rollout.argoproj.io", "web"), cpu=300, memory=300 * MI)
    refresh(app)
    try:
        hook.start(wait=10)
        owners = hook.owner_lookup
        assert isinstance(owners, OwnerCache) and owners.wait_synced(10)

        def discovered() -> bool:
            hook.start()
            return hook.scalable is not None

        wait_for(discovered, 10, "discovery listed")
        p = rollout_pod(api)
        body = post(client, review(p)).get_json()
        c = apply_strictly(p, patch_of(body["response"]))["spec"]["containers"][0]
        assert amounts(c, "requests") == {"cpu": 300, "memory": 300 * MI}
    finally:
        hook.stop()


def test_a_selector_policy_sizes_the_pods_its_labels_select(
    app: Flask, client: FlaskClient
) -> None:
    """No cluster needed: the pod's own labels decide (those its controller added aside)."""
    add_policy(
        name="tier-web",
        update_mode="Recreate",
        target_options={"selector": {"matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["web", "edge"]},
            {"key": "pod-template-hash", "operator": "DoesNotExist"},
        ]}},
    )  # fmt: skip
    add_recommendation(cpu=300, memory=300 * MI)
    refresh(app)
    selected = app_pod()
    selected["metadata"]["labels"]["tier"] = "edge"
    body = post(client, review(selected)).get_json()
    c = apply_strictly(selected, patch_of(body["response"]))["spec"]["containers"][0]
    assert amounts(c, "requests") == {"cpu": 300, "memory": 300 * MI}
    other = app_pod()
    other["metadata"]["labels"]["tier"] = "db"
    assert "patch" not in post(client, review(other)).get_json()["response"]
