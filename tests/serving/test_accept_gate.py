"""The accept gate's rule (app.serving.accept_gate): only a worker holding the fewest connections
listens, and a worker that stopped looking does not hold the others back."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.serving.accept_gate import (
    NEVER,
    STALE_SECONDS,
    AcceptGate,
    may_accept,
    should_hand_over,
)

NOW = 1000.0


def test_the_worker_with_fewer_connections_listens_the_other_does_not() -> None:
    used, counts, seen = [1, 1], [3, 5], [NOW, NOW]
    assert may_accept(0, 3, NOW, used, counts, seen)
    assert not may_accept(1, 5, NOW, used, counts, seen)


def test_ties_listen() -> None:
    assert may_accept(1, 4, NOW, [1, 1, 1], [4, 4, 6], [NOW, NOW, NOW])


def test_a_stale_or_free_slot_does_not_hold_the_others_back() -> None:
    stale = NOW - STALE_SECONDS - 0.1
    assert may_accept(1, 5, NOW, [1, 1], [0, 5], [stale, NOW])
    assert may_accept(1, 5, NOW, [0, 1], [0, 5], [NOW, NOW])
    assert may_accept(1, 5, NOW, [1, 1], [0, 5], [NEVER, NOW])


slots = st.lists(
    st.tuples(st.booleans(), st.integers(0, 50), st.floats(NOW - 10, NOW)), min_size=1, max_size=12
)


@given(slots)
def test_some_live_worker_always_listens_and_only_those_with_the_fewest(
    table: list[tuple[bool, int, float]],
) -> None:
    used = [int(u) for u, _, _ in table]
    counts = [c for _, c, _ in table]
    seen = [s for _, _, s in table]
    live = [i for i, (u, _, s) in enumerate(table) if u and NOW - s <= STALE_SECONDS]
    listening = [i for i in live if may_accept(i, counts[i], NOW, used, counts, seen)]
    if live:
        fewest = min(counts[i] for i in live)
        assert listening == [i for i in live if counts[i] == fewest]


def test_the_shared_table_gives_out_free_slots_and_publishes_looks() -> None:
    gate = AcceptGate(2)
    a, b = gate.claim(), gate.claim()
    assert (a, b) == (0, 1)
    assert gate.claim() is None  # full: that worker accepts as gunicorn's own would
    assert gate.look(0, 2, NOW)  # b has not looked yet: not counted
    assert not gate.look(1, 3, NOW)
    assert gate.look(0, 2, NOW)
    gate.release(0)
    assert gate.look(1, 3, NOW)
    assert gate.claim() == 0 and gate.seen[0] == NEVER and gate.counts[0] == 0


def test_a_worker_two_connections_above_another_live_one_hands_one_over() -> None:
    stale = NOW - STALE_SECONDS - 0.1
    assert should_hand_over(0, 8, NOW, [1, 1], [8, 0], [NOW, NOW])
    assert should_hand_over(0, 3, NOW, [1, 1], [3, 1], [NOW, NOW])
    assert not should_hand_over(0, 3, NOW, [1, 1], [3, 2], [NOW, NOW])  # one apart: even enough
    assert not should_hand_over(1, 0, NOW, [1, 1], [8, 0], [NOW, NOW])  # the one holding fewer
    assert not should_hand_over(0, 8, NOW, [1, 1], [8, 0], [NOW, stale])  # stuck: not counted
    assert not should_hand_over(0, 8, NOW, [1, 0], [8, 0], [NOW, NOW])  # a free slot
    assert not should_hand_over(0, 8, NOW, [1, 1], [8, 0], [NOW, NEVER])  # not looked yet


@given(slots)
def test_a_worker_handing_over_is_never_the_one_the_connection_goes_back_to(
    table: list[tuple[bool, int, float]],
) -> None:
    """The connection a worker closes is opened again on a worker that listens (may_accept), and
    never on one handing over: handing over cannot go round in circles."""
    used = [int(u) for u, _, _ in table]
    counts = [c for _, c, _ in table]
    seen = [s for _, _, s in table]
    live = [i for i, (u, _, s) in enumerate(table) if u and NOW - s <= STALE_SECONDS]
    for i in live:
        if should_hand_over(i, counts[i], NOW, used, counts, seen):
            assert not may_accept(i, counts[i], NOW, used, counts, seen)
            fewest = min(counts[j] for j in live)
            assert counts[i] >= fewest + 2
            # after the move, the worker it leaves is still at least one above the receiver's
            assert counts[i] - 1 >= fewest + 1
