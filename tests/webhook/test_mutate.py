"""POST /mutate through the Flask test client, with policies and recommendations in the database
(SQLite and PostgreSQL): answers, patches, failing open, and bad requests."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import text

from app.store.extensions import db
from app.webhook import webhook_of
from app.webhook.review import MAX_BODY_BYTES
from tests.support.pods import amounts, apply_strictly, assert_valid_pod, container, pod
from tests.support.reviews import (
    MI,
    UID,
    add_policy,
    add_recommendation,
    app_pod,
    metric,
    patch_of,
    post,
    refresh,
    review,
)


@pytest.mark.parametrize("version", ["admission.k8s.io/v1", "admission.k8s.io/v1beta1"])
def test_patches_a_pod_and_echoes_version_kind_and_uid(
    app: Flask, client: FlaskClient, version: str
) -> None:
    add_policy()
    add_recommendation()
    refresh(app)
    before = metric("rightsizer_webhook_reviews_total", outcome="patched")
    p = app_pod()
    resp = post(client, review(p, version=version, uid="abc-123"))
    assert resp.status_code == 200
    body = resp.get_json()
    assert (body["apiVersion"], body["kind"]) == (version, "AdmissionReview")
    assert body["response"]["uid"] == "abc-123"
    assert body["response"]["allowed"] is True
    patched = apply_strictly(p, patch_of(body["response"]))
    assert_valid_pod(patched)
    c = patched["spec"]["containers"][0]
    assert amounts(c, "requests") == {"cpu": 250, "memory": 256 * MI}
    assert amounts(c, "limits") == {"cpu": 500, "memory": 256 * MI}
    assert metric("rightsizer_webhook_reviews_total", outcome="patched") == before + 1


def test_resubmitting_the_patched_pod_gives_no_patch(app: Flask, client: FlaskClient) -> None:
    add_policy()
    add_recommendation()
    refresh(app)
    p = app_pod()
    first = post(client, review(p)).get_json()["response"]
    again = post(client, review(apply_strictly(p, patch_of(first)))).get_json()["response"]
    assert again == {"uid": UID, "allowed": True}


def test_a_pod_already_at_its_recommendation_gets_no_patch(app: Flask, client: FlaskClient) -> None:
    add_policy()
    add_recommendation(cpu=1000, memory=1024 * MI)
    refresh(app)
    before = metric("rightsizer_webhook_reviews_total", outcome="unchanged")
    body = post(client, review(app_pod())).get_json()
    assert body["response"] == {"uid": UID, "allowed": True}
    assert metric("rightsizer_webhook_reviews_total", outcome="unchanged") == before + 1


def test_dry_run_is_answered_the_same(app: Flask, client: FlaskClient) -> None:
    add_policy()
    add_recommendation()
    refresh(app)
    real = post(client, review(app_pod())).get_json()
    dry = post(client, review(app_pod(), dry_run=True)).get_json()
    assert dry == real
    assert "patch" in dry["response"]


@pytest.mark.parametrize(
    "setup",
    [
        pytest.param({"update_mode": "Off"}, id="updateMode-Off"),
        pytest.param(
            {"container_policies": [{"containerName": "app", "mode": "Off"}]},
            id="container-mode-Off",
        ),
        pytest.param(
            {"container_policies": [{"containerName": "*", "controlledResources": []}]},
            id="no-controlled-resources",
        ),
        pytest.param({"namespace": "other"}, id="policy-of-another-namespace"),
        pytest.param(
            {"target_kind": "Deployment", "target_name": "api"}, id="policy-of-another-workload"
        ),
    ],
)
def test_off_and_unrelated_policies_leave_the_pod_alone(
    app: Flask, client: FlaskClient, setup: dict[str, Any]
) -> None:
    add_policy(**setup)
    add_recommendation()
    refresh(app)
    assert post(client, review(app_pod())).get_json()["response"] == {"uid": UID, "allowed": True}


def test_workload_policy_wins_over_namespace_policy(app: Flask, client: FlaskClient) -> None:
    add_policy(name="ns-default", update_mode="Recreate")
    add_policy(name="web-off", update_mode="Off", target_kind="Deployment", target_name="web")
    add_recommendation()
    refresh(app)
    assert post(client, review(app_pod())).get_json()["response"] == {"uid": UID, "allowed": True}


def test_cluster_default_policy_applies(app: Flask, client: FlaskClient) -> None:
    add_policy(namespace="*", name="everywhere")
    add_recommendation()
    refresh(app)
    assert "patch" in post(client, review(app_pod())).get_json()["response"]


def test_resources_owned_by_another_controller_are_left_alone(
    app: Flask, client: FlaskClient
) -> None:
    add_policy()
    add_recommendation(conflicts={"cpu": "HorizontalPodAutoscaler web scales it on cpu"})
    refresh(app)
    p = app_pod()
    patched = apply_strictly(p, patch_of(post(client, review(p)).get_json()["response"]))
    c = patched["spec"]["containers"][0]
    assert amounts(c, "requests") == {"cpu": 1000, "memory": 256 * MI}


def test_a_bare_pod_without_a_controller_is_left_alone(app: Flask, client: FlaskClient) -> None:
    add_policy()
    add_recommendation()
    refresh(app)
    p = app_pod()
    del p["metadata"]["ownerReferences"]
    assert post(client, review(p)).get_json()["response"] == {"uid": UID, "allowed": True}


def test_other_operations_are_allowed_unchanged(app: Flask, client: FlaskClient) -> None:
    add_policy()
    add_recommendation()
    refresh(app)
    resp = post(client, review(None, operation="DELETE")).get_json()
    assert resp["response"] == {"uid": UID, "allowed": True}


def test_an_invalid_policy_row_is_skipped_not_fatal(app: Flask, client: FlaskClient) -> None:
    add_policy(name="broken", update_mode="Sometimes")
    add_policy(namespace="*", name="everywhere")
    add_recommendation()
    refresh(app)
    assert "patch" in post(client, review(app_pod())).get_json()["response"]


def test_empty_cache_allows_without_patch_and_counts_it(
    app: Flask, client: FlaskClient, caplog: pytest.LogCaptureFixture
) -> None:
    add_policy()
    add_recommendation()  # in the database, but the cache was never loaded
    before = metric("rightsizer_webhook_failed_open_total", reason="cache_empty")
    for _ in range(3):
        resp = post(client, review(app_pod()))
        assert resp.status_code == 200
        assert resp.get_json()["response"] == {"uid": UID, "allowed": True}
    assert metric("rightsizer_webhook_failed_open_total", reason="cache_empty") == before + 3
    warnings = [r for r in caplog.records if "cache empty" in r.getMessage()]
    assert len(warnings) == 1  # not one line per pod


def test_database_outage_serves_the_last_snapshot_until_it_is_stale(
    app: Flask, client: FlaskClient
) -> None:
    add_policy()
    add_recommendation()
    refresh(app)
    cache = webhook_of(app).cache
    db.session.execute(text("DROP TABLE recommendations"))  # every later load fails
    db.session.commit()
    failed = metric("rightsizer_webhook_cache_refreshes_total", result="failed")
    assert cache.refresh() is False
    assert metric("rightsizer_webhook_cache_refreshes_total", result="failed") == failed + 1
    assert "patch" in post(client, review(app_pod())).get_json()["response"]

    snapshot = cache.snapshot
    assert snapshot is not None
    cache.clock = lambda: snapshot.loaded_at + cache.max_age + 1
    stale = metric("rightsizer_webhook_failed_open_total", reason="cache_stale")
    resp = post(client, review(app_pod()))
    assert resp.status_code == 200
    assert resp.get_json()["response"] == {"uid": UID, "allowed": True}
    assert metric("rightsizer_webhook_failed_open_total", reason="cache_stale") == stale + 1


def test_internal_error_allows_without_patch_and_counts_it(
    app: Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_policy()
    add_recommendation()
    refresh(app)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr("app.core.sizing.patch_cache.build_patch", broken)
    before = metric("rightsizer_webhook_failed_open_total", reason="internal_error")
    resp = post(client, review(app_pod()))
    assert resp.status_code == 200
    assert resp.get_json() == {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": UID, "allowed": True},
    }
    assert metric("rightsizer_webhook_failed_open_total", reason="internal_error") == before + 1


def _not_a_pod() -> dict[str, Any]:
    doc = review(app_pod())
    doc["request"]["resource"] = {"group": "apps", "version": "v1", "resource": "deployments"}
    doc["request"]["kind"] = {"group": "apps", "version": "v1", "kind": "Deployment"}
    return doc


def _without(path: str) -> dict[str, Any]:
    doc = review(app_pod())
    *parents, last = path.split(".")
    target = doc
    for p in parents:
        target = target[p]
    del target[last]
    return doc


def _with(path: str, value: Any) -> dict[str, Any]:
    doc = review(app_pod())
    *parents, last = path.split(".")
    target = doc
    for p in parents:
        target = target[p]
    target[last] = value
    return doc


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"this is not json", "not JSON"),
        (b"\xff\xfe\x00\x01", "not JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "not JSON"),
        (json.dumps([1, 2]).encode(), "JSON object"),
        (json.dumps(_with("kind", "ConfigMap")).encode(), "kind must be AdmissionReview"),
        (json.dumps(_with("apiVersion", "admission.k8s.io/v2")).encode(), "apiVersion"),
        (json.dumps(_without("request")).encode(), "request is missing"),
        (json.dumps(_without("request.uid")).encode(), "uid is missing"),
        (json.dumps(_with("request.uid", 42)).encode(), "uid is missing"),
        (json.dumps(_not_a_pod()).encode(), "pods only"),
        (json.dumps(_with("request.object", "pod")).encode(), "must be the pod"),
        (json.dumps(_with("request.object.spec", [])).encode(), "spec is not an object"),
        (json.dumps(_with("request.object.metadata", 7)).encode(), "metadata"),
        (
            json.dumps(_with("request.object.spec.containers", {"app": {}})).encode(),
            "not a list",
        ),
    ],
)
def test_malformed_reviews_get_400_with_a_json_error(
    app: Flask, client: FlaskClient, body: bytes, message: str
) -> None:
    add_policy()
    add_recommendation()
    refresh(app)
    resp = client.post("/mutate", data=body, content_type="application/json")
    assert resp.status_code == 400
    err = resp.get_json()
    assert err["error"] == "BadRequest"
    assert message in err["message"]


def test_oversized_body_gets_413(app: Flask, client: FlaskClient) -> None:
    refresh(app)
    doc = review(app_pod())
    doc["request"]["object"]["metadata"]["annotations"] = {"big": "x" * MAX_BODY_BYTES}
    resp = post(client, doc)
    assert resp.status_code == 413
    assert resp.get_json()["error"] == "RequestEntityTooLarge"


def test_oversized_body_without_content_length_gets_413(app: Flask) -> None:
    status, body = webhook_of(app).admit(b" " * (MAX_BODY_BYTES + 1))
    assert (status, body["error"]) == (413, "RequestEntityTooLarge")


def test_a_body_of_exactly_the_limit_is_read(app: Flask, client: FlaskClient) -> None:
    add_policy()
    add_recommendation()
    refresh(app)
    raw = json.dumps(review(app_pod())).encode()
    padded = raw + b" " * (MAX_BODY_BYTES - len(raw))
    resp = client.post("/mutate", data=padded, content_type="application/json")
    assert resp.status_code == 200
    assert "patch" in resp.get_json()["response"]


def test_get_is_not_allowed(client: FlaskClient) -> None:
    assert client.get("/mutate").status_code == 405


def test_a_limit_above_int64_saturates_instead_of_failing_the_review(
    app: Flask, client: FlaskClient
) -> None:
    # kube-apiserver accepts and stores 8Ei (2^63 bytes, one above int64); Quantity.Value()
    # saturates at int64 max, so the pod is sized like any other, its huge limit kept.
    add_policy(container_policies=[{"containerName": "*", "controlledValues": "RequestsOnly"}])
    add_recommendation()
    refresh(app)
    p = pod(container("app", {"cpu": "1", "memory": "1Gi"}, {"memory": "8Ei"}))
    resp = post(client, review(p))
    assert resp.status_code == 200, resp.get_json()
    patched = apply_strictly(p, patch_of(resp.get_json()["response"]))
    c = patched["spec"]["containers"][0]
    assert amounts(c, "requests") == {"cpu": 250, "memory": 256 * MI}
    assert c["resources"]["limits"] == {"memory": "8Ei"}


@pytest.mark.parametrize("namespace", ["kube-system", "rightsizer", "batch-jobs"])
def test_excluded_namespaces_are_skipped_even_when_the_configuration_sends_them(
    app: Flask, client: FlaskClient, namespace: str
) -> None:
    # A hand-edited or stale namespaceSelector must not let the webhook size these pods.
    hook = webhook_of(app)
    hook.excluded_namespaces = frozenset({"kube-system", "rightsizer", "batch-jobs"})
    add_policy(namespace="*")
    add_recommendation(workload=(namespace, "Deployment", "web"))
    add_recommendation()
    refresh(app)
    doc = review(pod(container("app", {"cpu": "1"}), namespace=namespace))
    doc["request"]["namespace"] = namespace
    assert post(client, doc).get_json()["response"] == {"uid": UID, "allowed": True}
    assert "patch" in post(client, review(app_pod())).get_json()["response"]


def test_excluded_namespaces_come_from_the_settings() -> None:
    from app import create_app

    app = create_app(
        {
            "TESTING": True,
            "SQLALCHEMY_DATABASE_URI": "sqlite://",
            "NAMESPACE": "rs",
            "EXCLUDED_NAMESPACES": frozenset({"batch"}),
        }
    )
    assert webhook_of(app).excluded_namespaces == frozenset({"kube-system", "rs", "batch"})


@pytest.mark.parametrize(
    ("requests", "limits", "where"),
    [
        ({"cpu": "-1", "memory": "1Gi"}, None, "requests.cpu: '-1' must not be negative"),
        ({"cpu": "abc"}, None, "requests.cpu: 'abc' is not a Kubernetes quantity"),
        ({"cpu": "1"}, {"memory": "-64Mi"}, "limits.memory: '-64Mi' must not be negative"),
        ({"cpu": "1"}, {"memory": "1.5.5"}, "limits.memory: '1.5.5' is not a Kubernetes quantity"),
    ],
)
def test_a_pod_with_an_invalid_quantity_is_allowed_unchanged_with_the_reason_audited(
    app: Flask,
    client: FlaskClient,
    requests: dict[str, str],
    limits: dict[str, str] | None,
    where: str,
) -> None:
    """Issue 50 item 4: mutating admission runs before validation, so kube-apiserver refuses such
    a pod itself, with its own message; an HTTP 400 from the webhook only made it log a webhook
    failure for every such pod."""
    add_policy()
    add_recommendation()
    refresh(app)
    before = metric("rightsizer_webhook_reviews_total", outcome="invalid_quantity")
    p = pod(container("sidecar", {"cpu": "100m"}), container("app", requests, limits))
    resp = post(client, review(p))
    assert resp.status_code == 200
    response = resp.get_json()["response"]
    assert response.keys() == {"uid", "allowed", "auditAnnotations"}  # no patch
    assert response["allowed"] is True
    reason = response["auditAnnotations"]["left-unchanged"]
    assert reason.startswith(f"invalid-quantity: spec.containers[1].resources.{where}")
    assert metric("rightsizer_webhook_reviews_total", outcome="invalid_quantity") == before + 1
