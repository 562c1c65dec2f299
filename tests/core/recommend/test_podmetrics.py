"""The PodMetrics LIST read typed (msgspec) and read as plain JSON give the same items, on
generated LISTs with fields of every JSON type where the API sends one; a LIST of the shape
metrics-server sends is read typed."""

from __future__ import annotations

import json
import logging
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.recommend.podmetrics import (
    ContainerMetrics,
    PodMetrics,
    PodMetricsMeta,
    decode_pod_metrics_list,
    generic_items,
    pod_metrics_of,
    typed_items,
)
from app.core.recommend.samples import usage_from_metrics

MISSING = object()  # a field left out of its object

odd = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(0, 3), max_size=2),
    st.dictionaries(st.sampled_from(["cpu", "x"]), st.integers(0, 3), max_size=2),
)
names = st.text(alphabet="abc-1.\u00e9\u4e2d", max_size=6)
quantities = st.one_of(st.sampled_from(["123456n", "250m", "1Ki", "7", "1.5Gi", "x"]), odd)


def value(usual: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The value the API sends, mostly; sometimes another JSON type."""
    return st.one_of(usual, usual, usual, odd)


def field(usual: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """value(usual), or the field left out."""
    return st.one_of(value(usual), st.just(MISSING))


def obj(**fields: Any) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(fields).map(
        lambda d: {k: v for k, v in d.items() if v is not MISSING}
    )


usages = st.dictionaries(st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]), quantities)
containers = value(obj(name=field(names), usage=field(usages)))
items = value(
    obj(
        metadata=field(obj(name=field(names), namespace=field(names), labels=field(usages))),
        timestamp=field(st.sampled_from(["2024-07-01T00:00:00Z", "yesterday"])),
        window=field(st.just("30s")),
        containers=field(st.lists(containers, max_size=3)),
    )
)
lists = obj(kind=st.just("PodMetricsList"), items=field(st.lists(items, max_size=4)))


@settings(max_examples=400)
@given(lists)
def test_the_typed_reading_gives_what_the_plain_json_reading_gives(doc: dict[str, Any]) -> None:
    body = json.dumps(doc).encode()
    try:
        expected = generic_items(body)
    except ValueError as e:  # `items` not a list: refused, whichever way it is read
        with pytest.raises(ValueError, match=r"^a PodMetricsList's items is a list, got"):
            decode_pod_metrics_list(body)
        assert str(e).startswith("a PodMetricsList's items is a list")
        return
    assert decode_pod_metrics_list(body) == expected
    try:
        typed = typed_items(body)
    except msgspec.ValidationError:
        return  # not the usual shape: read as plain JSON (above)
    assert typed == expected


well_formed = st.lists(
    st.fixed_dictionaries(
        {
            "metadata": st.fixed_dictionaries(
                {"name": names, "namespace": names, "creationTimestamp": st.just("2024-07-01")}
            ),
            "timestamp": st.just("2024-07-01T00:00:00Z"),
            "window": st.just("30s"),
            "containers": st.lists(
                st.fixed_dictionaries(
                    {"name": names, "usage": st.fixed_dictionaries({"cpu": quantities})}
                ),
                max_size=3,
            ),
        }
    ),
    max_size=4,
)


@given(well_formed)
def test_the_lists_metrics_server_sends_are_read_typed(items: list[dict[str, Any]]) -> None:
    body = json.dumps({"kind": "PodMetricsList", "items": items}).encode()
    assert typed_items(body) == generic_items(body)
    assert [i.metadata.name for i in typed_items(body)] == [i["metadata"]["name"] for i in items]


def test_items_and_containers_that_are_not_objects_are_skipped_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = json.dumps(
        {
            "items": [
                "web-0",
                {
                    "metadata": {"name": "web-1", "namespace": "shop"},
                    "containers": [7, {"name": "app", "usage": "1m"}, {"name": "side"}],
                },
            ]
        }
    ).encode()
    with caplog.at_level(logging.WARNING):
        read = decode_pod_metrics_list(body)
    assert read == [PodMetrics(PodMetricsMeta("web-1", "shop"), None, [ContainerMetrics("side")])]
    assert "PodMetrics item 0 is not an object (str); skipped" in caplog.text
    assert "PodMetrics shop/web-1: a container that is not an object (7); skipped" in caplog.text
    assert (
        "PodMetrics shop/web-1 container app: usage '1m' is not an object; skipped" in caplog.text
    )


def test_usage_from_metrics_takes_an_item_read_either_way() -> None:
    item = {
        "metadata": {"name": "web-1", "namespace": "shop"},
        "timestamp": "2024-07-01T00:00:00Z",
        "containers": [{"name": "app", "usage": {"cpu": "250m", "memory": "1Ki"}}],
    }
    read = pod_metrics_of(item)
    assert read is not None
    assert usage_from_metrics(item) == usage_from_metrics(read)
    [u] = usage_from_metrics(read)
    assert (u.pod, u.container, u.cpu_cores, u.memory_bytes) == ("web-1", "app", 0.25, 1024.0)
    assert usage_from_metrics(["not", "an", "item"]) == []  # type: ignore[arg-type]
