"""Resource quantities: parsed in kube-apiserver's grammar, formatted as it formats them."""

from __future__ import annotations

import functools
import math
import re
from decimal import Decimal, InvalidOperation

from kubernetes.utils import parse_quantity

# apimachinery pkg/api/resource/quantity.go (parseQuantityString): a signed decimal number, then
# one suffix: binary (Ki..Ei), decimal SI (n u m "" k M G T P E) or a decimal exponent (e3, E-2).
# The client's parse_quantity is looser (spaces, "K"), so the grammar is checked first.
_GRAMMAR = re.compile(
    r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?"
)


def parse(value: object) -> Decimal:
    """A quantity as a Decimal; ValueError for anything kube-apiserver would not accept (a JSON
    number is read as its text, as Quantity's UnmarshalJSON does)."""
    try:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ValueError(value)
        if not _GRAMMAR.fullmatch(str(value)):
            raise ValueError(value)
        q: Decimal = parse_quantity(str(value))
        if not q.is_finite():
            raise ValueError(value)
        return q
    except (ValueError, InvalidOperation, TypeError):
        raise ValueError(
            f"quantities must match the regular expression "
            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {value!r}"
        ) from None


def quantity_format(value: object) -> str:
    """The Format Go's ParseQuantity gives (k8s.io/apimachinery resource/quantity.go): binary
    suffixes are BinarySI, an exponent is DecimalExponent, anything else DecimalSI."""
    text = str(value)
    if text.endswith("i") and len(text) >= 2 and text[-2] in "KMGTPE":
        return "BinarySI"
    if re.search(r"[eE][-+]?[0-9]+$", text) and not text[-1:].isalpha():
        return "DecimalExponent"
    return "DecimalSI"


_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P"}
_DECIMAL_SUFFIXES[18] = "E"
_BINARY_SUFFIXES = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]


def format_quantity(q: Decimal, fmt: str = "DecimalSI") -> str:
    """`Quantity.String()` (CanonicalizeBytes in resource/quantity.go) for the value `q` in
    format `fmt`: BinarySI as the largest power of 1024 that divides it (DecimalSI when below
    1024 or not whole); DecimalSI/DecimalExponent as an integer mantissa and a power of ten
    that is a multiple of three (SI suffix, or `eN`)."""
    if q == 0:
        return "0"
    sign = "-" if q < 0 else ""
    q = abs(q)
    if fmt == "BinarySI" and (q < 1024 or q != q.to_integral_value()):
        fmt = "DecimalSI"
    if fmt == "BinarySI":
        n, power = int(q), 0
        while n % 1024 == 0 and power < len(_BINARY_SUFFIXES) - 1:
            n //= 1024
            power += 1
        return f"{sign}{n}{_BINARY_SUFFIXES[power]}"
    _, digits, exp = q.normalize().as_tuple()
    mantissa = int("".join(map(str, digits)))
    assert isinstance(exp, int)
    exp3 = 3 * math.floor(exp / 3)
    mantissa *= 10 ** (exp - exp3)
    if fmt == "DecimalExponent":
        return f"{sign}{mantissa}" + (f"e{exp3}" if exp3 else "")
    if exp3 > 18:
        mantissa *= 10 ** (exp3 - 18)
        exp3 = 18
    if exp3 < -9:  # below nano: Go rounds up to nano on parse
        mantissa = -((-mantissa) // 10 ** (-9 - exp3))
        exp3 = -9
    return f"{sign}{mantissa}{_DECIMAL_SUFFIXES[exp3]}"


def canonical(value: object) -> str:
    """A quantity as kube-apiserver prints it back: `0.5` -> `500m`, `1024Mi` -> `1Gi`."""
    return format_quantity(parse(value), quantity_format(value))


# Cached: the same few quantity strings are parsed for every pod of a workload.
@functools.lru_cache(maxsize=4096)
def cores(value: object) -> float:
    return float(parse(value))


@functools.lru_cache(maxsize=4096)
def millicores(value: object) -> int:
    return math.ceil(parse(value) * 1000)


@functools.lru_cache(maxsize=4096)
def bytes_(value: object) -> int:
    return math.ceil(parse(value))


def format_millicores(milli: int) -> str:
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def format_nanocores(cores_: float) -> str:
    """CPU usage as metrics-server reports it: whole nanocores, `n` suffix."""
    return f"{round(cores_ * 1e9)}n"


def format_kibibytes(n: float) -> str:
    """Memory usage as metrics-server reports it: whole KiB, `Ki` suffix."""
    return f"{round(n / 1024)}Ki"


def format_bytes(n: int) -> str:
    for suffix, factor in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if n % factor == 0 and n >= factor:
            return f"{n // factor}{suffix}"
    return str(n)
