"""Times and durations on the command line: `2m`, `1h30m`, `3d` wherever one is taken (as kubectl
takes `--since=2m`), besides what each option took before.

- `Duration`: seconds, written `90`, `90s`, `2m`, `1h30m` or `3d` (units s, m, h, d; a bare number
  is seconds).
- `Since`: a moment, written as a duration back from now (`2m`: two minutes ago), an RFC 3339 time
  with a zone (`2024-07-01T00:00:00Z`), or unix seconds; passed on as RFC 3339 in UTC.
"""

from __future__ import annotations

import math
import re
import time
from datetime import UTC, datetime
from typing import Any

import click

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_PART = re.compile(r"(\d+(?:\.\d+)?)([smhd])")
_WHOLE = re.compile(r"(?:\d+(?:\.\d+)?[smhd])+")
FORMS = "a duration such as 90s, 2m, 1h30m or 3d"


def parse_duration(text: str) -> float | None:
    """Seconds, or None when `text` is not a duration with units (`2m`, `1h30m`, `3d`)."""
    text = text.strip()
    if not _WHOLE.fullmatch(text):
        return None
    return sum(float(n) * UNITS[unit] for n, unit in _PART.findall(text))


class Duration(click.ParamType[float]):
    """Seconds as a float: `90` (seconds), `90s`, `2m`, `1h30m`, `3d`."""

    name = "duration"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, int | float):
            return float(value)
        seconds = parse_duration(str(value))
        if seconds is None:
            try:
                seconds = float(value)
            except ValueError:
                self.fail(f"{value!r} is not {FORMS} (a bare number is seconds)", param, ctx)
        if not math.isfinite(seconds) or seconds < 0:
            self.fail(f"{value!r} must be a finite duration, not negative", param, ctx)
        return seconds


class Since(click.ParamType[str]):
    """A moment as RFC 3339 in UTC: `2m` (ago), an RFC 3339 time, or unix seconds."""

    name = "time"

    def __init__(self, now: Any = time.time) -> None:
        self.now = now

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value).strip()
        ago = parse_duration(text)
        if ago is not None:
            return _rfc3339(self.now() - ago)
        try:
            return _rfc3339(float(text))
        except (ValueError, OverflowError, OSError):
            pass
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            moment = None
        if moment is None or moment.tzinfo is None:
            self.fail(
                f"{value!r} is not {FORMS} (that long ago), an RFC 3339 time with a zone "
                "(2024-07-01T00:00:00Z) or unix seconds",
                param,
                ctx,
            )
        return _rfc3339(moment.timestamp())


def _rfc3339(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
