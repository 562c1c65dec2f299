"""`Rooms` (app.core.sizing.fit): the updater's node rooms find a pod's own node by position
instead of scanning every node; `place` answers exactly as with a plain list, run after run of
placements, and a position no longer right (a list changed otherwise) falls back to the scan."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.core.sizing.fit import NodeRoom, Placement, Rooms, with_moves
from app.core.sizing.fit import moves as fit_moves


def place(
    nodes: list[NodeRoom], own: str | None, current: tuple[int, int], new: tuple[int, int]
) -> list[NodeRoom] | None:
    """The rooms after `fit.moves`, applied to a copy (`with_moves`), or None."""
    changed = fit_moves(nodes, own, current, new)
    return None if changed is None else with_moves(nodes, changed)


NAMES = [f"n{i}" for i in range(6)]
amounts = st.integers(min_value=-2, max_value=6)
nodes_st = st.lists(
    st.builds(NodeRoom, name=st.sampled_from(NAMES), cpu_free=amounts, memory_free=amounts),
    max_size=6,
    unique_by=lambda n: n.name,
)
moves = st.lists(
    st.tuples(
        st.sampled_from([*NAMES, None]),
        st.tuples(amounts, amounts),
        st.tuples(amounts, amounts),
    ),
    max_size=8,
)


@given(nodes=nodes_st, moves=moves)
def test_rooms_place_as_a_plain_list_does(
    nodes: list[NodeRoom], moves: list[tuple[str | None, tuple[int, int], tuple[int, int]]]
) -> None:
    rooms, plain = Rooms(nodes), list(nodes)
    for own, current, new in moves:
        got, want = place(rooms, own, current, new), place(plain, own, current, new)
        assert got == want
        if got is not None and want is not None:
            rooms[:] = got  # as the updater keeps them: the same Rooms, same order
            plain = want
        assert isinstance(rooms, Rooms) and list(rooms) == plain


@given(nodes=nodes_st, own=st.sampled_from(NAMES))
def test_a_stale_position_falls_back_to_the_scan(nodes: list[NodeRoom], own: str) -> None:
    rooms = Rooms(nodes)
    rooms.reverse()  # positions no longer right
    plain = list(rooms)
    assert fit_moves(rooms, own, (1, 1), (1, 1), Placement()) == fit_moves(
        plain, own, (1, 1), (1, 1)
    )
    assert rooms.position(own) == next((i for i, n in enumerate(plain) if n.name == own), None)


@given(nodes=nodes_st, steps=moves)
def test_moves_applied_in_place_are_what_place_answers(
    nodes: list[NodeRoom], steps: list[tuple[str | None, tuple[int, int], tuple[int, int]]]
) -> None:
    """The updater applies `fit.moves` (one or two rooms) to its Rooms in place: run after run,
    they are the rooms `place` answers on a plain list."""
    rooms, plain = Rooms(nodes), list(nodes)
    for own, current, new in steps:
        changed, want = fit_moves(rooms, own, current, new), place(plain, own, current, new)
        assert (changed is None) == (want is None)
        if changed is not None and want is not None:
            assert 1 <= len(changed) <= 2
            for i, room in changed.items():
                rooms[i] = room
            plain = want
        assert isinstance(rooms, Rooms) and list(rooms) == plain
