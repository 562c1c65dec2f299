"""Node fit and QoS class, as the updater checks them before acting."""

from __future__ import annotations

from app.core.fit import NodeRoom, place, qos_class

NODES = [NodeRoom("a", 500, 1000), NodeRoom("b", 2000, 200)]


def test_fits_where_both_resources_fit() -> None:
    assert place(NODES, None, (0, 0), (400, 900)) is not None
    assert place(NODES, None, (0, 0), (1500, 100)) is not None
    assert place(NODES, None, (0, 0), (1500, 900)) is None


def test_own_node_counts_its_current_requests_as_free() -> None:
    assert place(NODES, None, (300, 0), (700, 900)) is None
    assert place(NODES, "a", (300, 0), (700, 900)) is not None


def test_no_nodes_no_fit() -> None:
    assert place([], None, (0, 0), (1, 1)) is None


def test_qos_classes() -> None:
    assert qos_class([{}]) == "BestEffort"
    assert qos_class([{"requests": {"cpu": 100}}]) == "Burstable"
    both = {"cpu": 100, "memory": 10}
    assert qos_class([{"requests": both, "limits": both}]) == "Guaranteed"
    assert qos_class([{"limits": both}]) == "Guaranteed"  # requests default to limits
    assert qos_class([{"requests": both, "limits": both}, {"requests": {"cpu": 1}}]) == "Burstable"
    assert (
        qos_class([{"requests": {"cpu": 100, "memory": 10}, "limits": {"cpu": 200, "memory": 10}}])
        == "Burstable"
    )


def test_place_reserves_the_room_it_takes() -> None:
    rooms = [NodeRoom("a", 500, 1000), NodeRoom("b", 1000, 1000)]
    after = place(rooms, "a", (100, 100), (900, 500))  # too big for a (600 with its own): to b
    assert after == [NodeRoom("a", 600, 1100), NodeRoom("b", 100, 500)]
    # A second pod of the same size no longer fits: b's room was taken by the first.
    assert place(after, "a", (100, 100), (900, 500)) is None
    # Resized in place: stays on its own node.
    assert place(rooms, "b", (200, 0), (1100, 100)) == [
        NodeRoom("a", 500, 1000),
        NodeRoom("b", 100, 900),
    ]
