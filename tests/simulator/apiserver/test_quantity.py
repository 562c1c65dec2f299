"""Unit tests of the quantity kube-apiserver stores for one sent (apiserver.quantity.stored) and of
a JSON number's text as Go reads it (apiserver.jsonnumbers). The expected texts are those
apimachinery pkg/api/resource/quantity.go gives by its code (ParseQuantity's fast path keeps a
text it calls canonical, MarshalJSON writes it, else CanonicalizeBytes)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.simulator.apiserver import fieldvalidation, quantity, schema
from app.simulator.apiserver.jsonnumbers import Literal, go_text, text_of

STORED = [
    ("500m", "500m"),
    ("0.5", "500m"),  # a denominator: scale -1 is no multiple of 3
    ("1.5", "1500m"),
    ("0.0015", "1500u"),
    ("1000", "1k"),  # ends in 000
    ("1000m", "1"),
    ("1024", "1024"),
    ("1", "1"),
    ("0", "0"),
    ("0m", "0"),
    ("-0", "0"),
    (" 500m ", "500m"),  # UnmarshalJSON trims spaces
    ("1024Mi", "1Gi"),  # 1024 & 7 == 0
    ("1.5Gi", "1536Mi"),
    ("3Mi", "3Mi"),
    ("0.5Ki", "512"),  # BinarySI below 1024 is written DecimalSI
    ("9Ei", "9223372036854775807"),  # BinarySI is capped at int64
    ("1e3", "1e3"),
    ("1E3", "1E3"),  # kept as sent, not "1e3"
    ("1.2e3", "1200"),
    ("5e-1", "500e-3"),
    ("1e-10", "1e-9"),  # rounded up to nano, whatever the format
    ("0.30000000000000001", "300000001n"),
    ("0.0000009999999999", "1u"),  # the rounding up carries
    # Kept as sent because the fast path's test calls them canonical:
    ("+1", "+1"),
    ("050m", "050m"),
    ("1.500", "1.500"),
    ("12345678901234567890", "12345678901234567890"),  # beyond int64: not capped (DecimalSI)
]


@pytest.mark.parametrize(("sent", "kept"), STORED)
def test_stored_is_parse_quantity_then_marshal_json(sent: str, kept: str) -> None:
    assert quantity.stored(sent) == kept


def test_stored_refuses_what_parse_quantity_refuses() -> None:
    with pytest.raises(ValueError):
        quantity.stored("lots")


@given(
    st.decimals(min_value=0, max_value=10**6, places=6, allow_nan=False),  # below the cap
    st.sampled_from(["", "m", "k", "Mi", "Gi", "e3", "e-2"]),
)
def test_the_stored_form_is_stored_unchanged_and_means_the_same(
    number: Decimal, suffix: str
) -> None:
    sent = f"{number}{suffix}"
    kept = quantity.stored(sent)
    assert quantity.stored(kept) == kept
    assert quantity.parse(kept) == quantity.parse(quantity.canonical(sent))


GO_FLOATS = [
    (0.5, "0.5"),
    (1000.0, "1000"),
    (1e20, "100000000000000000000"),
    (1e21, "1e+21"),
    (1e-6, "0.000001"),
    (1.5e-7, "1.5e-7"),
    (-0.25, "-0.25"),
]


@pytest.mark.parametrize(("value", "text"), GO_FLOATS)
def test_a_float64_is_written_as_go_encoding_json_writes_it(value: float, text: str) -> None:
    assert go_text(value) == text


def test_a_json_number_keeps_its_text_through_decoding() -> None:
    decoded = json.loads("[1e3, 1.500, 7]", parse_float=Literal)
    assert [text_of(v) for v in decoded] == ["1e3", "1.500", "7"]
    assert decoded == [1000.0, 1.5, 7]


def test_decoding_a_pod_writes_its_quantities_as_stored_and_keeps_other_numbers_plain() -> None:
    body = (
        '{"spec": {"terminationGracePeriodSeconds": 30, "containers": [{"name": "a", '
        '"resources": {"requests": {"cpu": 0.5, "memory": "1.5Gi"}, "limits": {"cpu": 1e3}}}], '
        '"volumes": [{"name": "v", "emptyDir": {"sizeLimit": 1000}}]}}'
    )
    pod, errors = fieldvalidation.check(
        schema.definitions(33), "io.k8s.api.core.v1.Pod", fieldvalidation.loads(body)
    )
    assert errors == []
    assert pod["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "500m", "memory": "1536Mi"},
        "limits": {"cpu": "1e3"},  # the number's text as sent: kept
    }
    assert pod["spec"]["volumes"][0]["emptyDir"]["sizeLimit"] == "1k"
    assert type(pod["spec"]["terminationGracePeriodSeconds"]) is int
