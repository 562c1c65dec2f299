"""Connections closed for being too slow: their metric, and one log line per client at most.

A client that does not finish its TLS handshake, its request headers or its request body within
its bound (app.serving.intake) is closed, counted in `rightsizer_slow_connections_closed_total`
by the stage it stalled in, and logged at most once every LOG_EVERY_SECONDS per client address,
with the number closed since its previous line: one stalled client opening connections in a loop
makes one line a minute, not one per connection.
"""

from __future__ import annotations

from prometheus_client import Counter

LOG_EVERY_SECONDS = 60.0
# Addresses remembered at most (the oldest beyond this are forgotten: logged again, not lost).
REMEMBERED = 4096

SLOW_CLOSED = Counter(
    "rightsizer_slow_connections_closed",
    "Connections closed because the client did not complete a stage within its bound: "
    "handshake (TLS), headers or body (RIGHTSIZER_*_TIMEOUT_SECONDS).",
    ["stage"],
)


class OncePerClient:
    """Which closes to log: the first from an address, then one every LOG_EVERY_SECONDS."""

    def __init__(self, every: float = LOG_EVERY_SECONDS, remembered: int = REMEMBERED) -> None:
        self.every, self.remembered = every, remembered
        self.logged: dict[str, float] = {}  # address -> when last logged
        self.closed: dict[str, int] = {}  # address -> closed since then, not yet logged

    def note(self, client: str, now: float) -> int | None:
        """Count one close from `client`; how many to log now (this one included), or None."""
        self.closed[client] = self.closed.get(client, 0) + 1
        if now - self.logged.get(client, float("-inf")) < self.every:
            return None
        self.logged.pop(client, None)  # re-inserted last: the dict stays oldest first
        self.logged[client] = now
        if len(self.logged) > self.remembered:
            oldest = next(iter(self.logged))
            del self.logged[oldest]
            self.closed.pop(oldest, None)
        return self.closed.pop(client)
