"""A policy's target: a workload of any scalable kind (kind, name, apiVersion) or a label selector,
validated with every bad field named, stored as written and read back unchanged."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest

from app.core.selectors import LabelSelector, Requirement
from app.documents.policy import PolicyInvalid, parse_policy, policy_from_row, row_document
from app.documents.target import target_columns
from app.documents.vpa import NotExportable, policy_from_vpa, vpa_from_policy

ROLLOUT = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "web"}
SELECTOR = {
    "matchLabels": {"tier": "web"},
    "matchExpressions": [
        {"key": "example.com/team", "operator": "In", "values": ["a", "b"]},
        {"key": "canary", "operator": "DoesNotExist"},
    ],
}


def policy(target: Any, namespace: str = "shop") -> dict[str, Any]:
    return {"name": "p", "namespace": namespace, "target": target, "updateMode": "Recreate"}


def errors_of(doc: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(PolicyInvalid) as e:
        parse_policy(doc)
    return {err.field: err.message for err in e.value.errors}


def test_a_scalable_kind_is_its_group_kind() -> None:
    p = parse_policy(policy(ROLLOUT))
    assert (p.target_kind, p.target_name, p.target_selector) == ("Rollout.argoproj.io", "web", None)
    dc = {"apiVersion": "apps.openshift.io/v1", "kind": "DeploymentConfig", "name": "api"}
    assert parse_policy(policy(dc)).target_kind == "DeploymentConfig.apps.openshift.io"
    rc = {"apiVersion": "v1", "kind": "ReplicationController", "name": "old"}
    assert parse_policy(policy(rc)).target_kind == "ReplicationController"  # core group: bare
    # The six keep their bare names, with or without their apiVersion.
    assert parse_policy(policy({"kind": "Deployment", "name": "web"})).target_kind == "Deployment"
    with_version = {"apiVersion": "batch/v1", "kind": "CronJob", "name": "x"}
    assert parse_policy(policy(with_version)).target_kind == "CronJob"


@pytest.mark.parametrize(
    ("target", "field", "message"),
    [
        ({"kind": "Rollout", "name": "web"}, "target.kind", "only with its target.apiVersion"),
        ({**ROLLOUT, "apiVersion": "Argo/V1"}, "target.apiVersion", "must be group/version"),
        ({**ROLLOUT, "kind": "roll out"}, "target.kind", "must be one of Deployment"),
        ({"apiVersion": "example.com/v1", "kind": "Deployment", "name": "x"}, "target.apiVersion",
         "a Deployment is apps/v1"),
        ({**ROLLOUT, "selector": SELECTOR}, "target.kind", "not both"),
        ({"selector": "tier=web"}, "target.selector", "must be an object"),
        ({"selector": {"matchLabels": {"tier": 3}}}, "target.selector.matchLabels.tier",
         "must be a string"),
        ({"selector": {"matchLabels": {"-bad": "x"}}}, "target.selector.matchLabels.-bad",
         "qualified name"),
        ({"selector": {"matchLabels": {"tier": "-x"}}}, "target.selector.matchLabels.tier",
         "a label value"),
        ({"selector": {"matchExpressions": [{"key": "a", "operator": "In"}]}},
         "target.selector.matchExpressions[0].values",
         "must be specified when `operator` is 'In' or 'NotIn'"),
        ({"selector": {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}},
         "target.selector.matchExpressions[0].values",
         "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
        ({"selector": {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}},
         "target.selector.matchExpressions[0].operator", "not a valid selector operator"),
        ({"selector": {"matchLabel": {}}}, "target.selector.matchLabel", "unknown field"),
        ({"selector": {"matchExpressions": [{"key": "a/b/c", "operator": "Exists"}]}},
         "target.selector.matchExpressions[0].key", "DNS subdomain"),
    ],
)  # fmt: skip
def test_bad_targets_are_named(target: dict[str, Any], field: str, message: str) -> None:
    errors = errors_of(policy(target))
    assert field in errors, errors
    assert message in errors[field]


def test_a_selector_parses_to_its_requirements_and_may_be_a_cluster_default() -> None:
    p = parse_policy(policy({"selector": SELECTOR}))
    assert p.target_kind is None
    assert p.target_selector == LabelSelector(
        (
            Requirement("tier", "In", frozenset({"web"})),
            Requirement("example.com/team", "In", frozenset({"a", "b"})),
            Requirement("canary", "DoesNotExist"),
        )
    )
    assert parse_policy(policy({"selector": SELECTOR}, "*")).target_selector is not None
    assert "target" in errors_of(policy(ROLLOUT, "*"))


@dataclass
class Row:
    """The columns of a stored policy (app.models.Policy's)."""

    name: str
    namespace: str
    target_kind: str | None
    target_name: str | None
    target_options: dict[str, Any] | None
    update_mode: str = "Recreate"
    min_replicas: int | None = None
    container_policies: list[dict[str, Any]] | None = None
    update_options: dict[str, Any] | None = None
    recommender: str | None = None
    recommender_params: dict[str, Any] | None = None
    node_group_label: str | None = None
    placement: str | None = None
    clusters: dict[str, Any] | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    id: int = 1


@pytest.mark.parametrize("target", [ROLLOUT, {"selector": SELECTOR}, {"kind": "Job", "name": "j"}])
def test_a_stored_target_reads_back_as_written(target: dict[str, Any]) -> None:
    doc = policy(target)
    row = Row("p", "shop", **target_columns(doc))
    assert row_document(row)["target"] == target  # type: ignore[arg-type]
    assert policy_from_row(row) == parse_policy(doc, id_=1)  # type: ignore[arg-type]


def test_vpa_import_keeps_a_scalable_targets_api_version_and_export_gives_it_back() -> None:
    vpa = {
        "apiVersion": "autoscaling.k8s.io/v1",
        "kind": "VerticalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"targetRef": ROLLOUT, "updatePolicy": {"updateMode": "Recreate"}},
    }
    doc, _ = policy_from_vpa(vpa)
    assert doc["target"] == ROLLOUT
    assert vpa_from_policy(doc)["spec"]["targetRef"] == ROLLOUT
    with pytest.raises(NotExportable, match="a selector policy"):
        vpa_from_policy(policy({"selector": SELECTOR}))
