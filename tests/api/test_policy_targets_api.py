"""Policy targets over REST: a scalable kind with its apiVersion, a label selector (also for a
cluster default), kept as written through create, merge patch and read; bad ones 422 by field."""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

ROLLOUT = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "web"}
SELECTOR = {"matchLabels": {"tier": "web"}, "matchExpressions": [
    {"key": "canary", "operator": "DoesNotExist"}]}  # fmt: skip


def post(client: FlaskClient, doc: dict[str, Any]) -> Any:
    return client.post("/api/v1/policies", json=doc)


def test_a_rollout_target_and_a_selector_are_kept_as_written(client: FlaskClient) -> None:
    resp = post(client, {"name": "web", "namespace": "shop", "target": ROLLOUT})
    assert resp.status_code == 201, resp.get_json()
    assert client.get("/api/v1/policies/shop/web").get_json()["target"] == ROLLOUT
    resp = post(client, {"name": "tier-web", "namespace": "shop", "target": {"selector": SELECTOR}})
    assert resp.status_code == 201, resp.get_json()
    assert resp.get_json()["target"] == {"selector": SELECTOR}
    everywhere = {"name": "all-web", "namespace": "*", "target": {"selector": SELECTOR}}
    assert post(client, everywhere).status_code == 201
    # A merge patch may turn a selector policy into one naming a workload.
    patched = client.patch(
        "/api/v1/policies/shop/tier-web",
        json={"target": {"selector": None, "kind": "Deployment", "name": "front"}},
        content_type="application/merge-patch+json",
    )
    assert patched.status_code == 200, patched.get_json()
    assert patched.get_json()["target"] == {"kind": "Deployment", "name": "front"}


def test_bad_targets_are_refused_naming_the_field(client: FlaskClient) -> None:
    cases = [
        ({"kind": "Rollout", "name": "web"}, "target.kind"),
        ({**ROLLOUT, "apiVersion": "not a version"}, "target.apiVersion"),
        ({"selector": {"matchLabels": {"tier": "-web"}}}, "target.selector.matchLabels.tier"),
        ({"selector": SELECTOR, "kind": "Deployment"}, "target.kind"),
    ]
    for target, field in cases:
        resp = post(client, {"name": "bad", "namespace": "shop", "target": target})
        assert resp.status_code == 422, resp.get_json()
        fields = [d["field"] for d in resp.get_json()["details"]]
        assert field in fields, (target, fields)
    assert client.get("/api/v1/policies").get_json()["items"] == []
