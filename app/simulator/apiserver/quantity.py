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
    if exp3 < -9:  # below nano: Go rounds up to nano on parse, whatever the format
        mantissa = -((-mantissa) // 10 ** (-9 - exp3))
        exp3 = -9
        while mantissa % 1000 == 0:  # rounding up may carry: 0.9999999999u is 1u
            mantissa, exp3 = mantissa // 1000, exp3 + 3
    if fmt == "DecimalExponent":
        return f"{sign}{mantissa}" + (f"e{exp3}" if exp3 else "")
    if exp3 > 18:
        mantissa *= 10 ** (exp3 - 18)
        exp3 = 18
    return f"{sign}{mantissa}{_DECIMAL_SUFFIXES[exp3]}"


def canonical(value: object) -> str:
    """A quantity as kube-apiserver prints it back: `0.5` -> `500m`, `1024Mi` -> `1Gi`."""
    return format_quantity(parse(value), quantity_format(value))


_SPLIT = re.compile(r"([+-]?)0*([0-9]*)(?:\.([0-9]*))?(.*)", re.DOTALL)
_SI_EXPONENTS = {k: e for e, k in _DECIMAL_SUFFIXES.items()}  # "" 0, "m" -3, "k" 3, ...
_BINARY_EXPONENTS = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_INT64_MAX = 2**63 - 1


def stored(text: str) -> str:
    """The quantity kube-apiserver stores and returns for one sent as `text` (a JSON string's
    content, or a JSON number's text: jsonnumbers.text_of): Quantity's UnmarshalJSON trims
    spaces and calls ParseQuantity, whose fast path keeps the text as sent when its tests call
    it canonical (so `500m` and `1e3`, but also `+1`, `050m` and `1.500`), and MarshalJSON
    writes that text, else the canonical form (`0.5` -> `500m`, `1024Mi` -> `1Gi`, `1000` ->
    `1k`). ValueError for a text that is no quantity."""
    text = text.strip()
    q = parse(text)  # refuses what ParseQuantity refuses
    if text == "0" or _kept_as_sent(text):
        return text
    fmt = quantity_format(text)
    if fmt == "BinarySI" and abs(q) > _INT64_MAX:  # "The max is just a simple cap."
        q = Decimal(_INT64_MAX).copy_sign(q)
    return format_quantity(q, fmt)


def _kept_as_sent(text: str) -> bool:
    """ParseQuantity's fast path (resource/quantity.go): an int64 amount at a scale of at least
    nano, kept with the text as sent when "the number is in canonical form"."""
    m = _SPLIT.fullmatch(text)
    assert m is not None  # parse() accepted it
    _, num, denom, suffix = m.groups()
    num, denom = num or "0", denom or ""  # leading zeros stripped, as parseQuantityString does
    if suffix in _BINARY_EXPONENTS:
        exponent, binary = _BINARY_EXPONENTS[suffix], True
        # 1Mi (2^20) has ~6 digits of decimal precision: exponent*3/10 - 1 (float32 in Go)
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1 if not denom else -1
    else:
        exponent = _SI_EXPONENTS[suffix] if suffix in _SI_EXPONENTS else int(suffix[1:])
        binary, precision = False, 18 - len(num) - len(denom)  # maxInt64Factors = 18
    scale = (0 if binary else exponent) - len(denom)
    if precision < 0 or scale < -9:
        return False
    shifted = num + denom
    value = int(shifted)
    if value * (1 << exponent if binary else 1) > _INT64_MAX:
        return False  # int64Multiply overflows: the slow path
    if binary:
        return value & 0x07 != 0  # exponent % 10 == 0 for every binary suffix
    return scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"


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
