"""The scaler codec (app.store.scaler_codec): a document stored as a row reads back as written
(params as the job reads them), and a second round trip changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from app.documents.scaler import validate_scaler
from app.store.models import Scaler
from app.store.scaler_codec import scaler_columns, scaler_document

DNS: dict[str, Any] = {
    "name": "coredns",
    "target": {"namespace": "kube-system", "kind": "Deployment", "name": "coredns"},
    "params": {"linear": {"coresPerReplica": 256, "nodesPerReplica": 16}},
}


def row(doc: dict[str, Any]) -> Scaler:
    """The row the store writes for `doc` (not added to any session)."""
    return Scaler(**scaler_columns(doc), id=1, version=1)


@pytest.mark.parametrize(
    "extra",
    [
        {"skipTaints": ["a=b:NoSchedule"], "enabled": True},
        {"nodeSelector": "pool=system", "enabled": False},
        {"behavior": {"scaleDown": {"stabilizationWindowSeconds": 300}}, "enabled": True},
    ],
)
def test_a_row_reads_back_as_the_document_written(extra: dict[str, Any]) -> None:
    doc = {**DNS, **extra}
    assert validate_scaler(doc) == []
    back = scaler_document(row(doc))
    assert back == doc
    assert scaler_columns(back) == scaler_columns(doc)


def test_params_written_as_configmap_text_read_back_decoded_and_defaults_filled() -> None:
    doc = {**DNS, "params": {"linear": '{"coresPerReplica": 2}'}, "skipTaints": []}
    back = scaler_document(row(doc))
    assert back == {**DNS, "params": {"linear": {"coresPerReplica": 2}}, "enabled": True}
    assert scaler_document(row(back)) == back
