"""Kubernetes resource quantities ("3920m", "16Gi", "1e3") as exact decimals.

A pure parser of our own, so app.core needs no kubernetes import. Decimal keeps the value exact:
summing thousands of "3920m" nodes as floats and rounding up could be one core off.

Grammar (the one the API server accepts):
    [+-] (digits | digits. | digits.digits | .digits) [suffix]
    suffix = n u m "" k M G T P E  (powers of 1000)
           | Ki Mi Gi Ti Pi Ei     (powers of 1024)
           | e<int> or E<int>      (a decimal exponent: "1e3", "5E-2")
"1E" is one exa while "1E3" is a thousand, as in Kubernetes.
"""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Context, Decimal

# int64: the API server reports quantities in this range, and bounding the magnitude keeps every
# later integer conversion cheap ("1e999999999" would otherwise become a billion-digit int).
LIMIT = Decimal(2**63)

DECIMAL_SUFFIXES = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
}
BINARY_SUFFIXES = {
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
    "Pi": Decimal(2**50),
    "Ei": Decimal(2**60),
}
SUFFIXES = {**DECIMAL_SUFFIXES, **BINARY_SUFFIXES}
_SUFFIX = "|".join(sorted((s for s in SUFFIXES if s), key=len, reverse=True))
_QUANTITY = re.compile(
    rf"(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    rf"(?:(?P<suffix>{_SUFFIX})|[eE](?P<exponent>[+-]?[0-9]+))?"
)


def parse_quantity(text: str | int) -> Decimal:
    """The exact value in base units (cores, bytes); ValueError naming the text if malformed."""
    if isinstance(text, bool) or not isinstance(text, str | int):
        raise ValueError(f"quantity must be a string such as '3920m' or '16Gi', not {text!r}")
    match = _QUANTITY.fullmatch(str(text))
    if match is None:
        raise ValueError(
            f"{text!r} is not a Kubernetes quantity (expected a number with an optional suffix: "
            "n, u, m, k, M, G, T, P, E, Ki..Ei, or an exponent such as e3)"
        )
    value = _exact(Decimal(match["number"]), _multiplier(match["suffix"], match["exponent"], text))
    if abs(value) >= LIMIT:
        raise ValueError(f"{text!r} is out of range (must be below 2^63)")
    return value


def _multiplier(suffix: str | None, exponent: str | None, text: str | int) -> Decimal:
    if exponent is not None:
        power = int(exponent)
        if abs(power) > 1000:  # far beyond int64 either way; refuse before building it
            raise ValueError(f"{text!r} is out of range (exponent {power})")
        return Decimal(1).scaleb(power)
    return SUFFIXES[suffix or ""]


def _exact(a: Decimal, b: Decimal) -> Decimal:
    """a x b without the default context's rounding to 28 digits (long inputs stay exact)."""
    digits = len(a.as_tuple().digits) + len(b.as_tuple().digits)
    return Context(prec=digits + 2, Emin=-(10**6), Emax=10**6).multiply(a, b)


def ceil_scaled(value: Decimal, power: int = 0) -> int:
    """ceil(value x 10^power) as an int, exactly (e.g. power=9 gives nano-units)."""
    scaled = _exact(value, Decimal(1).scaleb(power))
    return int(scaled.to_integral_value(rounding=ROUND_CEILING))
