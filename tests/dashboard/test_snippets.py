"""The YAML a workload's page offers to copy (app.dashboard.snippets): what it says parses back
as the recommendation and as a policy rightsizer accepts."""

from __future__ import annotations

import pytest
import yaml
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import update

from app.core.quantity import amount
from app.dashboard.snippets import policy_document, resources_block
from app.documents.policy import parse_policy
from app.store.extensions import db
from app.store.models import Recommendation
from tests.support.usage import seed


def test_the_resources_block_holds_the_target_as_quantities() -> None:
    text = resources_block((1500, 363 * 2**20))
    assert text == "resources:\n  requests:\n    cpu: 1500m\n    memory: 363Mi\n"
    requests = yaml.safe_load(text)["resources"]["requests"]
    assert (amount("cpu", requests["cpu"]), amount("memory", requests["memory"])) == (
        1500,
        363 * 2**20,
    )


@pytest.mark.parametrize("name", ["web", "on", "null", "123", "1e3", "yes"])
@pytest.mark.parametrize("mode", ["Off", "Initial", "Recreate"])
def test_the_policy_is_accepted_whatever_yaml_would_make_of_the_names(name: str, mode: str) -> None:
    doc = policy_document("shop", "Deployment", name, [("app", ("cpu", "memory"))], mode)
    p = parse_policy(yaml.safe_load(doc))
    assert (p.name, p.target_name, p.update_mode) == (name, name, mode)
    [c] = p.container_policies
    assert (c.container_name, c.controlled_resources) == ("app", ("cpu", "memory"))


def test_a_resource_an_hpa_scales_on_is_left_out_and_none_left_turns_the_container_off() -> None:
    memory_only = policy_document("shop", "Deployment", "web", [("app", ("memory",))], "Initial")
    [c] = parse_policy(yaml.safe_load(memory_only)).container_policies
    assert c.controlled_resources == ("memory",)
    neither = policy_document("shop", "Deployment", "web", [("app", ())], "Initial")
    [c] = parse_policy(yaml.safe_load(neither)).container_policies
    assert c.mode == "Off"


def test_one_policy_holds_every_container() -> None:
    doc = policy_document(
        "shop",
        "Deployment",
        "checkout",
        [("app", ("cpu", "memory")), ("envoy", ("memory",))],
        "Initial",
    )
    p = parse_policy(yaml.safe_load(doc))
    assert [(c.container_name, c.controlled_resources) for c in p.container_policies] == [
        ("app", ("cpu", "memory")),
        ("envoy", ("memory",)),
    ]


def test_the_page_leaves_out_what_an_hpa_scales(app: Flask, client: FlaskClient) -> None:
    seed()
    db.session.execute(
        update(Recommendation)
        .where(Recommendation.namespace == "shop", Recommendation.name == "web")
        .values(conflicts={"cpu": "HorizontalPodAutoscaler web scales it on cpu"})
    )
    db.session.commit()
    html = client.get("/dashboard/workloads/shop/Deployment/web").get_data(as_text=True)
    assert "controlledResources: [memory]" in html
    assert "controlledResources: [cpu, memory]" not in html


def test_a_page_offers_one_policy_per_workload_and_none_where_it_cannot_act(
    app: Flask, client: FlaskClient
) -> None:
    from tests.support.reviews import add_recommendation

    add_recommendation("app", workload=("shop", "Deployment", "checkout"))
    add_recommendation("envoy", workload=("shop", "Deployment", "checkout"))
    html = client.get("/dashboard/workloads/shop/Deployment/checkout").get_data(as_text=True)
    assert html.count('class="snippet policy"') == 1
    assert html.count("name: checkout\n") == 1
    assert "containerName: app" in html and "containerName: envoy" in html
    assert html.count('class="snippet resources"') == 2
    add_recommendation("coredns", workload=("kube-system", "Deployment", "coredns"))
    html = client.get("/dashboard/workloads/kube-system/Deployment/coredns").get_data(as_text=True)
    assert 'class="snippet policy"' not in html and "updateMode" not in html
    assert "No policy to offer: namespace kube-system is never sized" in html
