"""JSON numbers with the text Go reads: a Quantity's UnmarshalJSON parses a number's literal
(apimachinery `pkg/api/resource/quantity.go`: `cpu: 0.5` is parsed as "0.5", `1e3` as "1e3"),
which Python's float would lose (1e3 is 1000.0).

A body decoded straight into Go's structs (a create or update, a JSON Patch's values, which
evanphx/json-patch keeps as raw messages) hands a Quantity the literal as sent: `loads` keeps it
on each float (`Literal`). A value that went through Go's `interface{}` first (a merge or
strategic merge patch, server-side apply, a webhook's patch) is a float64 written back by
`encoding/json` (encode.go floatEncoder): `go_text` writes it so. Pure.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any


class Literal(float):
    """A JSON float that remembers its text as sent."""

    text: str

    def __new__(cls, text: str) -> Literal:
        number = super().__new__(cls, text)
        number.text = text
        return number


def go_text(value: float) -> str:
    """A float64 as Go's encoding/json writes it: the shortest digits that read back the same
    (as Python's repr), positional unless below 1e-6 or from 1e21 on, where it is 'e' with the
    exponent's leading zero dropped (1e-07 -> 1e-7; 1e+21 stays)."""
    d = Decimal(repr(float(value))).normalize()
    magnitude = abs(d)
    if magnitude == 0 or Decimal("1e-6") <= magnitude < Decimal("1e21"):
        return format(d, "f")
    sign, digits, exp = d.as_tuple()
    assert isinstance(exp, int)
    text = "".join(map(str, digits))
    power = exp + len(digits) - 1
    mantissa = text[0] + (f".{text[1:]}" if len(text) > 1 else "")
    return f"{'-' if sign else ''}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}".replace(
        "e-0", "e-"
    )


def text_of(value: Any) -> str:
    """The text a Quantity's UnmarshalJSON parses for a decoded JSON number: the literal when it
    was kept, else Go's writing of an int64 or float64."""
    if isinstance(value, Literal):
        return value.text
    if isinstance(value, float):
        return go_text(value)
    return str(value)
