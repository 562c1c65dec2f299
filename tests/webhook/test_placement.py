"""POST /mutate for pods of a `placement: waterLevel` policy (SQLite and PostgreSQL): with the
water-level scheduler configured (RIGHTSIZER_PLACEMENT_SCHEDULER_NAME, as the chart sets it) a new
pod naming no scheduler or `default-scheduler` gets it in spec.schedulerName, recorded in its
annotation, the audit annotation and the audit trail; a pod naming another scheduler keeps it, a
second pass adds nothing, and without the setting or with `placement: default` nothing changes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from app.config import ConfigError, from_environment
from app.store.extensions import db
from app.store.models import AuditEvent
from app.webhook import webhook_of
from app.webhook.handler import Webhook
from app.webhook.placement import PLACEMENT_ANNOTATION
from tests.support.pods import amounts, apply_strictly, container, pod
from tests.support.reviews import (
    MI,
    add_policy,
    add_recommendation,
    app_pod,
    patch_of,
    post,
    refresh,
    review,
)

SCHEDULER = "rightsizer-water-level"
NOTE = f"waterLevel: policy shop/web set schedulerName {SCHEDULER}"


@pytest.fixture
def app_config() -> dict[str, object]:
    return {"PLACEMENT_SCHEDULER_NAME": SCHEDULER}


def answer(client: FlaskClient, p: dict[str, Any]) -> dict[str, Any]:
    resp = post(client, review(p))
    assert resp.status_code == 200
    return resp.get_json()["response"]


def admitted(client: FlaskClient, p: dict[str, Any]) -> dict[str, Any]:
    """The pod as kube-apiserver stores it after the webhook's patch."""
    body = answer(client, p)
    return apply_strictly(p, patch_of(body)) if "patch" in body else p


def with_scheduler(p: dict[str, Any], name: str) -> dict[str, Any]:
    p["spec"]["schedulerName"] = name
    return p


def test_a_water_level_pod_is_sized_and_sent_to_the_scheduler(
    app: Flask, client: FlaskClient
) -> None:
    add_policy("Initial", placement="waterLevel")
    add_recommendation(cpu=250, memory=256 * MI)
    refresh(app)
    body = answer(client, app_pod())
    assert body["auditAnnotations"] == {"placement": NOTE}
    stored = apply_strictly(app_pod(), patch_of(body))
    assert stored["spec"]["schedulerName"] == SCHEDULER
    assert stored["metadata"]["annotations"][PLACEMENT_ANNOTATION] == NOTE
    assert "rightsizer.io/updates" in stored["metadata"]["annotations"]  # sizing kept
    assert amounts(stored["spec"]["containers"][0], "requests") == {"cpu": 250, "memory": 256 * MI}


def test_kube_schedulers_default_name_is_replaced_another_scheduler_kept(
    app: Flask, client: FlaskClient
) -> None:
    add_policy("Initial", placement="waterLevel")
    add_recommendation()
    refresh(app)
    default = admitted(client, with_scheduler(app_pod(), "default-scheduler"))
    assert default["spec"]["schedulerName"] == SCHEDULER
    own = admitted(client, with_scheduler(app_pod(), "gpu-scheduler"))
    assert own["spec"]["schedulerName"] == "gpu-scheduler"
    assert PLACEMENT_ANNOTATION not in own["metadata"]["annotations"]
    assert "rightsizer.io/updates" in own["metadata"]["annotations"]  # still sized


def test_mode_off_places_without_sizing_on_a_pod_without_annotations(
    app: Flask, client: FlaskClient
) -> None:
    add_policy("Off", placement="waterLevel")
    add_recommendation()
    refresh(app)
    p = pod(container("app", {"cpu": "1", "memory": "1Gi"}))
    assert "annotations" not in p["metadata"]
    stored = admitted(client, p)
    assert stored["spec"]["schedulerName"] == SCHEDULER
    assert stored["metadata"]["annotations"] == {PLACEMENT_ANNOTATION: NOTE}
    assert stored["spec"]["containers"] == p["spec"]["containers"]  # requests untouched
    # pods with annotations of their own keep them
    kept = admitted(client, pod(container("app", {"cpu": "1"}), annotations={"team": "shop"}))
    assert kept["metadata"]["annotations"] == {"team": "shop", PLACEMENT_ANNOTATION: NOTE}


def test_a_second_pass_adds_nothing(app: Flask, client: FlaskClient) -> None:
    """reinvocationPolicy IfNeeded: the pod comes back with our changes; the answer is none."""
    add_policy("Initial", placement="waterLevel")
    add_recommendation()
    refresh(app)
    once = admitted(client, app_pod())
    body = answer(client, once)
    assert "patch" not in body and "auditAnnotations" not in body


def test_placement_default_leaves_the_scheduler_alone(app: Flask, client: FlaskClient) -> None:
    add_policy("Initial")
    add_recommendation()
    refresh(app)
    stored = admitted(client, app_pod())
    assert "schedulerName" not in stored["spec"]
    assert PLACEMENT_ANNOTATION not in stored["metadata"]["annotations"]


def test_without_the_scheduler_setting_nothing_is_placed(app: Flask, client: FlaskClient) -> None:
    add_policy("Off", placement="waterLevel")
    add_recommendation()
    refresh(app)
    hook = webhook_of(app)
    off = Webhook(hook.cache, autostart=False, mutations=hook.mutations)  # the default: ""
    status, doc = off.admit(json.dumps(review(app_pod())).encode())
    assert status == 200 and "patch" not in doc["response"]


def test_placed_pods_are_counted_in_the_audit_trail(app: Flask, client: FlaskClient) -> None:
    add_policy("Off", placement="waterLevel")
    add_recommendation()
    refresh(app)
    hook = webhook_of(app)
    assert hook.mutations is not None
    admitted(client, app_pod())
    admitted(client, app_pod())
    post(client, review(app_pod(), dry_run=True))  # a dry run counts nothing
    assert hook.mutations.flush() is True
    [event] = db.session.scalars(select(AuditEvent)).all()
    assert event.message == "gave 2 new pods the water-level scheduler"
    assert (event.details["pods"], event.details["placed"]) == (0, 2)


def test_an_invalid_scheduler_name_stops_start_up_naming_the_variable() -> None:
    with pytest.raises(ConfigError, match="RIGHTSIZER_PLACEMENT_SCHEDULER_NAME"):
        from_environment({"RIGHTSIZER_PLACEMENT_SCHEDULER_NAME": "Water_Level"})
    assert from_environment({}).webhook.placement_scheduler == ""
