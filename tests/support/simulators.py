"""Clusters and objects for tests against the simulated API server: a small scenario, pod bodies,
and reads through the official client."""

from __future__ import annotations

from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.simulator.simulator import Simulator

SMALL: dict[str, Any] = {
    "seed": 7,
    "nodes": [
        {
            "namePrefix": "node",
            "count": 3,
            "cpu": "4",
            "memory": "16Gi",
            "labels": {"pool": "general"},
        }
    ],
    "namespaces": [{"name": "shop", "labels": {"team": "shop"}}, "other"],
    "workloads": [
        {
            "kind": "Deployment",
            "namespace": "shop",
            "name": "web",
            "replicas": 3,
            "containers": [
                {
                    "name": "app",
                    "image": "nginx:1.27",
                    "requests": {"cpu": "250m", "memory": "256Mi"},
                    "limits": {"memory": "512Mi"},
                    "usage": {"cpu": {"base": 0.1}, "memory": {"base": "100Mi"}},
                }
            ],
        },
    ],
}


def pod_body(
    name: str = "",
    *,
    labels: dict[str, str] | None = None,
    cpu: str = "100m",
    memory: str = "128Mi",
    limit_memory: str | None = None,
    generate_name: str | None = None,
) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": {"cpu": cpu, "memory": memory}}
    if limit_memory:
        resources["limits"] = {"memory": limit_memory}
    meta: dict[str, Any] = {"labels": labels or {"app": "test"}}
    if name:
        meta["name"] = name
    if generate_name:
        meta["generateName"] = generate_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "image": "busybox:1.36", "resources": resources}]},
    }


def replicas(sim: Simulator, ns: str, kind: str, name: str) -> int:
    api = sim.api_client()
    apps = client.AppsV1Api(api)
    read = (
        apps.read_namespaced_deployment_scale
        if kind == "Deployment"
        else apps.read_namespaced_stateful_set_scale
    )
    value = read(name, ns).spec.replicas
    api.close()
    return int(value)


def send(
    api: client.ApiClient,
    method: str,
    path: str,
    body: Any,
    content_type: str = "application/json",
    query: list[tuple[str, str]] | None = None,
) -> Any:
    """A body sent as it is through the official client's own transport (its models, pydantic,
    refuse what the API server takes, such as a JSON number for a quantity): the parsed answer
    of a 2xx, ApiException otherwise."""
    verb, url, headers, data, _ = api.param_serialize(
        method,
        path,
        query_params=query or [],
        header_params={"Content-Type": content_type, "Accept": "application/json"},
        body=body,
        auth_settings=["BearerToken"],
    )
    resp = api.call_api(verb, url, headers, data)
    resp.read()
    if resp.status >= 400:
        raise ApiException(http_resp=resp)
    return api.response_deserialize(resp, {"2XX": "object"}).data
