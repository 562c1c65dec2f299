"""metav1.Time and MicroTime as their UnmarshalJSON reads them: Go's time.Parse with
time.RFC3339 (Time; a fraction of a second is accepted after the seconds) or RFC3339Micro
(MicroTime: exactly six fractional digits), and time.Parse's own error when the text does not
fit: `parsing time "<text>" as "<layout>": cannot parse "<rest>" as "<element>"`. Pure."""

from __future__ import annotations

import json
import re

RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"

_DIGITS = {"2006": 4, "01": 2, "02": 2, "15": 2, "04": 2, "05": 2}
_ZONE = re.compile(r"^(Z|[+-]\d{2}:\d{2})")


def _elements(micro: bool) -> list[str]:
    out = ["2006", "-", "01", "-", "02", "T", "15", ":", "04", ":", "05"]
    return [*out, ".000000", "Z07:00"] if micro else [*out, "Z07:00"]


def parse_error(text: str, *, micro: bool) -> str | None:
    """None if Go's time.Parse reads `text` with the layout, else its error message."""
    layout = RFC3339_MICRO if micro else RFC3339
    rest = text
    for element in _elements(micro):
        taken = _take(element, rest, micro)
        if taken is None:
            return (
                f"parsing time {json.dumps(text)} as {json.dumps(layout)}: "
                f"cannot parse {json.dumps(rest)} as {json.dumps(element)}"
            )
        rest = rest[taken:]
    if rest:
        return f"parsing time {json.dumps(text)}: extra text: {json.dumps(rest)}"
    return None


def _take(element: str, rest: str, micro: bool) -> int | None:
    """How many characters of `rest` the layout element reads, None if it cannot."""
    if element in _DIGITS:
        n = _DIGITS[element]
        if len(rest) < n or not rest[:n].isdigit():
            return None
        if element == "05" and not micro:
            fraction = re.match(r"^\.\d+", rest[n:])  # RFC3339 accepts any fraction here
            return n + (fraction.end() if fraction else 0)
        return n
    if element == ".000000":
        return 7 if len(rest) >= 7 and rest[0] == "." and rest[1:7].isdigit() else None
    if element == "Z07:00":
        zone = _ZONE.match(rest)
        return zone.end() if zone else None
    return len(element) if rest.startswith(element) else None
