"""The client-side rate limit of every request to the API server, as client-go has it.

client-go gives each client a token bucket (rest.Config QPS and Burst, defaults 5 and 10:
`DefaultQPS`/`DefaultBurst` in k8s.io/client-go/rest/config.go, the bucket built by
`flowcontrol.NewTokenBucketRateLimiter` in k8s.io/client-go/util/flowcontrol/throttle.go over
golang.org/x/time/rate). Every request, watches and each page of a LIST included, waits for a
token before it is sent (`Request.tryThrottle` in k8s.io/client-go/rest/request.go). The bucket
starts full: `burst` requests go at once, then one every 1/qps seconds.

As in x/time/rate, a caller reserves its token at once, in the order callers arrive, and then
sleeps until the token is due: the reservation is taken under a lock, the sleep outside it, so
threads queue fairly without holding each other up. A qps of 0 (or less) means no limit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

DEFAULT_QPS = 5.0  # client-go's rest.DefaultQPS
DEFAULT_BURST = 10  # client-go's rest.DefaultBurst


class RateLimiter:
    """Token bucket: `qps` tokens a second, at most `burst` saved up. `clock` is monotonic
    seconds and `sleep` waits; tests pass fakes of both."""

    def __init__(
        self,
        qps: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if burst < 1 and qps > 0:
            raise ValueError("burst must be at least 1 when qps is set")
        self.qps, self.burst = qps, burst
        self.clock, self.sleep = clock, sleep
        self._tokens = float(burst)
        self._at = clock()
        self._lock = threading.Lock()
        self.waited = 0.0  # seconds spent waiting in all, for logs and benchmarks

    @property
    def limited(self) -> bool:
        return self.qps > 0

    def reserve(self) -> float:
        """Takes the next token; returns how long to wait before using it (0: now)."""
        if not self.limited:
            return 0.0
        with self._lock:
            now = self.clock()
            elapsed = max(now - self._at, 0.0)
            self._tokens = min(float(self.burst), self._tokens + elapsed * self.qps)
            self._at = now
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def wait(self) -> None:
        """Blocks until this caller's token is due (client-go's `Accept`)."""
        delay = self.reserve()
        if delay > 0:
            self.waited += delay
            self.sleep(delay)
