"""`fit.moves` tries the pod's own node first without sorting every node (issue 22: at 5000 nodes
the sort per updated pod made the updater's run grow with pods x nodes). Property: it answers
exactly as the sorted order did, for any nodes, node of the pod, requests and placement."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.sizing.fit import NodeRoom, Placement, admits, moves, with_moves


def place_sorted(
    nodes: list[NodeRoom],
    own_node: str | None,
    current: tuple[int, int],
    new: tuple[int, int],
    placement: Placement,
) -> list[NodeRoom] | None:
    """The previous implementation: every node sorted, the pod's own first."""
    order = sorted(range(len(nodes)), key=lambda i: nodes[i].name != own_node)
    for i in order:
        n = nodes[i]
        if n.name != own_node and not admits(n, placement):
            continue
        cpu, mem = n.cpu_free, n.memory_free
        if n.name == own_node:
            cpu, mem = cpu + current[0], mem + current[1]
        if new[0] <= cpu and new[1] <= mem:
            out = list(nodes)
            out[i] = replace(n, cpu_free=cpu - new[0], memory_free=mem - new[1])
            if n.name != own_node:
                for j, m in enumerate(out):
                    if m.name == own_node:
                        out[j] = replace(
                            m,
                            cpu_free=m.cpu_free + current[0],
                            memory_free=m.memory_free + current[1],
                        )
            return out
    return None


amounts = st.integers(min_value=-2, max_value=6)
nodes_st = st.lists(
    st.builds(
        NodeRoom,
        name=st.sampled_from([f"n{i}" for i in range(8)]),
        cpu_free=amounts,
        memory_free=amounts,
        taints=st.sampled_from([(), (("k", "v", "NoSchedule"),)]),
        labels=st.sampled_from([(), (("zone", "a"),)]),
    ),
    max_size=8,
    unique_by=lambda n: n.name,
)
placements = st.sampled_from(
    [
        Placement(),
        Placement(node_selector=(("zone", "a"),)),
        Placement(tolerations=({"key": "k", "operator": "Exists"},)),
    ]
)


@settings(max_examples=500, deadline=None)
@given(
    nodes=nodes_st,
    own=st.one_of(st.none(), st.sampled_from([f"n{i}" for i in range(10)])),
    current=st.tuples(amounts, amounts),
    new=st.tuples(amounts, amounts),
    placement=placements,
)
def test_moves_answer_as_the_sorted_order_did(
    nodes: list[NodeRoom],
    own: str | None,
    current: tuple[int, int],
    new: tuple[int, int],
    placement: Placement,
) -> None:
    changed = moves(nodes, own, current, new, placement)
    got = None if changed is None else with_moves(nodes, changed)
    assert got == place_sorted(nodes, own, current, new, placement)
