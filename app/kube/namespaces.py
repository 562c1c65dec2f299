"""The namespaces and their labels: one LIST, for the recommender's opt-in tracking
(app.jobs.tracking, RIGHTSIZER_TRACK=labelled); and the cluster's identity, the kube-system
namespace's uid (app.store.clusters)."""

from __future__ import annotations

import json
from typing import Any

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException


class NamespacesUnknown(RuntimeError):
    """The API server could not list them (permission, down)."""


def namespace_labels(api: client.ApiClient) -> dict[str, dict[str, str]]:
    """Every namespace's labels by its name."""
    core: Any = client.CoreV1Api(api)
    try:
        resp = core.list_namespace(_preload_content=False)
    except (ApiException, urllib3.exceptions.HTTPError) as e:
        why = f"HTTP {e.status}" if isinstance(e, ApiException) else type(e).__name__
        raise NamespacesUnknown(why) from None
    items = json.loads(resp.data).get("items") or []
    out: dict[str, dict[str, str]] = {}
    for ns in items:
        meta = ns.get("metadata") or {}
        labels = meta.get("labels")
        out[str(meta.get("name", ""))] = labels if isinstance(labels, dict) else {}
    return out


def cluster_uid(api: client.ApiClient) -> str | None:
    """The kube-system namespace's uid: a cluster's stable identity (it lives as long as the
    cluster). None when the cluster has no such namespace or refuses to show it (HTTP 404, 403:
    no identity to read); NamespacesUnknown when it could not answer (down, 5xx)."""
    core: Any = client.CoreV1Api(api)
    try:
        resp = core.read_namespace("kube-system", _preload_content=False)
    except ApiException as e:
        if e.status in (403, 404):
            return None
        raise NamespacesUnknown(f"kube-system namespace unreadable: HTTP {e.status}") from None
    except urllib3.exceptions.HTTPError as e:
        why = type(e).__name__
        raise NamespacesUnknown(f"kube-system namespace unreadable: {why}") from None
    uid = (json.loads(resp.data).get("metadata") or {}).get("uid")
    return uid if isinstance(uid, str) and uid else None
