"""Resource quantities: parsing with the client's own parser, formatting as the API server does."""

from __future__ import annotations

import functools
import math
from decimal import Decimal, InvalidOperation

from kubernetes.utils import parse_quantity


def parse(value: object) -> Decimal:
    """A quantity as a Decimal; ValueError for anything kube-apiserver would not accept."""
    try:
        return parse_quantity(value)
    except (ValueError, InvalidOperation, TypeError):
        raise ValueError(
            f"quantities must match the regular expression "
            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {value!r}"
        ) from None


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
