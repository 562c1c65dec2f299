"""Ages and durations as kube-apiserver prints them in Table cells.

`human_duration` re-derives `HumanDuration` from k8s.io/apimachinery `pkg/util/duration/
duration.go`: about two significant figures, whole units truncated toward zero (Go's integer
division on a nanosecond `time.Duration`), up to two seconds in the future read as `0s`.
`since` is `translateTimestampSince` of kubernetes/kubernetes `pkg/printers/internalversion/
printers.go`: `<unknown>` for an unset timestamp. Pure: the caller passes `now` (the simulated
clock, against which every timestamp of the simulated cluster is written).
"""

from __future__ import annotations

from datetime import datetime

SECOND = 10**9
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
_DAY_HOURS = 24
_YEAR_HOURS = 24 * 365


def _trunc(ns: int, unit: int) -> int:
    """Go's `int(d / unit)`: integer division truncated toward zero."""
    q = abs(ns) // unit
    return q if ns >= 0 else -q


def human_duration_ns(ns: int) -> str:
    """`duration.HumanDuration` of a duration of `ns` nanoseconds."""
    seconds = _trunc(ns, SECOND)
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 2 * 60:
        return f"{seconds}s"
    minutes = ns // MINUTE
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 3 * 60:
        return f"{minutes}m"
    hours = ns // HOUR
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 2 * _DAY_HOURS:
        return f"{hours}h"
    days = hours // _DAY_HOURS
    if hours < 8 * _DAY_HOURS:
        h = hours % _DAY_HOURS
        return f"{days}d" if h == 0 else f"{days}d{h}h"
    if hours < 2 * _YEAR_HOURS:
        return f"{days}d"
    years = hours // _YEAR_HOURS
    if hours < 8 * _YEAR_HOURS:
        dy = days % 365
        return f"{years}y" if dy == 0 else f"{years}y{dy}d"
    return f"{years}y"


def human_duration(seconds: float) -> str:
    """`duration.HumanDuration` of a duration given in (fractional) seconds."""
    return human_duration_ns(int(seconds * SECOND))


def timestamp(value: object) -> float | None:
    """A `metav1.Time` or `metav1.MicroTime` (RFC 3339) as epoch seconds; None when unset or
    unreadable, which the printers show as an unset (zero) time."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def since(value: object, now: float) -> str:
    """`translateTimestampSince`: the age of a timestamp at `now`, `<unknown>` when unset."""
    at = timestamp(value)
    if at is None:
        return "<unknown>"
    return human_duration(now - at)


def between(start: object, end: object) -> str:
    """`HumanDuration(end.Sub(start))` for two set timestamps (a Job's run time)."""
    a, b = timestamp(start), timestamp(end)
    if a is None or b is None:
        return human_duration(0)
    return human_duration(b - a)
