"""A VerticalPodAutoscaler object becomes a policy document; what a policy cannot hold is named."""

from __future__ import annotations

from typing import Any

import pytest

from app.documents.policy import PolicyInvalid, parse_policy
from app.documents.vpa import policy_from_vpa

VPA: dict[str, Any] = {
    "apiVersion": "autoscaling.k8s.io/v1",
    "kind": "VerticalPodAutoscaler",
    "metadata": {"name": "web", "namespace": "shop"},
    "spec": {
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "updatePolicy": {"updateMode": "Auto", "minReplicas": 3, "evictionRequirements": []},
        "resourcePolicy": {
            "containerPolicies": [
                {"containerName": "app", "minAllowed": {"cpu": "100m"}, "oomBumpUpRatio": 2}
            ]
        },
        "recommenders": [{"name": "custom"}],
    },
}


def test_fields_map_one_to_one_and_the_rest_is_warned_about() -> None:
    doc, warnings = policy_from_vpa(VPA)
    assert doc == {
        "name": "web",
        "namespace": "shop",
        "target": {"kind": "Deployment", "name": "web"},
        "updateMode": "Auto",
        "minReplicas": 3,
        "evictionRequirements": [],  # VPA 1.7's, kept (issue 18)
        "containerPolicies": [{"containerName": "app", "minAllowed": {"cpu": "100m"}}],
    }
    assert parse_policy(doc).update_mode == "Recreate"  # VPA's Auto
    assert warnings == [
        "spec.resourcePolicy.containerPolicies[0].oomBumpUpRatio was left out (rightsizer sets "
        "it for the whole policy, from the `*` entry only)",
        "spec.recommenders[0].name 'custom' is not a rightsizer recommender "
        "(vpa, krr-simple, balanced); left out, so the policy uses vpa",
    ]


def test_a_vpa_without_namespace_or_update_policy_gets_vpas_defaults() -> None:
    doc, warnings = policy_from_vpa({"metadata": {"name": "web"}, "spec": {}})
    assert (doc["namespace"], doc["updateMode"], warnings) == ("default", "Recreate", [])


def test_a_vpa_the_api_would_refuse_is_refused() -> None:
    bad = {**VPA, "spec": {**VPA["spec"], "updatePolicy": {"updateMode": "Sometimes"}}}
    with pytest.raises(PolicyInvalid) as e:
        policy_from_vpa(bad)
    assert [err.field for err in e.value.errors] == ["updateMode"]


def test_the_integer_cpu_annotation_becomes_the_containers_integer_cpu() -> None:
    annotations = {
        "vpa-post-processor.kubernetes.io/app_integerCPU": "true",  # has an entry: gets the field
        "vpa-post-processor.kubernetes.io/sidecar_integerCPU": "true",  # has none: gets one
        "vpa-post-processor.kubernetes.io/other_integerCPU": "false",  # not opted in
        "example.com/app_integerCPU": "true",  # another prefix: not VPA's
    }
    vpa = {**VPA, "metadata": {**VPA["metadata"], "annotations": annotations}}
    doc, _ = policy_from_vpa(vpa)
    assert doc["containerPolicies"] == [
        {"containerName": "app", "minAllowed": {"cpu": "100m"}, "integerCPU": True},
        {"containerName": "sidecar", "integerCPU": True},
    ]
    cps = parse_policy(doc).container_policies
    assert [(c.container_name, c.integer_cpu) for c in cps] == [("app", True), ("sidecar", True)]


def test_integer_cpu_in_a_vpas_container_policy_is_not_a_vpa_field() -> None:
    cp = {"containerName": "app", "integerCPU": True}
    vpa = {**VPA, "spec": {"resourcePolicy": {"containerPolicies": [cp]}}}
    doc, warnings = policy_from_vpa(vpa)
    assert doc["containerPolicies"] == [{"containerName": "app"}]
    assert warnings == ["spec.resourcePolicy.containerPolicies[0].integerCPU was left out"]


@pytest.mark.parametrize(
    ("recommenders", "expected"),
    [
        (None, None),
        ([], None),
        ([{"name": "default"}], None),  # VPA's own recommender: vpa, the default
        ([{"name": "krr-simple"}], "krr-simple"),
        ([{"name": "balanced"}], "balanced"),
    ],
)
def test_spec_recommenders_picks_the_strategy(recommenders: Any, expected: str | None) -> None:
    spec: dict[str, Any] = {"targetRef": VPA["spec"]["targetRef"]}
    if recommenders is not None:
        spec["recommenders"] = recommenders
    doc, warnings = policy_from_vpa({"metadata": VPA["metadata"], "spec": spec})
    assert doc.get("recommender") == expected and warnings == []
    assert parse_policy(doc).recommender.name == (expected or "vpa")


def test_more_than_one_recommender_is_refused_as_vpa_refuses_it() -> None:
    spec = {**VPA["spec"], "recommenders": [{"name": "a"}, {"name": "b"}]}
    with pytest.raises(PolicyInvalid) as e:
        policy_from_vpa({**VPA, "spec": spec})
    assert [(err.field, err.message) for err in e.value.errors] == [
        ("spec.recommenders", "Too many: 2: must have at most 1 item")
    ]


def per_vpa(policy: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "resourcePolicy": {"containerPolicies": [policy]},
            **spec,
        },
    }


def test_vpas_per_vpa_settings_of_the_wildcard_entry_become_vpa_parameters() -> None:
    """VPA 1.7's containerPolicies oomBumpUpRatio, oomMinBumpUp (Quantities, read as VPA's
    recommender reads them: MilliValue() / 1000), memoryAggregationIntervalSeconds and -Count."""
    doc, warnings = policy_from_vpa(
        per_vpa(
            {
                "containerName": "*",
                "oomBumpUpRatio": "1.5",
                "oomMinBumpUp": "200Mi",
                "memoryAggregationIntervalSeconds": 43200,
                "memoryAggregationIntervalCount": 4,
            }
        )
    )
    assert warnings == []
    assert doc["recommenderParams"] == {
        "oomBumpUpRatio": 1.5,
        "oomMinBumpUpBytes": 200 * 2**20,
        "memoryAggregationIntervalSeconds": 43200,
        "memoryAggregationIntervalCount": 4,
    }
    assert doc["containerPolicies"] == [{"containerName": "*"}]
    strategy = parse_policy(doc).recommender
    assert strategy.params["oomMinBumpUpBytes"] == 200 * 2**20


def test_per_vpa_settings_vpa_would_refuse_are_refused_naming_the_parameter() -> None:
    with pytest.raises(PolicyInvalid) as e:
        policy_from_vpa(per_vpa({"oomBumpUpRatio": "900m"}))  # VPA: must be >= 1
    assert [err.field for err in e.value.errors] == ["recommenderParams.oomBumpUpRatio"]


def test_per_vpa_settings_another_strategy_has_not_are_left_out_and_named() -> None:
    doc, warnings = policy_from_vpa(
        per_vpa({"oomBumpUpRatio": 2}, recommenders=[{"name": "krr-simple"}])
    )
    assert "recommenderParams" not in doc
    assert warnings == [
        "spec.resourcePolicy.containerPolicies[0].oomBumpUpRatio was left out (recommender "
        "krr-simple has no such parameter)"
    ]
