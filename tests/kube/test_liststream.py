"""LIST responses read item by item (app.kube.liststream): whatever the chunking, the same items
and members as json.loads of the whole body; each item handed over as soon as it has arrived."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kubernetes import client

from app.kube.informer import Informer
from app.kube.liststream import read_list
from app.simulator.testing import EMPTY, running_simulator
from tests.support.json_bodies import plain, raw_body

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
items = st.lists(st.dictionaries(st.text(max_size=8), values, max_size=5), max_size=8)


def chunked(body: bytes, sizes: list[int]) -> Iterator[bytes]:
    i = 0
    for n in sizes:
        if i >= len(body):
            return
        yield body[i : i + n]
        i += n
    if i < len(body):
        yield body[i:]


@settings(max_examples=200, deadline=None)
@given(
    items=items,
    meta=st.dictionaries(st.sampled_from(["resourceVersion", "continue"]), st.text(max_size=10)),
    sizes=st.lists(st.integers(min_value=1, max_value=40), max_size=60),
    indent=st.sampled_from([None, 0, 2]),
    ascii_only=st.booleans(),
    items_first=st.booleans(),
)
def test_any_chunking_reads_what_json_loads_reads(
    items: list[dict[str, Any]],
    meta: dict[str, str],
    sizes: list[int],
    indent: int | None,
    ascii_only: bool,
    items_first: bool,
) -> None:
    doc: dict[str, Any] = {"kind": "PodList", "apiVersion": "v1", "metadata": meta}
    doc = {"items": items, **doc} if items_first else {**doc, "items": items}
    body = json.dumps(doc, indent=indent, ensure_ascii=ascii_only).encode()
    got: list[dict[str, Any]] = []
    rest = read_list(chunked(body, sizes), got.append)
    whole = json.loads(body)
    assert got == whole.pop("items")
    assert rest == whole


def test_each_item_is_handed_over_before_the_rest_of_the_body_is_read() -> None:
    doc = {
        "metadata": {"resourceVersion": "7"},
        "items": [{"n": i, "pad": "x" * 100} for i in range(100)],
    }
    body = json.dumps(doc).encode()
    read = [0]

    def chunks() -> Iterator[bytes]:
        for i in range(0, len(body), 64):
            read[0] += 64
            yield body[i : i + 64]

    seen_at: list[int] = []
    rest = read_list(chunks(), lambda item: seen_at.append(read[0]))
    assert len(seen_at) == 100 and rest == {"metadata": {"resourceVersion": "7"}}
    # the first item arrived once its own bytes had, not after the whole body (about 12 KB)
    assert seen_at[0] <= 256 < len(body)
    assert all(b - a <= 192 for a, b in itertools.pairwise(seen_at))


@pytest.mark.parametrize(
    "body",
    [b"", b"[]", b'{"items": [1, 2', b'{"items": [{"a": 1}} ', b'{"metadata": {}'],
)
def test_a_malformed_body_is_an_error(body: bytes) -> None:
    with pytest.raises(ValueError):
        read_list(iter([body]), lambda item: None)


def test_the_informer_lists_the_official_client_s_stream_item_by_item() -> None:
    """A LIST of a few hundred objects through the official client as the informer makes it
    (one response at resourceVersion=0), read item by item: the cache holds what the server
    has, at the list's resourceVersion."""
    with running_simulator(EMPTY) as sim:
        api = sim.api_client()
        core = client.CoreV1Api(api)
        core.create_namespace(plain({"metadata": {"name": "app"}}))
        for i in range(300):
            core.create_namespaced_config_map(
                "app", plain({"metadata": {"name": f"c{i}"}, "data": {"i": "é" * i}})
            )
        inf = Informer("configmaps", core.list_config_map_for_all_namespaces)
        inf.start()
        try:
            assert inf.wait_synced(30)
            server = json.loads(
                raw_body(core.list_namespaced_config_map("app", _preload_content=False))
            )
            assert {n: o["data"] for (_, n), o in inf.objects.items() if n.startswith("c")} == {
                o["metadata"]["name"]: o["data"] for o in server["items"]
            }
            assert inf.lists == 1 and inf.resource_version == server["metadata"]["resourceVersion"]
        finally:
            inf.stop()
            api.close()
