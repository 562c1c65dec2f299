"""Pods bound since their node's last metrics add their predicted usage, until covered."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.core.placement.hotspots import HotSpots


def test_bound_pods_add_until_metrics_cover_them() -> None:
    h = HotSpots(lag=60.0, expire=600.0)
    h.bound("p1", "a", 500, 100, at=1000.0)
    h.bound("p2", "a", 250, 50, at=1030.0)
    h.bound("p1", "a", 500, 100, at=1040.0)  # seen again: not twice
    assert h.extra("a") == (750, 150)
    h.covered({"a": 1059.0}, now=1060.0)  # metrics too soon after p1's bind
    assert h.extra("a") == (750, 150)
    h.covered({"a": 1060.0}, now=1061.0)  # p1 covered, p2 not yet
    assert h.extra("a") == (250, 50)
    h.covered({"a": 1090.0}, now=1091.0)
    assert h.extra("a") == (0, 0) and len(h) == 0


def test_expiry_and_deletion() -> None:
    h = HotSpots(lag=60.0, expire=600.0)
    h.bound("p1", "a", 500, 100, at=0.0)
    h.bound("p2", "b", 100, 10, at=500.0)
    h.covered({}, now=601.0)  # no metrics at all: p1 expired
    assert h.extra("a") == (0, 0) and h.extra("b") == (100, 10)
    h.gone("p2")
    h.gone("never-seen")
    assert h.nodes() == {}


def test_memory_bounded_oldest_dropped_first() -> None:
    h = HotSpots(max_pods=3)
    for i in range(5):
        h.bound(f"p{i}", "a", 1, 1, at=float(i))
    assert len(h) == 3 and h.extra("a") == (3, 3)
    h.gone("p0")  # already dropped
    assert h.extra("a") == (3, 3)


@given(st.lists(st.tuples(st.integers(0, 9), st.sampled_from("abc"), st.booleans()), max_size=60))
def test_totals_equal_the_pods_held(ops: list[tuple[int, str, bool]]) -> None:
    h = HotSpots(max_pods=5)
    for i, (uid, node, add) in enumerate(ops):
        if add:
            h.bound(str(uid), node, uid + 1, 2 * uid + 1, at=float(i))
        else:
            h.gone(str(uid))
    expected: dict[str, tuple[int, int]] = {}
    for b in h._pods.values():
        c, m = expected.get(b.node, (0, 0))
        expected[b.node] = (c + b.cpu, m + b.memory)
    assert h.nodes() == expected and len(h) <= 5


def test_pods_deleted_since_the_metrics_subtract_until_covered() -> None:
    """A rollout deletes a node's pods: its metrics still count them until the next scrape."""
    h = HotSpots(lag=60.0, expire=600.0)
    h.gone("old", "a", 500, 100, at=1000.0)  # bound long ago: in the metrics
    h.gone("old", "a", 500, 100, at=1001.0)  # told twice: once
    assert h.extra("a") == (-500, -100)
    h.bound("new", "a", 300, 50, at=1002.0)
    h.gone("new", "a", 300, 50, at=1003.0)  # bound since the metrics: only dropped
    assert h.extra("a") == (-500, -100)
    h.covered({"a": 1060.0}, now=1061.0)
    assert h.extra("a") == (0, 0) and len(h) == 0
    h.gone("nothing", "a", 0, 0, at=1100.0)  # predicted nothing: nothing held
    assert len(h) == 0
