"""VerticalPodAutoscaler objects read from the cluster, for `rightsizer policy import
--from-cluster` (the operator's own credentials: never the service's)."""

from __future__ import annotations

from typing import Any

import urllib3
from kubernetes import client

GROUP, VERSION, PLURAL = "autoscaling.k8s.io", "v1", "verticalpodautoscalers"


class VpasUnreadable(Exception):
    """Why the cluster's VerticalPodAutoscaler objects could not be listed."""


def list_vpas(api: client.ApiClient, namespace: str | None) -> list[Any]:  # rbac: cli-only
    """The objects of every namespace, or of `namespace`, as the API server lists them, each with
    its apiVersion and kind (a list's items carry none)."""
    custom: Any = client.CustomObjectsApi(api)
    try:
        if namespace:
            found = custom.list_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL)
        else:
            found = custom.list_cluster_custom_object(GROUP, VERSION, PLURAL)
    except client.exceptions.ApiException as e:
        if e.status == 404:
            raise VpasUnreadable(
                "the cluster serves no VerticalPodAutoscaler (autoscaling.k8s.io/v1) objects"
            ) from None
        raise VpasUnreadable(
            f"cannot list VerticalPodAutoscaler objects: {e.status} {e.reason}"
        ) from None
    except urllib3.exceptions.HTTPError as e:
        raise VpasUnreadable(f"cannot reach the cluster: {e}") from None
    items: list[Any] = found.get("items") or []
    for item in items:
        item.setdefault("apiVersion", f"{GROUP}/{VERSION}")
        item.setdefault("kind", "VerticalPodAutoscaler")
    return items
