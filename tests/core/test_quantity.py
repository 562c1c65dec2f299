"""Kubernetes quantity parsing: every suffix, exponents, exactness and malformed input."""

from __future__ import annotations

from decimal import Decimal

import pytest

from app.core.quantity import amount, amount_float, ceil_scaled, parse_amount, parse_quantity
from app.core.resources import MAX_AMOUNT


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", "1"),
        ("3920m", "3.92"),
        ("100n", "0.0000001"),
        ("250u", "0.00025"),
        ("1.5k", "1500"),
        ("2M", "2000000"),
        ("3G", "3000000000"),
        ("4T", "4000000000000"),
        ("5P", "5000000000000000"),
        ("1E", "1000000000000000000"),  # a bare E is exa, not an exponent
        ("1Ki", "1024"),
        ("1Mi", "1048576"),
        ("1Gi", "1073741824"),
        ("1Ti", "1099511627776"),
        ("1Pi", "1125899906842624"),
        ("1Ei", "1152921504606846976"),
        ("1e3", "1000"),
        ("1E3", "1000"),
        ("5e-2", "0.05"),
        ("1.5e3", "1500"),
        ("2e+1", "20"),
        (".5", "0.5"),
        ("2.", "2"),
        ("+1", "1"),
        ("-1m", "-0.001"),
        ("0.5Gi", "536870912"),
    ],
)
def test_parses_every_suffix_and_exponent(text: str, expected: str) -> None:
    assert parse_quantity(text) == Decimal(expected)


def test_integers_are_accepted_as_plain_numbers() -> None:
    assert parse_quantity(4) == Decimal(4)


def test_long_values_stay_exact() -> None:
    # 35 significant digits: the default 28-digit decimal context would round these.
    assert parse_quantity("1.0000000000000000000000000000000001") == Decimal(
        "1.0000000000000000000000000000000001"
    )
    assert parse_quantity("1.0000000000000000000000000000000001k") == Decimal(
        "1000.0000000000000000000000000000001"
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        " 1",
        "1 ",
        "1 Gi",
        "e3",
        "1e",
        "1e1.5",
        "1.2.3",
        "--1",
        ".",
        "abc",
        "1Kb",
        "1ki",
        "1K",
        "1m1",
        "\u0663",  # ARABIC-INDIC DIGIT THREE: a Unicode digit, not an ASCII one
    ],
)
def test_rejects_malformed_quantities_naming_them(text: str) -> None:
    with pytest.raises(ValueError, match="not a Kubernetes quantity"):
        parse_quantity(text)


@pytest.mark.parametrize("text", ["8Ei", "1e19", "-1e19", "1e99999"])
def test_rejects_values_outside_int64(text: str) -> None:
    with pytest.raises(ValueError, match="out of range"):
        parse_quantity(text)


@pytest.mark.parametrize("value", [1.5, True, None, ["1"]])
def test_rejects_non_strings(value: object) -> None:
    with pytest.raises(ValueError, match="must be a string"):
        parse_quantity(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "power", "expected"),
    [
        ("3.92", 0, 4),
        ("3.92", 3, 3920),
        ("3.92", 9, 3_920_000_000),
        ("0.0000001", 0, 1),
        ("0.0000001", 9, 100),
        ("2", 0, 2),
        ("0", 0, 0),
        ("-0.5", 0, 0),
        ("1.0000000000000000000000000000000001", 0, 2),
        ("0.0000000001", 9, 1),  # below a nanocore still rounds up to one
    ],
)
def test_ceil_scaled_rounds_up_exactly(value: str, power: int, expected: int) -> None:
    assert ceil_scaled(Decimal(value), power) == expected


@pytest.mark.parametrize(
    ("resource", "text", "expected"),
    [
        ("cpu", "250m", 250),
        ("cpu", "1", 1000),
        ("cpu", 0.5, 500),  # a YAML number
        ("cpu", "1.0001", 1001),  # rounded up, as MilliValue() rounds
        ("cpu", "100n", 1),
        ("memory", "512Mi", 512 * 2**20),
        ("memory", "1.5", 2),
        ("memory", 3, 3),
        ("memory", "8Ei", MAX_AMOUNT),  # above int64: saturates, as Quantity.Value() does
        ("cpu", "9223372036854775807", MAX_AMOUNT),
        ("memory", "1e999", MAX_AMOUNT),
    ],
)
def test_amount_counts_as_kubernetes_and_saturates_above_int64(
    resource: str, text: object, expected: int
) -> None:
    assert amount(resource, text) == expected


@pytest.mark.parametrize("text", ["-1", " 1", "1K", "1 Gi", "", "abc", True, None, float("nan")])
def test_amount_refuses_what_kube_apiserver_refuses(text: object) -> None:
    with pytest.raises(ValueError):
        amount("memory", text)


def test_amount_float_keeps_the_precision_of_nanocores() -> None:
    assert amount_float("1500n") == pytest.approx(1.5e-6)
    assert amount_float("2Ki") == 2048.0


def test_parse_amount_is_amount_memoised_and_rejects_non_quantities() -> None:
    assert parse_amount("cpu", "250m") == amount("cpu", "250m") == 250
    assert parse_amount("memory", 0.5) == 1  # a YAML number, rounded up as amount does
    with pytest.raises(ValueError):
        parse_amount("cpu", True)
    with pytest.raises(ValueError):
        parse_amount("cpu", {"cpu": "1"})
    with pytest.raises(ValueError):
        parse_amount("memory", "12 Mi")
