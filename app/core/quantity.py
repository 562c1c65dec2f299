"""Kubernetes resource quantities ("3920m", "16Gi", "1e3") as exact decimals.

A pure parser of our own, so app.core needs no kubernetes import. Decimal keeps the value exact:
summing thousands of "3920m" nodes as floats and rounding up could be one core off.

Grammar (the one the API server accepts):
    [+-] (digits | digits. | digits.digits | .digits) [suffix]
    suffix = n u m "" k M G T P E  (powers of 1000)
           | Ki Mi Gi Ti Pi Ei     (powers of 1024)
           | e<int> or E<int>      (a decimal exponent: "1e3", "5E-2")
"1E" is one exa while "1E3" is a thousand, as in Kubernetes.

The other way, amounts (millicores, bytes) become text in one place: `format_quantity` writes the
exact canonical form Kubernetes itself prints (what goes to pods and the REST API), `readable`
rounds memory up to a whole unit for people (tables, pages, audit messages) and says "unknown" for
an unbounded amount instead of an int64.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_CEILING, Context, Decimal
from functools import lru_cache
from typing import Any

MAX_AMOUNT = 2**63 - 1  # int64: an unbounded estimate (no history yet) saturates here
UNKNOWN = "unknown"  # how `readable` shows an unbounded or unknown amount

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
    value = _parse(text)
    if abs(value) >= LIMIT:
        raise ValueError(f"{text!r} is out of range (must be below 2^63)")
    return value


def amount(resource: str, text: Any) -> int:
    """A pod's or LimitRange's quantity as rightsizer counts it: cpu in millicores, anything else
    in whole units (bytes), rounded up as Kubernetes rounds (`Quantity.MilliValue()`/`Value()`).

    A value at or above int64 (kube-apiserver accepts and stores "8Ei", 2^63 bytes) saturates at
    MAX_AMOUNT, as those methods do (apimachinery `pkg/api/resource`, `scaledValue`): such a limit
    means "unbounded", and a pod carrying one is still sized, not refused. Numbers (a YAML
    `cpu: 0.5`) read as their decimal text. ValueError for anything else and for negatives."""
    value = _parse(_text(text))
    if value < 0:
        raise ValueError(f"{text!r} must not be negative")
    scaled = value * 1000 if resource == "cpu" else value
    if scaled >= MAX_AMOUNT:  # compared before converting: "1e999" stays cheap
        return MAX_AMOUNT
    return int(scaled.to_integral_value(rounding=ROUND_CEILING))


@lru_cache(maxsize=4096)
def _cached_amount(resource: str, text: str | int | float) -> int:
    return amount(resource, text)


def parse_amount(resource: str, text: Any) -> int:
    """`amount`, memoised, for the pod JSON the webhook and the updater size (pods of one workload
    repeat the same few quantity strings). ValueError as `amount` gives it."""
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise ValueError("must be a quantity string such as '250m' or '512Mi'")
    return _cached_amount(resource, text)


def amount_or_none(resource: str, text: Any) -> int | None:
    """`parse_amount`, with None for a value that is absent (None) or malformed: how a view of a
    pod or a node (app.core.pods, app.core.nodes) reads a quantity it cannot use."""
    if text is None:
        return None
    try:
        return parse_amount(resource, text)
    except ValueError:
        return None


def amount_float(text: Any) -> float:
    """A quantity in base units (cores, bytes) as a float: metrics need the precision of `n`."""
    value = _parse(_text(text))
    if value < 0:
        raise ValueError(f"{text!r} must not be negative")
    return float(value)


def _text(text: Any) -> str | int:
    if isinstance(text, float) and math.isfinite(text):
        return repr(text)  # shortest round-trip form: 0.5 -> "0.5", 1e-07 -> "1e-07"
    if isinstance(text, bool) or not isinstance(text, str | int):
        raise ValueError(f"must be a quantity string such as '250m' or '512Mi', not {text!r}")
    return text


def _parse(text: str | int) -> Decimal:
    if isinstance(text, bool) or not isinstance(text, str | int):
        raise ValueError(f"quantity must be a string such as '3920m' or '16Gi', not {text!r}")
    match = _QUANTITY.fullmatch(str(text))
    if match is None:
        raise ValueError(
            f"{text!r} is not a Kubernetes quantity (expected a number with an optional suffix: "
            "n, u, m, k, M, G, T, P, E, Ki..Ei, or an exponent such as e3)"
        )
    return _exact(Decimal(match["number"]), _multiplier(match["suffix"], match["exponent"], text))


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


# Amounts -> text ------------------------------------------------------------------------------
# apimachinery pkg/api/resource/quantity.go (CanonicalizeBytes, AsCanonicalBytes,
# AsCanonicalBase1024Bytes): a CPU amount is a milli-quantity in DecimalSI, printed with the
# decimal suffix whose exponent is a multiple of 3 that leaves no trailing zero group
# (1500m, 2, 1k); memory is BinarySI, printed with the largest power of 1024 dividing it exactly
# (362Mi, 1Gi), and as DecimalSI when below 1024 in magnitude (512, 1k) or when no power of 1024
# divides it (380258472).
_DECIMAL_EXPONENTS = {-3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_EXPONENTS = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
KI, MI, GI, TI, PI, EI = 2**10, 2**20, 2**30, 2**40, 2**50, 2**60


def _decimal_si(mantissa: int, exponent: int) -> str:
    """mantissa x 10^exponent (exponent a multiple of 3 from -3) in canonical DecimalSI."""
    while mantissa and mantissa % 1000 == 0 and exponent < 18:
        mantissa //= 1000
        exponent += 3
    return f"{mantissa}{_DECIMAL_EXPONENTS[exponent]}"


def _binary_si(n: int) -> str:
    if -1024 < n < 1024:
        return _decimal_si(n, 0)
    power, mantissa = 0, n
    while mantissa % 1024 == 0 and power < len(_BINARY_EXPONENTS) - 1:
        mantissa //= 1024
        power += 1
    if power == 0:
        return _decimal_si(n, 0)
    return f"{mantissa}{_BINARY_EXPONENTS[power]}"


def format_quantity(resource: str, value: int) -> str:
    """An amount as Kubernetes writes it, exactly (parse_quantity gives it back): cpu in
    millicores ("203m", "1500m", "2"), anything else in whole units, binary suffixes for memory
    ("362Mi", "1Gi", "380258472"). Negative amounts (differences) keep their sign."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"an amount must be a whole number, not {value!r}")
    if value == 0:
        return "0"
    if resource == "cpu":
        return _decimal_si(value, -3)
    return _binary_si(value)


