"""The `scale` subresource of a scaler's target, and Events on it.

Deployments, ReplicaSets and StatefulSets (apps/v1) and ReplicationControllers (v1) all expose
/scale, so one path serves every target kind; cluster-proportional-autoscaler never supported
StatefulSets, this does.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.kube.events import event_body, object_reference

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
        self._seen: dict[tuple[str, str, str], dict[str, Any]] = {}
        self._patch = {
            "Deployment": apps.patch_namespaced_deployment_scale,
            "ReplicaSet": apps.patch_namespaced_replica_set_scale,
            "StatefulSet": apps.patch_namespaced_stateful_set_scale,
            "ReplicationController": core.patch_namespaced_replication_controller_scale,
        }

    def _scale(self, namespace: str, kind: str, name: str) -> dict[str, Any]:
        if kind not in self._read:
            raise ValueError(f"kind {kind!r} has no scale subresource rightsizer supports")
        try:
            resp = self._read[kind](name, namespace, _preload_content=False)
        except (ApiException, urllib3.exceptions.HTTPError) as e:
            raise _failed(kind, namespace, name, e) from None
        return self._remember(namespace, kind, name, json.loads(resp.data))

    def _remember(
        self, namespace: str, kind: str, name: str, scale: dict[str, Any]
    ) -> dict[str, Any]:
        # A Scale's metadata is its target's (name, namespace, uid, resourceVersion): what an
        # Event on the target refers to, as the target was when rightsizer last saw it.
        self._seen[(namespace, kind, name)] = scale.get("metadata") or {}
        return scale

    def get_replicas(self, namespace: str, kind: str, name: str) -> int:
        scale = self._scale(namespace, kind, name)
        return int((scale.get("spec") or {}).get("replicas") or 0)

    def set_replicas(self, namespace: str, kind: str, name: str, replicas: int) -> None:
        try:
            resp = self._patch[kind](
                name, namespace, {"spec": {"replicas": replicas}}, _preload_content=False
            )
        except (ApiException, urllib3.exceptions.HTTPError) as e:
            raise _failed(kind, namespace, name, e) from None
        try:
            self._remember(namespace, kind, name, json.loads(resp.data))
        except ValueError:
            self._seen.pop((namespace, kind, name), None)  # the next event reads it afresh

    def record_event(self, namespace: str, kind: str, name: str, reason: str, message: str) -> None:
        """A Normal Event on the target, referring to it by uid and resourceVersion (as of the
        last scale call, else one GET of its scale), so `kubectl describe` lists it."""
        api_version = "v1" if kind == "ReplicationController" else "apps/v1"
        meta = self._seen.get((namespace, kind, name))
        try:
            if meta is None:
                meta = self._scale(namespace, kind, name).get("metadata") or {}
        except (TargetMissing, ScaleFailed) as e:
            log.warning("could not record event %s: %s", reason, e)
            return
        ref = object_reference(api_version, kind, {**meta, "namespace": namespace, "name": name})
        try:
            self.core.create_namespaced_event(namespace, event_body(ref, reason, message))
        except (ApiException, urllib3.exceptions.HTTPError) as e:
            why = f"HTTP {e.status}" if isinstance(e, ApiException) else type(e).__name__
            log.warning(
                "could not record event %s on %s %s/%s: %s", reason, kind, namespace, name, why
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
