"""The workload page shows the conditions of its recommendation (app.core.conditions), and a
workload known only by its conditions (a policy's target without pods) has a page too."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from flask import Flask
from flask.testing import FlaskClient

from app.core.conditions import RECOMMENDER_TYPES, UPDATER_TYPES, Condition
from app.core.workload_key import WorkloadKey
from app.store.conditions import save_conditions
from app.store.extensions import db
from tests.support.usage import seed


def shown(html: str) -> list[tuple[str, str]]:
    return re.findall(r'<tr class="condition[^"]*" data-type="(\w+)" data-status="(\w+)">', html)


def test_the_workload_page_lists_its_conditions(app: Flask, client: FlaskClient) -> None:
    seed()
    now = datetime(2024, 7, 4, 12, 30, tzinfo=UTC)
    web = WorkloadKey("shop", "Deployment", "web")
    save_conditions(
        db.session,
        RECOMMENDER_TYPES,
        {
            web: [
                Condition("RecommendationProvided", "True"),
                Condition("LimitedByPolicy", "True", "ContainerPolicy", "app: cpu <capped>"),
            ]
        },
        now,
    )
    save_conditions(
        db.session,
        UPDATER_TYPES,
        {web: [Condition("HeldBackByBudget", "True", "MinReplicas")]},
        now,
    )
    html = client.get("/dashboard/workloads/shop/Deployment/web").get_data(as_text=True)
    assert shown(html) == [
        ("RecommendationProvided", "True"),
        ("LimitedByPolicy", "True"),
        ("HeldBackByBudget", "True"),
    ]
    assert "app: cpu &lt;capped&gt;" in html and "2024-07-04 12:30" in html


def test_a_target_without_pods_has_a_page_saying_why(app: Flask, client: FlaskClient) -> None:
    ghost = WorkloadKey("shop", "Deployment", "ghost")
    problem = "Cannot read target Deployment ghost: it does not exist"
    save_conditions(
        db.session,
        RECOMMENDER_TYPES,
        {ghost: [Condition("ConfigUnsupported", "True", "TargetUnsupported", problem)]},
        datetime.now(UTC),
    )
    resp = client.get("/dashboard/workloads/shop/Deployment/ghost")
    assert resp.status_code == 200
    html = resp.get_data(as_text=True)
    assert shown(html) == [("ConfigUnsupported", "True")] and problem in html
    assert client.get("/dashboard/workloads/shop/Deployment/other").status_code == 404


def test_a_workload_held_back_by_its_observation_window_is_shown_as_a_problem(
    app: Flask, client: FlaskClient
) -> None:
    seed()
    web = WorkloadKey("shop", "Deployment", "web")
    why = "web-1: container app OOM-killed after rightsizer's last change; resumes at ..."
    save_conditions(
        db.session,
        UPDATER_TYPES,
        {web: [Condition("HeldBackByObservationWindow", "True", "OOMKilledAfterChange", why)]},
        datetime.now(UTC),
    )
    html = client.get("/dashboard/workloads/shop/Deployment/web").get_data(as_text=True)
    assert ("HeldBackByObservationWindow", "True") in shown(html)
    assert '<tr class="condition bad" data-type="HeldBackByObservationWindow"' in html
    assert "OOMKilledAfterChange" in html
    assert "OOM-killed after rightsizer&#39;s last change" in html
