"""Amounts as text: the exact canonical form Kubernetes prints, and the readable one for people."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.quantity import (
    MAX_AMOUNT,
    amount,
    format_quantity,
    parse_quantity,
    readable,
    readable_unit,
)

RESOURCES = st.sampled_from(["cpu", "memory"])
AMOUNTS = st.integers(min_value=0, max_value=MAX_AMOUNT - 1)


def base_units(resource: str, text: str) -> int:
    """The amount `text` stands for, in millicores or bytes, exactly."""
    value = parse_quantity(text) * (1000 if resource == "cpu" else 1)
    assert value == int(value), text
    return int(value)


@pytest.mark.parametrize(
    ("resource", "value", "text"),
    [
        ("cpu", 203, "203m"),
        ("cpu", 1500, "1500m"),
        ("cpu", 2000, "2"),
        ("cpu", 20000, "20"),
        ("cpu", 1_000_000, "1k"),
        ("cpu", 0, "0"),
        ("cpu", -250, "-250m"),
        ("memory", 362 * 2**20, "362Mi"),
        ("memory", 2**30, "1Gi"),
        ("memory", 3 * 2**40, "3Ti"),
        ("memory", 1536, "1536"),  # not a whole Ki
        ("memory", 380258472, "380258472"),  # no power of 1024 divides it: plain bytes
        ("memory", 512, "512"),
        ("memory", 1000, "1k"),  # below 1024: DecimalSI, as apimachinery prints it
        ("memory", -(2**20), "-1Mi"),
    ],
)
def test_the_exact_form_is_the_one_kubernetes_prints(resource: str, value: int, text: str) -> None:
    assert format_quantity(resource, value) == text


@pytest.mark.parametrize(
    ("resource", "value", "text"),
    [
        ("memory", 380258472, "363Mi"),  # 362.65Mi, rounded up
        ("memory", 379584512, "362Mi"),  # already whole
        ("memory", 2**30 - 5, "1Gi"),  # 1024Mi after rounding is 1Gi
        ("memory", 1536, "2Ki"),
        ("memory", 100, "100"),
        ("memory", 1.5e9, "1431Mi"),
        ("cpu", 203, "203m"),
        ("cpu", 1500, "1500m"),
        ("cpu", 2000, "2"),
        ("cpu", 202.2, "203m"),
    ],
)
def test_readable_rounds_memory_up_to_a_whole_unit(resource: str, value: float, text: str) -> None:
    assert readable(resource, value) == text


@pytest.mark.parametrize("resource", ["cpu", "memory"])
def test_unbounded_and_unknown_amounts_read_unknown(resource: str) -> None:
    # what an upper bound without history saturates at, as stored and as pods may carry it
    assert readable(resource, MAX_AMOUNT) == "unknown"
    assert readable(resource, amount(resource, "8Ei")) == "unknown"
    assert readable(resource, None) == "unknown"
    assert readable(resource, float("nan")) == "unknown"


@given(RESOURCES, st.integers(min_value=-MAX_AMOUNT + 1, max_value=MAX_AMOUNT - 1))
def test_the_exact_form_parses_back_to_the_amount(resource: str, value: int) -> None:
    assert base_units(resource, format_quantity(resource, value)) == value


@given(RESOURCES, AMOUNTS)
def test_readable_is_never_below_the_amount_and_within_one_unit(resource: str, value: int) -> None:
    text, unit = readable(resource, value), readable_unit(resource, value)
    if value + unit > MAX_AMOUNT:  # rounding up reaches int64: unbounded
        assert text in ("unknown", format_quantity(resource, value))
        return
    shown = base_units(resource, text)
    assert value <= shown < value + unit


@given(RESOURCES, st.integers(min_value=-MAX_AMOUNT + 1, max_value=-1))
def test_readable_rounds_a_negative_difference_towards_plus_infinity(
    resource: str, value: int
) -> None:
    shown = base_units(resource, readable(resource, value))
    assert value <= shown < value + readable_unit(resource, -value)


@given(AMOUNTS)
def test_readable_memory_is_short(value: int) -> None:
    # at most 5 digits before the suffix above 1Ki: never "380258472" or "8.39e+06Ti"
    text = readable("memory", value)
    assert text == "unknown" or text[-2:] in ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei") or value < 1024
    assert len(text.rstrip("KMGTPEi")) <= 7


def test_amounts_must_be_whole_numbers() -> None:
    with pytest.raises(ValueError, match="whole number"):
        format_quantity("memory", 1.5)  # type: ignore[arg-type]
