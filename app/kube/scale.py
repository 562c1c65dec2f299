"""The `scale` subresource of a scaler's target, and Events on it.

Deployments, ReplicaSets and StatefulSets (apps/v1) and ReplicationControllers (v1) all expose
/scale, so one path serves every target kind; cluster-proportional-autoscaler never supported
StatefulSets, this does.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

log = logging.getLogger(__name__)
SCALABLE_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController")


class TargetMissing(LookupError):
    pass


class ScaleFailed(RuntimeError):
    """Any other failure on the target's scale subresource: 403, 409, 500, a dropped connection."""


def _failed(kind: str, namespace: str, name: str, e: Exception) -> Exception:
    if isinstance(e, ApiException):
        if e.status == 404:
            return TargetMissing(f"{kind} {namespace}/{name} not found")
        why = f"HTTP {e.status} {e.reason or ''}".rstrip()
    else:
        why = f"API server unreachable ({type(e).__name__})"
    return ScaleFailed(f"{kind} {namespace}/{name}: {why}")


class ScaleClient:
    def __init__(self, api: client.ApiClient) -> None:
        apps: Any = client.AppsV1Api(api)
        core: Any = client.CoreV1Api(api)
        self.core = core
        self._read = {
            "Deployment": apps.read_namespaced_deployment_scale,
            "ReplicaSet": apps.read_namespaced_replica_set_scale,
            "StatefulSet": apps.read_namespaced_stateful_set_scale,
            "ReplicationController": core.read_namespaced_replication_controller_scale,
        }
        self._patch = {
            "Deployment": apps.patch_namespaced_deployment_scale,
            "ReplicaSet": apps.patch_namespaced_replica_set_scale,
            "StatefulSet": apps.patch_namespaced_stateful_set_scale,
            "ReplicationController": core.patch_namespaced_replication_controller_scale,
        }

    def get_replicas(self, namespace: str, kind: str, name: str) -> int:
        if kind not in self._read:
            raise ValueError(f"kind {kind!r} has no scale subresource rightsizer supports")
        try:
            resp = self._read[kind](name, namespace, _preload_content=False)
        except (ApiException, urllib3.exceptions.HTTPError) as e:
            raise _failed(kind, namespace, name, e) from None
        return int((json.loads(resp.data).get("spec") or {}).get("replicas") or 0)

    def set_replicas(self, namespace: str, kind: str, name: str, replicas: int) -> None:
        try:
            self._patch[kind](name, namespace, {"spec": {"replicas": replicas}})
        except (ApiException, urllib3.exceptions.HTTPError) as e:
            raise _failed(kind, namespace, name, e) from None

    def record_event(self, namespace: str, kind: str, name: str, reason: str, message: str) -> None:
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        api_version = "v1" if kind == "ReplicationController" else "apps/v1"
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": f"{name}.", "namespace": namespace},
            "involvedObject": {
                "apiVersion": api_version,
                "kind": kind,
                "name": name,
                "namespace": namespace,
            },
            "reason": reason,
            "message": message[:1024],
            "type": "Normal",
            "source": {"component": "rightsizer"},
            "reportingComponent": "rightsizer",
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        try:
            self.core.create_namespaced_event(namespace, body)
        except ApiException as e:
            log.warning(
                "could not record event %s on %s %s/%s: HTTP %s",
                reason,
                kind,
                namespace,
                name,
                e.status,
            )


def list_nodes(api: client.ApiClient) -> list[dict[str, Any]]:
    """Every Node as raw JSON: one LIST, for on-demand views (the jobs use the informer)."""
    core: Any = client.CoreV1Api(api)
    resp = core.list_node(_preload_content=False)
    return list(json.loads(resp.data).get("items") or [])


def cluster_snapshot(api: client.ApiClient) -> tuple[list[Any], list[Any], list[Any]]:
    """Nodes, pods (not finished) and NodeMetrics as raw JSON, for the dashboard's nodes page."""
    core: Any = client.CoreV1Api(api)
    custom: Any = client.CustomObjectsApi(api)
    nodes = json.loads(core.list_node(_preload_content=False).data).get("items") or []
    pods = (
        json.loads(
            core.list_pod_for_all_namespaces(
                field_selector="status.phase!=Succeeded,status.phase!=Failed",
                _preload_content=False,
            ).data
        ).get("items")
        or []
    )
    try:
        resp = custom.list_cluster_custom_object(
            "metrics.k8s.io", "v1beta1", "nodes", _preload_content=False
        )
        metrics = json.loads(resp.data).get("items") or []
    except ApiException:
        metrics = []  # no metrics-server: requests are still worth showing
    return nodes, pods, metrics
