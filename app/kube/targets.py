"""Whether a policy's namespace and workload exist now, asked of the API server at a policy write
(app.core.policy_warnings turns the answer into warnings).

Only calls the service account already makes: a LIST of namespaces, or of the workload's kind in
its namespace, narrowed by `metadata.name` (the recommender lists them all), and for a kind beyond
the six well-known ones its Scale (app.kube.scalable, as the recommender finds such targets). Any
failure is an answer too: the facts say the cluster could not tell, and why.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.core.policy_warnings import TargetFacts
from app.core.workload_key import WorkloadKey
from app.kube.scalable import ScalableKinds


def _listers(api: client.ApiClient) -> dict[str, Callable[..., Any]]:
    apps, batch = client.AppsV1Api(api), client.BatchV1Api(api)
    return {
        "Deployment": apps.list_namespaced_deployment,
        "StatefulSet": apps.list_namespaced_stateful_set,
        "DaemonSet": apps.list_namespaced_daemon_set,
        "ReplicaSet": apps.list_namespaced_replica_set,
        "Job": batch.list_namespaced_job,
        "CronJob": batch.list_namespaced_cron_job,
    }


def _named(name: str) -> dict[str, Any]:
    return {"field_selector": f"metadata.name={name}", "limit": 1, "_preload_content": False}


def _found(resp: Any) -> bool:
    return bool(json.loads(resp.data).get("items"))


def target_facts(api: client.ApiClient, namespace: str, target: WorkloadKey | None) -> TargetFacts:
    """Whether `namespace` exists and, when the policy names one, whether `target` does."""
    try:
        ns = _found(client.CoreV1Api(api).list_namespace(**_named(namespace)))
        if not ns or target is None:
            return TargetFacts(ns, None)
        lister = _listers(api).get(target.kind)
        if lister is not None:
            return TargetFacts(True, _found(lister(namespace, **_named(target.name))))
        scale = ScalableKinds(api).scale(namespace, target.group, target.resource_kind, target.name)
        return TargetFacts(True, scale is not None)
    except ApiException as e:
        return TargetFacts(unchecked=f"HTTP {e.status} {e.reason or ''}".rstrip())
    except (urllib3.exceptions.HTTPError, OSError, ValueError) as e:
        return TargetFacts(unchecked=f"API server unreachable ({type(e).__name__})")
