"""The namespaces and their labels: one LIST, for the recommender's opt-in tracking
(app.jobs.tracking, RIGHTSIZER_TRACK=labelled)."""

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