def readable_unit(resource: str, value: int) -> int:
    """The unit `readable` rounds a non-negative amount up to: 1 for cpu (millicores are whole)
    and below 1Ki; then Ki below 1Mi, Mi below 1Ti, Gi below 1Pi, Ti below 1Ei, Pi above (at
    most 7 digits before the suffix)."""
    if resource == "cpu" or value < KI:
        return 1
    for below, unit in ((MI, KI), (TI, MI), (PI, GI), (EI, TI)):
        if value < below:
            return unit
    return PI


def readable(resource: str, value: int | float | None) -> str:
    """An amount for people, as a Kubernetes quantity: memory rounded up to a whole unit (never
    below the amount, less than one unit above it: 380258472 -> "363Mi"), cpu exact ("203m",
    "2"); "unknown" for None and for an unbounded amount (one that reaches int64, where an
    estimate without history saturates). A float is rounded up first."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return UNKNOWN
    n = math.ceil(value)
    if n < 0:  # round towards +infinity as well: the magnitude goes down
        unit = readable_unit(resource, -n)
        shown = -((-n) // unit) * unit
    else:
        unit = readable_unit(resource, n)
        shown = -(-n // unit) * unit
    if abs(shown) >= MAX_AMOUNT:
        return UNKNOWN
    return format_quantity(resource, shown)
