"""Node fit and QoS class, as the updater checks them before acting."""

from __future__ import annotations

import pytest

from app.core.sizing.fit import (
    NodeRoom,
    Placement,
    admits,
    moves,
    qos_class,
    tolerates,
    with_moves,
)


def place(
    nodes: list[NodeRoom],
    own: str | None,
    current: tuple[int, int],
    new: tuple[int, int],
    placement: Placement | None = None,
) -> list[NodeRoom] | None:
    """The rooms after `moves`, as the plan applies them (`with_moves`), or None."""
    changed = moves(nodes, own, current, new, placement)
    return None if changed is None else with_moves(nodes, changed)


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


BATCH = ("dedicated", "batch", "NoSchedule")


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        ({"key": "dedicated", "value": "batch", "effect": "NoSchedule"}, BATCH, True),
        ({"key": "dedicated", "value": "batch"}, BATCH, True),  # no effect: every effect
        ({"key": "dedicated", "value": "web"}, BATCH, False),
        ({"key": "dedicated", "operator": "Exists"}, BATCH, True),
        ({"operator": "Exists"}, BATCH, True),  # no key with Exists: every taint
        ({"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}, BATCH, False),
        ({"key": "other", "operator": "Exists"}, BATCH, False),
        ({"key": "gpu", "operator": "Equal"}, ("gpu", "", "NoSchedule"), True),
        ({}, BATCH, False),
    ],
)
def test_tolerations_match_taints_as_kubernetes_does(
    toleration: dict[str, str], taint: tuple[str, str, str], expected: bool
) -> None:
    assert tolerates(toleration, taint) is expected


def test_a_node_admits_what_tolerates_its_taints_and_matches_its_selector() -> None:
    node = NodeRoom("n", 1000, 1000, taints=(BATCH,), labels=(("zone", "a"),))
    batch = ({"key": "dedicated", "operator": "Exists"},)
    assert not admits(node, Placement())
    assert admits(node, Placement(tolerations=batch))
    assert admits(node, Placement(batch, (("zone", "a"),)))
    assert not admits(node, Placement(batch, (("zone", "b"),)))
    assert admits(NodeRoom("plain", 1, 1), Placement())


def test_placement_reads_a_pod_spec() -> None:
    spec = {"tolerations": [{"operator": "Exists"}, "junk"], "nodeSelector": {"zone": "a"}}
    assert Placement.of(spec) == Placement(({"operator": "Exists"},), (("zone", "a"),))
    assert Placement.of({}) == Placement()


def test_only_nodes_that_admit_the_pod_are_rooms_for_it_but_its_own_node_is() -> None:
    tainted = NodeRoom("t", 4000, 4000, taints=(BATCH,))
    assert place([tainted], None, (0, 0), (1000, 1000)) is None
    tolerating = Placement(tolerations=({"key": "dedicated", "operator": "Exists"},))
    after = place([tainted], None, (0, 0), (1000, 1000), tolerating)
    assert after == [NodeRoom("t", 3000, 3000, taints=(BATCH,))]
    # The pod runs there already: a resize keeps it there whatever taint came since.
    assert place([tainted], "t", (500, 500), (1000, 1000)) is not None


ZONE_A = NodeRoom("n1", 1000, 1000, labels=(("gen", "5"), ("zone", "a")))
ZONE_B = NodeRoom("n2", 1000, 1000, labels=(("gen", "3"), ("zone", "b")))
BARE = NodeRoom("n3", 1000, 1000)


def affinity(*terms: dict[str, object]) -> Placement:
    spec = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}
            }
        }
    }
    return Placement.of(spec)


def expr(key: str, op: str, *values: str) -> dict[str, object]:
    return {"matchExpressions": [{"key": key, "operator": op, "values": list(values)}]}


@pytest.mark.parametrize(
    ("term", "admitted"),
    [
        (expr("zone", "In", "a", "c"), {"n1"}),
        (expr("zone", "NotIn", "a"), {"n2", "n3"}),  # a node without the label is not in "a"
        (expr("zone", "Exists"), {"n1", "n2"}),
        (expr("zone", "DoesNotExist"), {"n3"}),
        (expr("gen", "Gt", "4"), {"n1"}),
        (expr("gen", "Lt", "4"), {"n2"}),
        (expr("zone", "Gt", "4"), set()),  # not an integer: no match
        (expr("zone", "Near", "a"), set()),  # unknown operator: no match
        ({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}, {"n2"}),
        ({}, set()),  # an empty term selects no node
        (
            {
                "matchExpressions": [
                    {"key": "zone", "operator": "Exists"},
                    {"key": "gen", "operator": "Gt", "values": ["4"]},
                ]
            },
            {"n1"},  # the requirements of one term are ANDed
        ),
    ],
)
def test_required_node_affinity_terms_as_the_scheduler_reads_them(
    term: dict[str, object], admitted: set[str]
) -> None:
    placement = affinity(term)
    assert {n.name for n in (ZONE_A, ZONE_B, BARE) if admits(n, placement)} == admitted


def test_affinity_terms_are_ored_and_combine_with_the_node_selector() -> None:
    either = affinity(expr("zone", "In", "a"), expr("zone", "DoesNotExist"))
    assert [admits(n, either) for n in (ZONE_A, ZONE_B, BARE)] == [True, False, True]
    spec = {
        "nodeSelector": {"gen": "5"},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [expr("zone", "In", "a", "b")]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "preference": expr("zone", "In", "b")}
                ],
            }
        },
    }
    both = Placement.of(spec)  # preferred affinity only ranks nodes: it excludes none
    assert [admits(n, both) for n in (ZONE_A, ZONE_B, BARE)] == [True, False, False]
    assert Placement.of({}).affinity_terms is None
    assert all(admits(n, Placement.of({})) for n in (ZONE_A, ZONE_B, BARE))


def test_a_pod_whose_affinity_no_other_node_meets_fits_only_at_home() -> None:
    """It needs more than its own node has left, and the only node with room is outside its
    required zone: it fits nowhere, so the updater must leave it."""
    home = NodeRoom("n1", 100, 1000, labels=(("zone", "a"),))
    rooms = [home, ZONE_B]
    pinned = affinity(expr("zone", "In", "a"))
    assert place(rooms, "n1", (100, 100), (500, 100), pinned) is None
    assert place(rooms, "n1", (100, 100), (500, 100), Placement()) is not None
