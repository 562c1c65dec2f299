"""Policy writes answer with warnings (HTTP `Warning: 299 - "text"`, as kube-apiserver) for a
target that cannot act or does not exist now, asked of a real (simulated) API server; the write
succeeds all the same."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from app.config import override
from app.simulator.testing import running_simulator


@pytest.fixture(scope="module")
def kubeconfig() -> Iterator[str]:
    with running_simulator() as sim:  # namespaces shop, data, tools; shop/frontend, ...
        yield sim.kubeconfig_path


@pytest.fixture
def cluster(app: Flask, kubeconfig: str) -> None:
    override(app, {"KUBECONFIG": kubeconfig, "EXCLUDED_NAMESPACES": "legacy"})


def policy(namespace: str, target: dict[str, Any] | None = None, name: str = "p") -> dict[str, Any]:
    doc: dict[str, Any] = {"name": name, "namespace": namespace, "updateMode": "Initial"}
    if target is not None:
        doc["target"] = target
    return doc


def warnings(resp: Any) -> list[str]:
    return resp.headers.getlist("Warning")


def test_a_target_that_cannot_act_or_does_not_exist_is_warned_of(
    client: FlaskClient, cluster: None
) -> None:
    cases = [
        (
            policy("kube-system", {"kind": "Deployment", "name": "coredns"}),
            "namespace kube-system is never sized (the webhook configuration always keeps it "
            "out): this policy will not act",
        ),
        (
            policy("legacy"),
            "namespace legacy is never sized (excluded by RIGHTSIZER_EXCLUDED_NAMESPACES): "
            "this policy will not act",
        ),
        (
            policy("shopp", {"kind": "Deployment", "name": "frontend"}),
            "namespace shopp does not exist: this policy acts once it is created",
        ),
        (
            policy("shop", {"kind": "Deployment", "name": "frontnd"}),
            "Deployment shop/frontnd does not exist: this policy acts once it is created",
        ),
        (
            policy("shop", {"kind": "StatefulSet", "name": "frontend"}),
            "StatefulSet shop/frontend does not exist: this policy acts once it is created",
        ),
    ]
    for doc, text in cases:
        resp = client.post("/api/v1/policies", json=doc)
        assert resp.status_code == 201, resp.get_json()  # written all the same
        assert warnings(resp) == [f'299 - "{text}"'], doc
        assert client.delete(f"/api/v1/policies/{doc['namespace']}/p").status_code == 204


def test_a_target_that_exists_gets_no_warning_and_updates_are_checked_too(
    client: FlaskClient, cluster: None
) -> None:
    for doc in (
        policy("shop", {"kind": "Deployment", "name": "frontend"}, "frontend"),
        policy("data", {"kind": "StatefulSet", "name": "postgres"}, "postgres"),
        policy("shop", {"selector": {"matchLabels": {"app": "web"}}}, "selected"),
        policy("tools", None, "all-of-tools"),
        policy("*", None, "default"),
    ):
        resp = client.post("/api/v1/policies", json=doc)
        assert resp.status_code == 201 and warnings(resp) == [], (doc, warnings(resp))
    # A merge patch that renames the target to one that does not exist is warned of.
    patched = client.patch(
        "/api/v1/policies/shop/frontend",
        json={"target": {"kind": "Deployment", "name": "gone"}},
        content_type="application/merge-patch+json",
    )
    assert patched.status_code == 200
    assert warnings(patched) == [
        '299 - "Deployment shop/gone does not exist: this policy acts once it is created"'
    ]


def test_without_a_cluster_the_write_says_the_target_was_not_checked(
    app: Flask, client: FlaskClient, tmp_path: Any
) -> None:
    override(app, {"KUBECONFIG": str(tmp_path / "missing")})
    resp = client.post("/api/v1/policies", json=policy("shop"))
    assert resp.status_code == 201
    [warning] = warnings(resp)
    assert warning.startswith('299 - "the target was not checked in the cluster: ')


def test_placement_water_level_without_the_scheduler_is_warned_of(
    app: Flask, client: FlaskClient, cluster: None
) -> None:
    resp = client.post("/api/v1/policies", json={**policy("shop"), "placement": "waterLevel"})
    assert resp.status_code == 201
    assert warnings(resp) == [
        '299 - "placement waterLevel changes nothing yet: no water-level scheduler is configured '
        "(RIGHTSIZER_PLACEMENT_SCHEDULER_NAME; the Helm chart's placement.scheduler.enabled)\""
    ]
    override(app, {"PLACEMENT_SCHEDULER_NAME": "rightsizer-water-level"})
    again = client.put(
        "/api/v1/policies/shop/p", json={**policy("shop"), "placement": "waterLevel"}
    )
    assert again.status_code == 200 and warnings(again) == []
    plain = client.post("/api/v1/policies", json=policy("shop", name="q"))
    assert warnings(plain) == []
