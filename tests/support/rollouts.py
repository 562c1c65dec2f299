"""The Argo-Rollouts-like custom resource of the simulated cluster (app/simulator/control/
rollouts.py): its definition installed and Rollouts written through the official client."""

from __future__ import annotations

import copy
from typing import Any, cast

from kubernetes import client

from app.simulator.control.rollouts import ROLLOUT_CRD
from tests.support.json_bodies import plain

GROUP, VERSION, PLURAL = "argoproj.io", "v1alpha1", "rollouts"


def rollout_crd() -> dict[str, Any]:
    return copy.deepcopy(ROLLOUT_CRD)


def install_rollouts(api: client.ApiClient) -> None:
    """Creates the Rollout CustomResourceDefinition (as installing Argo Rollouts would)."""
    client.ApiextensionsV1Api(api).create_custom_resource_definition(plain(rollout_crd()))


def rollout(
    name: str,
    namespace: str,
    *,
    replicas: int = 2,
    labels: dict[str, str] | None = None,
    cpu: str = "100m",
    memory: str = "64Mi",
    image: str = "nginx:1.27",
) -> dict[str, Any]:
    labels = labels or {"app": name}
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Rollout",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": image,
                            "resources": {"requests": {"cpu": cpu, "memory": memory}},
                        }
                    ]
                },
            },
        },
    }


def create_rollout(api: client.ApiClient, body: dict[str, Any]) -> dict[str, Any]:
    ns = body["metadata"]["namespace"]
    created = cast(
        dict[str, Any],
        client.CustomObjectsApi(api).create_namespaced_custom_object(
            GROUP, VERSION, ns, PLURAL, body
        ),
    )
    return created


def get_rollout(api: client.ApiClient, namespace: str, name: str) -> dict[str, Any]:
    found = cast(
        dict[str, Any],
        client.CustomObjectsApi(api).get_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, name
        ),
    )
    return found
