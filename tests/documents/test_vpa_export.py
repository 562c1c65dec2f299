"""Policies as VerticalPodAutoscaler objects and back (app/documents/vpa.py): VPA 1.7's fields in
their places, and `policy export | policy import` of every field gives the same policy (a
hypothesis test over generated policy documents)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.policy import PLACEMENTS, TARGET_KINDS
from app.core.recommend.strategies import REGISTRY, Param
from app.core.recommend.strategies.base import ParamValue
from app.core.update_mode import UPDATE_MODES
from app.documents.policy import parse_policy
from app.documents.vpa import EXTRAS_ANNOTATION, NotExportable, policy_from_vpa, vpa_from_policy

FULL: dict[str, Any] = {
    "name": "checkout",
    "namespace": "shop",
    "target": {"kind": "Deployment", "name": "checkout"},
    "updateMode": "InPlace",
    "minReplicas": 1,
    "evictionRequirements": [
        {"resources": ["cpu", "memory"], "changeRequirement": "TargetHigherThanRequests"}
    ],
    "evictAfterOOMSeconds": 60,
    "inPlaceSkipDisruptionBudget": True,
    "startupBoost": {"cpu": {"type": "Factor", "factor": 3, "durationSeconds": 30}},
    "containerPolicies": [
        {
            "containerName": "app",
            "minAllowed": {"cpu": "100m"},
            "integerCPU": True,
            "startupBoost": {"cpu": {"type": "Quantity", "quantity": "500m"}},
        },
        {"containerName": "*", "mode": "Off", "integerCPU": True},
    ],
    "recommender": "krr-simple",
    "recommenderParams": {"cpuMin": 20},
}


def test_every_field_lands_where_vpa_has_it() -> None:
    vpa = vpa_from_policy({**FULL, "version": 3, "createdAt": "2024-07-04T00:00:00Z"})
    assert (vpa["apiVersion"], vpa["kind"]) == ("autoscaling.k8s.io/v1", "VerticalPodAutoscaler")
    assert vpa["metadata"]["name"] == "checkout" and vpa["metadata"]["namespace"] == "shop"
    spec = vpa["spec"]
    assert spec["targetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "checkout"}
    assert spec["updatePolicy"] == {
        "updateMode": "InPlace",
        "minReplicas": 1,
        "evictionRequirements": FULL["evictionRequirements"],
        "evictAfterOOMSeconds": 60,
    }
    assert spec["startupBoost"] == FULL["startupBoost"]
    app, star = spec["resourcePolicy"]["containerPolicies"]
    assert app == {
        "containerName": "app",
        "minAllowed": {"cpu": "100m"},
        "startupBoost": {"cpu": {"type": "Quantity", "quantity": "500m"}},
    }
    assert star == {"containerName": "*", "mode": "Off"}
    assert spec["recommenders"] == [{"name": "krr-simple"}]
    annotations = vpa["metadata"]["annotations"]
    assert annotations["vpa-post-processor.kubernetes.io/app_integerCPU"] == "true"
    assert json.loads(annotations[EXTRAS_ANNOTATION]) == {
        "inPlaceSkipDisruptionBudget": True,
        "integerCPU": ["*"],
        "recommenderParams": {"cpuMin": 20},
    }


def test_a_minimal_policy_says_its_mode_and_nothing_else() -> None:
    vpa = vpa_from_policy(
        {"name": "cron", "namespace": "ops", "target": {"kind": "CronJob", "name": "cron"}}
    )
    assert vpa["spec"] == {
        "targetRef": {"apiVersion": "batch/v1", "kind": "CronJob", "name": "cron"},
        "updatePolicy": {"updateMode": "Off"},  # VPA's default would be Recreate
    }
    assert "annotations" not in vpa["metadata"]


@pytest.mark.parametrize(
    "doc",
    [
        {"name": "default", "namespace": "*", "updateMode": "Off"},
        {"name": "shop-wide", "namespace": "shop", "updateMode": "Initial"},
    ],
)
def test_what_vpa_cannot_express_is_not_exported(doc: dict[str, Any]) -> None:
    with pytest.raises(NotExportable, match="needs a targetRef"):
        vpa_from_policy(doc)


def test_import_maps_vpa_1_7_fields_and_reports_the_rest() -> None:
    vpa = {
        "apiVersion": "autoscaling.k8s.io/v1",
        "kind": "VerticalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "updatePolicy": {
                "evictionRequirements": [
                    {"resources": ["cpu"], "changeRequirement": "TargetLowerThanRequests"}
                ],
                "evictAfterOOMSeconds": 120,
            },
            "startupBoost": {"cpu": {"type": "Factor", "factor": 2}},
            "resourcePolicy": {
                "containerPolicies": [
                    {"containerName": "app", "oomBumpUpRatio": "1.5", "startupBoost": {}}
                ]
            },
        },
    }
    doc, warnings = policy_from_vpa(vpa)
    assert doc["updateMode"] == "Recreate"  # VPA's default
    assert doc["evictionRequirements"][0]["changeRequirement"] == "TargetLowerThanRequests"
    assert doc["evictAfterOOMSeconds"] == 120
    assert doc["startupBoost"] == {"cpu": {"type": "Factor", "factor": 2}}
    assert doc["containerPolicies"] == [{"containerName": "app", "startupBoost": {}}]
    assert warnings == [
        "spec.resourcePolicy.containerPolicies[0].oomBumpUpRatio was left out (rightsizer sets "
        "it for the whole policy, from the `*` entry only)"
    ]


def test_a_garbled_extras_annotation_is_reported_not_fatal() -> None:
    vpa = vpa_from_policy(FULL)
    vpa["metadata"]["annotations"][EXTRAS_ANNOTATION] = "{nope"
    doc, warnings = policy_from_vpa(vpa)
    assert "inPlaceSkipDisruptionBudget" not in doc
    assert any(EXTRAS_ANNOTATION in w for w in warnings)


# --- the round trip, over generated policies ----------------------------------------------------

NAMES = st.from_regex(r"[a-z][a-z0-9-]{0,10}[a-z0-9]", fullmatch=True)
CPU = st.one_of(
    st.integers(1, 64).map(str),
    st.integers(10, 64000).map(lambda m: f"{m}m"),  # never below the generated minAllowed (10m)
    st.integers(1, 8),
)
MEMORY = st.one_of(st.integers(1, 4096).map(lambda m: f"{m}Mi"), st.integers(10**6, 10**10))
BOOST = st.one_of(
    st.builds(
        lambda f, d: {"cpu": {"type": "Factor", "factor": f, **d}},
        st.integers(1, 10),
        st.fixed_dictionaries({}, optional={"durationSeconds": st.integers(0, 3600)}),
    ),
    st.builds(
        lambda q, d: {"cpu": {"type": "Quantity", "quantity": q, **d}},
        CPU,
        st.fixed_dictionaries({}, optional={"durationSeconds": st.integers(0, 3600)}),
    ),
    st.just({}),
)


@st.composite
def container_policies(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    for name in draw(st.lists(st.sampled_from(["app", "envoy", "log", "*"]), unique=True)):
        cp: dict[str, Any] = {} if name == "*" and draw(st.booleans()) else {"containerName": name}
        cp.update(
            draw(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "mode": st.sampled_from(["Auto", "Off"]),
                        "controlledResources": st.lists(
                            st.sampled_from(["cpu", "memory"]), min_size=1, unique=True
                        ),
                        "controlledValues": st.sampled_from(["RequestsAndLimits", "RequestsOnly"]),
                        "integerCPU": st.booleans(),
                        "startupBoost": BOOST,
                        "minAllowed": st.fixed_dictionaries({}, optional={"cpu": st.just("10m")}),
                        "maxAllowed": st.fixed_dictionaries(
                            {}, optional={"cpu": CPU, "memory": MEMORY}
                        ),
                    },
                )
            )
        )
        out.append(cp)
    return out


@st.composite
def recommenders(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(st.sampled_from([None, *REGISTRY]))
    if name is None:
        return {}
    out: dict[str, Any] = {"recommender": name}
    params = REGISTRY[name].params
    chosen = draw(st.lists(st.sampled_from(params), unique=True)) if params else []
    if chosen:
        out["recommenderParams"] = {p.name: example_value(p) for p in chosen}
    return out


def example_value(p: Param) -> ParamValue:
    """The default, or for a parameter that falls back to a setting, a value it accepts (the
    maximum, else one above the minimum: percentiles given together stay in order)."""
    if p.default is not None:
        return p.default
    value = p.maximum if p.maximum is not None else (p.minimum or 0) + 1
    return p.kind(value)


NODE_LABELS = ["node.kubernetes.io/instance-type", "pool", "example.com/node-group"]


@st.composite
def policies(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(NAMES)
    doc: dict[str, Any] = {
        "name": name,
        "namespace": draw(NAMES),
        "target": {"kind": draw(st.sampled_from(TARGET_KINDS)), "name": draw(NAMES)},
    }
    doc.update(
        draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "updateMode": st.sampled_from([*UPDATE_MODES, "Auto"]),
                    "minReplicas": st.integers(1, 2**31 - 1),
                    "evictionRequirements": st.lists(
                        st.fixed_dictionaries(
                            {
                                "resources": st.lists(
                                    st.sampled_from(["cpu", "memory"]), min_size=1, unique=True
                                ),
                                "changeRequirement": st.sampled_from(
                                    ["TargetHigherThanRequests", "TargetLowerThanRequests"]
                                ),
                            }
                        ),
                        max_size=2,
                    ),
                    "evictAfterOOMSeconds": st.integers(1, 2**31 - 1),
                    "inPlaceSkipDisruptionBudget": st.booleans(),
                    "startupBoost": BOOST,
                    "containerPolicies": container_policies(),
                },
            )
        )
    )
    doc.update(draw(recommenders()))
    if doc["target"]["kind"] == "DaemonSet" and draw(st.booleans()):
        doc["nodeGroupLabel"] = draw(st.sampled_from(NODE_LABELS))
    if draw(st.booleans()):
        doc["placement"] = draw(st.sampled_from(PLACEMENTS))
    return doc


@settings(max_examples=300, deadline=None)
@given(policies())
def test_export_then_import_gives_the_same_policy(doc: dict[str, Any]) -> None:
    before = parse_policy(doc)
    text = yaml.safe_dump(vpa_from_policy(doc), sort_keys=False)  # what `policy export` prints
    back, warnings = policy_from_vpa(yaml.safe_load(text))
    assert warnings == []
    assert parse_policy(back) == before


def test_a_fleet_policys_clusters_travel_in_the_extras_annotation() -> None:
    doc = {
        "name": "web",
        "namespace": "shop",
        "target": {"kind": "Deployment", "name": "web"},
        "updateMode": "Initial",
        "containerPolicies": [],
        "clusters": {"selector": {"matchLabels": {"env": "prod"}}},
    }
    vpa = vpa_from_policy(doc)
    extras = json.loads(vpa["metadata"]["annotations"][EXTRAS_ANNOTATION])
    assert extras == {"clusters": doc["clusters"]}
    back, warnings = policy_from_vpa(vpa)
    assert back["clusters"] == doc["clusters"] and warnings == []
