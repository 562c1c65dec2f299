"""kube-apiserver calls rightsizer's webhook for pods a real Deployment controller creates.

rightsizer registers its MutatingWebhookConfiguration with its own code (url and caBundle); the
real ReplicaSet controller creates the pods, kube-apiserver calls the webhook over verified TLS,
and the pods come out with the recommended requests. With rightsizer stopped, pods are still
created, as written (failurePolicy Ignore, the registered timeout).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from sqlalchemy.orm import Session

from app.core.recommend.array_model import ArrayModel
from app.core.workload_key import WorkloadKey
from app.store.recommendations import save_all
from app.store.results import results_from_model
from tests.realkube.cluster import RealCluster
from tests.realkube.serve import database_url, serving
from tests.support.json_bodies import plain
from tests.support.processes import AppProcess, recommendations, wait_for

NS, OWN_NS = "web", "rightsizer-webhook"
T0 = time.time() - 7200


def seed(db_url: str) -> None:
    """Two hours of samples of web/Deployment/web's container `app` saved as its
    recommendation, and a policy that applies it at admission (Initial)."""
    model = ArrayModel()
    key = WorkloadKey(NS, "Deployment", "web")
    for i in range(120):
        model.add_cpu(key, "web-0", "app", T0 + 60 * i, 0.4, 0.1)
        model.add_memory(key, "web-0", "app", T0 + 60 * i, 6e8)
    engine = sa.create_engine(db_url)
    with Session(engine) as session:
        now = datetime.fromtimestamp(T0 + 7200, UTC)
        save_all(session, results_from_model(model), now, batch_size=100)
        session.commit()
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO policies (name, namespace, target_kind, target_name, update_mode, "
                "container_policies, version, created_at, updated_at) VALUES "
                "('web', :ns, 'Deployment', 'web', 'Initial', '[]', 1, CURRENT_TIMESTAMP, "
                "CURRENT_TIMESTAMP)"
            ),
            {"ns": NS},
        )
    engine.dispose()


def deployment(replicas: int) -> dict[str, Any]:
    container = {
        "name": "app",
        "image": "registry.k8s.io/pause:3.10",
        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
    }
    return {
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [container]},
            },
        },
    }


def pod_requests(cluster: RealCluster) -> dict[str, dict[str, str]]:
    with cluster.api() as api:
        pods = client.CoreV1Api(api).list_namespaced_pod(NS, label_selector="app=web").items
    return {p.metadata.name: p.spec.containers[0].resources.requests for p in pods}


@pytest.fixture
def webhook_app(real_cluster: RealCluster, tmp_path: Path) -> Iterator[AppProcess]:
    with real_cluster.api() as api:
        try:
            client.CoreV1Api(api).create_namespace(plain({"metadata": {"name": NS}}))
        except ApiException as e:
            if e.status != 409:  # the cluster is the session's: an earlier test made it
                raise
    with serving(real_cluster, tmp_path, OWN_NS, "rightsizer-real") as app:
        seed(database_url(app))
        yield app


def test_pods_of_a_real_deployment_are_sized_and_never_blocked(
    real_cluster: RealCluster, webhook_app: AppProcess
) -> None:
    with real_cluster.api() as api:
        [hook] = (
            client.AdmissionregistrationV1Api(api)
            .read_mutating_webhook_configuration("rightsizer-real")
            .webhooks
        )
    assert hook.failure_policy == "Ignore"
    assert hook.client_config.url == f"https://localhost:{webhook_app.port}/mutate"
    target = wait_for(
        lambda: recommendations(webhook_app).get((NS, "Deployment", "web", "app")),
        30,
        "the seeded recommendation",
    )["target"]
    time.sleep(2)  # the webhook's cache refreshes every second
    with real_cluster.api() as api:
        client.AppsV1Api(api).create_namespaced_deployment(NS, plain(deployment(2)))
    sized = wait_for(
        lambda: (lambda r: r if len(r) == 2 else None)(pod_requests(real_cluster)),
        60,
        "two web pods",
    )
    assert all(r == target for r in sized.values()), (sized, target, webhook_app.log()[-3000:])
    assert target != {"cpu": "100m", "memory": "64Mi"}

    webhook_app.stop()
    started = time.monotonic()
    with real_cluster.api() as api:
        client.AppsV1Api(api).patch_namespaced_deployment_scale(
            "web", NS, {"spec": {"replicas": 3}}
        )
    after = wait_for(
        lambda: (lambda r: r if len(r) == 3 else None)(pod_requests(real_cluster)),
        60,
        "a third web pod with rightsizer stopped",
    )
    [new] = [r for name, r in after.items() if name not in sized]
    assert new == {"cpu": "100m", "memory": "64Mi"}  # as written: the webhook was not there
    assert time.monotonic() - started < 60


def invalid_pod(cpu: str) -> dict[str, Any]:
    """A pod as web's ReplicaSet would create it (so the webhook sizes it: the policy applies),
    with a CPU request kube-apiserver's validation refuses."""
    container = {
        "name": "app",
        "image": "registry.k8s.io/pause:3.10",
        "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}},
    }
    owner = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": "web-5d9c7b8f4",
        "uid": "0c4a3f3e-2b7e-4c38-9d4e-5f1f9b1a2c3d",
        "controller": True,
    }
    return {
        "metadata": {
            "name": f"bad-{cpu.strip('-')}",
            "labels": {"app": "web", "pod-template-hash": "5d9c7b8f4"},
            "ownerReferences": [owner],
        },
        "spec": {"containers": [container]},
    }


def test_a_pod_with_an_invalid_quantity_is_refused_by_kube_apiserver_not_the_webhook(
    real_cluster: RealCluster, webhook_app: AppProcess
) -> None:
    """Issue 50 item 4: the webhook answered HTTP 400, so kube-apiserver failed open past it (a
    webhook failure logged and audited per pod) before its validation refused the pod. Now the
    webhook allows it unchanged, saying why in an audit annotation, and only validation refuses."""
    wait_for(
        lambda: recommendations(webhook_app).get((NS, "Deployment", "web", "app")),
        30,
        "the seeded recommendation",
    )
    time.sleep(2)  # the webhook's cache refreshes every second
    with real_cluster.api() as api, pytest.raises(ApiException) as refused:
        client.CoreV1Api(api).create_namespaced_pod(NS, plain(invalid_pod("-1")))
    assert refused.value.status == 422
    assert "must be greater than or equal to 0" in refused.value.body
    [event] = [
        e
        for e in real_cluster.audit_events("admin")
        if e["verb"] == "create"
        and e["objectRef"].get("resource") == "pods"
        and e["objectRef"].get("name") == "bad-1"
    ]
    annotations = event.get("annotations", {})
    assert not [k for k in annotations if k.startswith("failed-open.")], annotations
    [reason] = [v for k, v in annotations.items() if k.endswith("/left-unchanged")]
    assert reason.startswith("invalid-quantity: spec.containers[0].resources.requests.cpu")
    assert "Traceback" not in webhook_app.log()
