"""Simulated time: frozen for tests (moved only by `advance`), or running at a chosen speed."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime


class SimClock:
    """Seconds since the epoch, as a float; `speed` 0 freezes it, 1 follows the wall clock."""

    def __init__(self, start: float | None = None, speed: float = 1.0) -> None:
        self._lock = threading.Lock()
        self._base_sim = time.time() if start is None else start
        self._base_wall = time.monotonic()
        self.speed = speed

    def now(self) -> float:
        with self._lock:
            return self._base_sim + (time.monotonic() - self._base_wall) * self.speed

    def set_speed(self, speed: float) -> None:
        with self._lock:
            now = time.monotonic()
            self._base_sim += (now - self._base_wall) * self.speed
            self._base_wall = now
            self.speed = speed

    def advance(self, seconds: float) -> float:
        if seconds < 0:
            raise ValueError("the simulated clock only moves forward")
        with self._lock:
            self._base_sim += seconds
            return self._base_sim + (time.monotonic() - self._base_wall) * self.speed


def rfc3339(t: float) -> str:
    """`metav1.Time`: whole seconds, UTC, `Z`."""
    return datetime.fromtimestamp(int(t), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
