"""AdmissionReviews as kube-apiserver sends them for pods, posted to `POST /mutate` through the
Flask test client, and the policy and recommendation rows the webhook answers from."""

from __future__ import annotations

import base64
import json
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from prometheus_client import REGISTRY

from app.store.extensions import db
from app.store.models import Policy as PolicyRow
from app.store.models import Recommendation as RecommendationRow
from app.webhook import webhook_of
from tests.support.pods import container, pod

MI = 1024 * 1024
UID = "705ab4f5-6393-11e8-b7cc-42010a800002"


def review(
    obj: dict[str, Any] | None,
    *,
    version: str = "admission.k8s.io/v1",
    uid: str = UID,
    operation: str = "CREATE",
    dry_run: bool = False,
) -> dict[str, Any]:
    """An AdmissionReview as kube-apiserver sends it for a pod."""
    gvk = {"group": "", "version": "v1", "kind": "Pod"}
    return {
        "apiVersion": version,
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": gvk,
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "requestKind": gvk,
            "requestResource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": "shop",
            "operation": operation,
            "userInfo": {"username": "system:serviceaccount:kube-system:replicaset-controller"},
            "object": obj,
            "oldObject": None,
            "dryRun": dry_run,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
        },
    }


def add_policy(update_mode: str = "Recreate", **fields: Any) -> None:
    fields.setdefault("name", "web")
    fields.setdefault("namespace", "shop")
    db.session.add(PolicyRow(update_mode=update_mode, **fields))
    db.session.commit()


def add_recommendation(
    container_name: str = "app",
    cpu: int = 250,
    memory: int = 256 * MI,
    workload: tuple[str, str, str] = ("shop", "Deployment", "web"),
    **fields: Any,
) -> None:
    ns, kind, name = workload
    db.session.add(
        RecommendationRow(
            namespace=ns,
            kind=kind,
            name=name,
            container=container_name,
            target_cpu=cpu,
            target_memory=memory,
            lower_bound_cpu=cpu // 2,
            lower_bound_memory=memory // 2,
            upper_bound_cpu=cpu * 2,
            upper_bound_memory=memory * 2,
            uncapped_target_cpu=cpu,
            uncapped_target_memory=memory,
            **fields,
        )
    )
    db.session.commit()


def refresh(app: Flask) -> None:
    assert webhook_of(app).cache.refresh()


def post(client: FlaskClient, doc: Any) -> Any:
    return client.post("/mutate", data=json.dumps(doc), content_type="application/json")


def patch_of(response: dict[str, Any]) -> list[dict[str, Any]]:
    assert response["patchType"] == "JSONPatch"
    return json.loads(base64.b64decode(response["patch"]))


def metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def app_pod() -> dict[str, Any]:
    return pod(container("app", {"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"}))
