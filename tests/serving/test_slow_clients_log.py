"""app.serving.slow_clients: a stalled client is logged once a minute at most, with the count of
connections closed since its previous line; many clients do not grow memory without bound."""

from __future__ import annotations

from app.serving.slow_clients import OncePerClient


def test_one_line_per_client_a_minute_with_the_count_closed_since() -> None:
    log = OncePerClient(every=60.0)
    assert log.note("10.0.0.1", 0.0) == 1  # the first close is logged
    assert [log.note("10.0.0.1", t) for t in (1.0, 2.0, 59.0)] == [None, None, None]
    assert log.note("10.0.0.2", 3.0) == 1  # another client: its own line
    assert log.note("10.0.0.1", 61.0) == 4  # the three held back, and this one


def test_the_addresses_remembered_are_bounded() -> None:
    log = OncePerClient(every=60.0, remembered=3)
    for i in range(10):
        assert log.note(f"10.0.0.{i}", float(i)) == 1
    assert len(log.logged) == 3 and len(log.closed) == 0
