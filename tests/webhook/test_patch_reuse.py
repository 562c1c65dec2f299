"""The webhook answers pods of one template from its patch cache (app.core.sizing.patch_cache):
the same answer as a fresh computation, and a new answer as soon as the database or the pod says
something else."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import update

from app.store.extensions import db
from app.store.models import Policy as PolicyRow
from app.store.models import Recommendation as RecommendationRow
from app.webhook import webhook_of
from tests.support.pods import amounts, apply_strictly
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


def sized(client: FlaskClient, uid: str = "a", cpu: str | None = None) -> dict[str, int]:
    p = app_pod()
    if cpu is not None:
        p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu
    response = post(client, review(p, uid=uid)).get_json()["response"]
    assert response["uid"] == uid
    patched = apply_strictly(p, patch_of(response)) if "patch" in response else p
    return amounts(patched["spec"]["containers"][0], "requests")


def test_pods_of_one_template_get_one_computed_patch(app: Flask, client: FlaskClient) -> None:
    add_policy()
    add_recommendation()
    refresh(app)
    patches = webhook_of(app).patches
    first = post(client, review(app_pod(), uid="one")).get_json()["response"]
    second = post(client, review(app_pod(), uid="two")).get_json()["response"]
    assert second == {**first, "uid": "two"}
    assert (patches.hits, patches.misses) == (1, 1)


def test_a_new_recommendation_or_policy_is_applied_at_once(app: Flask, client: FlaskClient) -> None:
    add_policy()
    add_recommendation()
    refresh(app)
    assert sized(client) == {"cpu": 250, "memory": 256 * MI}
    db.session.execute(update(RecommendationRow).values(target_cpu=400))
    db.session.commit()
    refresh(app)
    assert sized(client) == {"cpu": 400, "memory": 256 * MI}
    db.session.execute(update(PolicyRow).values(update_mode="Off"))
    db.session.commit()
    refresh(app)
    original = amounts(app_pod()["spec"]["containers"][0], "requests")
    assert sized(client) == original  # no patch under updateMode Off


def test_a_pod_with_other_requests_gets_its_own_patch(app: Flask, client: FlaskClient) -> None:
    add_policy()
    add_recommendation()
    refresh(app)
    assert sized(client)["cpu"] == 250
    assert sized(client, cpu="250m") == sized(client, cpu="0.25")  # the same amount
    assert webhook_of(app).patches.misses == 3  # three ways of writing a request: three entries
