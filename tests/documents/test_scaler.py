"""Scaler documents checked without a server: every bad field named, params as the job reads."""

from __future__ import annotations

from typing import Any

from app.documents.scaler import (
    normalized_params,
    validate_scaler,
    validate_scaler_params,
)

DNS: dict[str, Any] = {
    "name": "coredns",
    "target": {"namespace": "kube-system", "kind": "Deployment", "name": "coredns"},
    "params": {"linear": {"coresPerReplica": 256, "nodesPerReplica": 16}},
}


def fields(doc: dict[str, Any]) -> set[str]:
    return {e.field for e in validate_scaler(doc)}


def test_max_zero_means_no_maximum() -> None:
    assert validate_scaler_params({"linear": {"coresPerReplica": 2, "min": 3, "max": 0}}) == []


def test_a_good_document_has_no_errors() -> None:
    assert validate_scaler({**DNS, "nodeSelector": "pool=system", "enabled": False}) == []


def test_every_bad_field_is_named_at_once() -> None:
    doc = {
        "name": "Not A Name",
        "target": {"namespace": "kube-system", "kind": "DaemonSet", "name": "dns", "x": 1},
        "params": {"linear": {"coresPerReplica": -1}},
        "nodeSelector": "not a selector",
        "skipTaints": ["a=b", 3],
        "enabled": "yes",
        "behavior": {"scaleUp": "fast"},
        "colour": "blue",
    }
    assert fields(doc) >= {
        "name",
        "target.kind",
        "target.x",
        "params.linear.coresPerReplica",
        "nodeSelector",
        "skipTaints",
        "enabled",
        "colour",
    }
    assert any(f.startswith("behavior") for f in fields(doc))


def test_missing_params_and_target_are_required() -> None:
    assert fields({"name": "x"}) == {"target", "params"}


def test_bad_taint_is_named_by_its_index() -> None:
    assert fields({**DNS, "skipTaints": ["a=b:NoSchedule", "a:Sometimes"]}) == {"skipTaints[1]"}


def test_params_given_as_configmap_text_are_stored_decoded() -> None:
    text = '{"coresPerReplica": 2}'
    assert validate_scaler_params({"linear": text}) == []
    assert normalized_params({"linear": text}) == {"linear": {"coresPerReplica": 2}}
    assert normalized_params('{"ladder": {"coresToReplicas": [[1, 1]]}}') == {
        "ladder": {"coresToReplicas": [[1, 1]]}
    }
