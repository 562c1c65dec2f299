"""A cluster-proportional-autoscaler ConfigMap becomes a scaler document the API accepts."""

from __future__ import annotations

from typing import Any

import pytest

from app.documents.cpa import ConfigMapRefused, scaler_from_configmap
from app.documents.scaler import validate_scaler

CONFIGMAP: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "dns-autoscaler", "namespace": "kube-system"},
    "data": {"ladder": '{"coresToReplicas": [[1, 1], [64, 3]], "nodesToReplicas": [[1, 1]]}'},
}


def test_the_params_text_becomes_json_and_the_document_is_valid() -> None:
    doc = scaler_from_configmap(CONFIGMAP, "kube-system/Deployment/coredns")
    assert doc == {
        "name": "dns-autoscaler",
        "target": {"namespace": "kube-system", "kind": "Deployment", "name": "coredns"},
        "params": {"ladder": {"coresToReplicas": [[1, 1], [64, 3]], "nodesToReplicas": [[1, 1]]}},
        "enabled": True,
    }
    assert validate_scaler(doc) == []


def test_the_name_given_wins_then_the_configmaps_then_the_targets() -> None:
    assert scaler_from_configmap(CONFIGMAP, "ns/Deployment/dns", "mine")["name"] == "mine"
    nameless = {**CONFIGMAP, "metadata": {}}
    assert scaler_from_configmap(nameless, "ns/Deployment/dns")["name"] == "dns"


@pytest.mark.parametrize(
    ("manifest", "target", "field", "message"),
    [
        ({"kind": "Secret"}, "ns/Deployment/dns", "manifest", "not a ConfigMap manifest"),
        ("text", "ns/Deployment/dns", "manifest", "not a ConfigMap manifest"),
        (CONFIGMAP, "ns/dns", "target", "expected namespace/Kind/name"),
        (CONFIGMAP, "ns//dns", "target", "expected namespace/Kind/name"),
        (
            {**CONFIGMAP, "data": {"linear": '{"coresPerReplica": -1}'}},
            "ns/Deployment/dns",
            "manifest",
            "data.linear.coresPerReplica",
        ),
        ({**CONFIGMAP, "data": {}}, "ns/Deployment/dns", "manifest", "data."),
    ],
)
def test_what_cannot_become_a_scaler_is_refused_saying_where(
    manifest: Any, target: str, field: str, message: str
) -> None:
    with pytest.raises(ConfigMapRefused, match=message) as e:
        scaler_from_configmap(manifest, target)
    assert e.value.field == field
