"""Query-string parsing that names the bad parameter instead of ignoring or crashing on it."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from flask import request

from app.api.errors import ApiError


def reject_unknown_args(known: Iterable[str]) -> None:
    """A misspelt filter would silently return everything: refuse it instead."""
    known = tuple(known)
    unknown = sorted(set(request.args) - set(known))
    if unknown:
        allowed = f"; parameters are {', '.join(known)}" if known else "; none are accepted"
        raise ApiError(
            400, "BadRequest", f"unknown query parameter(s): {', '.join(unknown)}{allowed}"
        )


def int_arg(name: str, default: int, lo: int, hi: int) -> int:
    raw = request.args.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, "BadRequest", f"{name}: {raw!r} is not a whole number") from None
    if not lo <= value <= hi:
        raise ApiError(400, "BadRequest", f"{name}: must be between {lo} and {hi}")
    return value


def time_arg(name: str) -> datetime | None:
    """RFC 3339 (`2024-07-01T00:00:00Z`, any offset) or unix seconds."""
    raw = request.args.get(name)
    if raw is None:
        return None
    try:
        return datetime.fromtimestamp(float(raw), UTC)
    except (ValueError, OverflowError, OSError):
        pass
    try:
        t = datetime.fromisoformat(raw.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ApiError(
            400, "BadRequest", f"{name}: {raw!r} is not a time (RFC 3339 or unix seconds)"
        ) from None
    if t.tzinfo is None:
        raise ApiError(400, "BadRequest", f"{name}: {raw!r} needs a time zone, e.g. Z")
    return t.astimezone(UTC)
