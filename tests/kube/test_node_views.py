"""Node views parsed once while a node's cached object stays (app/kube/node_views.py)."""

from __future__ import annotations

from typing import Any

from app.core.nodes import NodeView
from app.kube.node_views import NodeViews


def node(name: str, cpu: str = "4") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"zone": "a"}},
        "status": {
            "allocatable": {"cpu": cpu, "memory": "8Gi"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


class Cache:
    """An informer's cache as NodeViews reads it: a watch event replaces an object."""

    def __init__(self, *nodes: dict[str, Any]) -> None:
        self.objects = {n["metadata"]["name"]: n for n in nodes}

    def items(self) -> list[Any]:
        return list(self.objects.values())


def test_a_node_is_parsed_again_only_once_its_object_is_replaced() -> None:
    cache = Cache(node("a"), node("b"))
    views = NodeViews(cache)
    first = views.views()
    assert first == [NodeView.parse(n) for n in cache.items()]
    again = views.views()
    assert [v is w for v, w in zip(first, again, strict=True)] == [True, True]  # not parsed
    cache.objects["b"] = node("b", cpu="8")  # a MODIFIED event
    del cache.objects["a"]  # a DELETED one
    cache.objects["c"] = node("c")
    third = views.views()
    assert [v.name for v in third] == ["b", "c"]
    assert third[0].cpu_allocatable == 8000 and first[1].cpu_allocatable == 4000
    assert third == [NodeView.parse(n) for n in cache.items()]
    assert len(views._known) == 2  # the deleted and the replaced objects let go
