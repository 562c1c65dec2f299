"""The simulated API server's watch-list (Kubernetes' WatchList: `sendInitialEvents`) and the
ListOptions rules around it, as kube-apiserver has them (validation.go's ValidateListOptions and
validateWatchOptions, the watch cache's start of a watch, the WatchList gate of each release),
driven with the official client; and the informer built on it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.kube.informer import Informer
from app.simulator.testing import running_simulator
from tests.support.json_bodies import plain, raw_answer
from tests.support.processes import wait_for

NS = "app"
NODES = [{"namePrefix": "node", "count": 1, "cpu": "4", "memory": "16Gi"}]
WATCH_LIST: dict[str, Any] = {
    "watch": True,
    "send_initial_events": True,
    "resource_version_match": "NotOlderThan",
    "allow_watch_bookmarks": True,
}


def scenario(version: str) -> dict[str, Any]:
    return {"nodes": NODES, "namespaces": [{"name": NS}], "kubernetesVersion": version}


@pytest.fixture
def sim134() -> Iterator[tuple[Any, client.CoreV1Api]]:
    with running_simulator(scenario("1.34")) as sim:
        api = sim.api_client()
        core = client.CoreV1Api(api)
        for i in range(3):
            core.create_namespaced_config_map(NS, plain({"metadata": {"name": f"c{i}"}}))
        try:
            yield sim, core
        finally:
            api.close()


def events(core: client.CoreV1Api, until: Any = None, **options: Any) -> list[dict[str, Any]]:
    """The watch events of config maps in NS as they come, until `until(events)` is true (then
    the connection is closed) or the server ends the watch."""
    resp = core.list_namespaced_config_map(NS, _preload_content=False, **options)
    out: list[dict[str, Any]] = []
    buf = b""
    try:
        for chunk in raw_answer(resp).stream(amt=None, decode_content=False):
            buf += chunk
            *lines, buf = buf.split(b"\n")
            out += [json.loads(line) for line in lines if line.strip()]
            if until is not None and until(out):
                break
    finally:
        raw_answer(resp).release_conn()
    return out


def status_of(e: ApiException) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(e.body)
    return body


def names(evs: list[dict[str, Any]], type_: str) -> list[str]:
    return [e["object"]["metadata"]["name"] for e in evs if e["type"] == type_]


def test_a_watch_list_streams_the_state_then_the_end_bookmark_then_changes(sim134: Any) -> None:
    _, core = sim134
    list_rv = core.list_namespaced_config_map(NS).metadata.resource_version

    def changed_after_bookmark(evs: list[dict[str, Any]]) -> bool:
        if any(e["type"] == "BOOKMARK" for e in evs) and not any(
            e["type"] == "MODIFIED" for e in evs
        ):
            core.patch_namespaced_config_map("c1", NS, {"data": {"k": "v"}})
        return any(e["type"] == "MODIFIED" for e in evs)

    evs = events(core, changed_after_bookmark, timeout_seconds=10, **WATCH_LIST)
    kinds = [e["type"] for e in evs]
    assert kinds[:3] == ["ADDED"] * 3 and sorted(names(evs, "ADDED")) == ["c0", "c1", "c2"]
    bookmark = evs[3]
    assert bookmark["type"] == "BOOKMARK"
    meta = bookmark["object"]["metadata"]
    assert meta["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert meta["resourceVersion"] == list_rv
    assert bookmark["object"]["kind"] == "ConfigMap"
    assert kinds[4:] == ["MODIFIED"] and names(evs, "MODIFIED") == ["c1"]


def test_without_bookmarks_the_initial_state_has_no_end_marker(sim134: Any) -> None:
    _, core = sim134
    options = {**WATCH_LIST, "allow_watch_bookmarks": False}
    evs = events(core, None, timeout_seconds=1, **options)
    assert [e["type"] for e in evs] == ["ADDED"] * 3


def test_send_initial_events_false_starts_from_now(sim134: Any) -> None:
    _, core = sim134

    def created(evs: list[dict[str, Any]]) -> bool:
        return any(e["type"] == "ADDED" for e in evs)

    options = {**WATCH_LIST, "send_initial_events": False}
    resp = core.list_namespaced_config_map(NS, _preload_content=False, timeout_seconds=2, **options)
    core.create_namespaced_config_map(NS, {"metadata": {"name": "later"}})
    lines = [json.loads(x) for x in resp.data.splitlines() if x.strip()]
    assert [(e["type"], e["object"]["metadata"].get("name")) for e in lines][:1] == [
        ("ADDED", "later")
    ]
    assert created(lines)


@pytest.mark.parametrize(
    ("options", "causes"),
    [
        (
            {"watch": True, "send_initial_events": True},
            [
                (
                    "resourceVersionMatch",
                    "Forbidden: sendInitialEvents requires setting resourceVersionMatch to "
                    "NotOlderThan",
                )
            ],
        ),
        (
            {"watch": True, "resource_version_match": "NotOlderThan"},
            [
                (
                    "resourceVersionMatch",
                    "Forbidden: resourceVersionMatch is forbidden for watch unless "
                    "sendInitialEvents is provided",
                )
            ],
        ),
        (
            {"watch": True, "send_initial_events": True, "resource_version_match": "Exact"},
            [
                (
                    "resourceVersionMatch",
                    "Forbidden: sendInitialEvents requires setting resourceVersionMatch to "
                    "NotOlderThan",
                ),
                (
                    "resourceVersionMatch",
                    'Unsupported value: "Exact": supported values: "NotOlderThan"',
                ),
            ],
        ),
        (
            {"send_initial_events": True},
            [("sendInitialEvents", "Forbidden: sendInitialEvents is forbidden for list")],
        ),
        (
            {"resource_version_match": "NotOlderThan"},
            [
                (
                    "resourceVersionMatch",
                    "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is "
                    "provided",
                )
            ],
        ),
        (
            {"resource_version": "0", "resource_version_match": "Exact"},
            [
                (
                    "resourceVersionMatch",
                    'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                )
            ],
        ),
    ],
)
def test_list_options_are_checked_as_kube_apiserver_checks_them(
    sim134: Any, options: dict[str, Any], causes: list[tuple[str, str]]
) -> None:
    _, core = sim134
    with pytest.raises(ApiException) as caught:
        core.list_namespaced_config_map(NS, timeout_seconds=1, **options)
    assert caught.value.status == 422
    status = status_of(caught.value)
    assert status["reason"] == "Invalid"
    assert (
        status["details"]["kind"] == "ListOptions" and status["details"]["group"] == "meta.k8s.io"
    )
    assert "name" not in status["details"]
    assert [(c["field"], c["message"]) for c in status["details"]["causes"]] == causes
    first = f"{causes[0][0]}: {causes[0][1]}"
    assert status["message"].startswith('ListOptions.meta.k8s.io "" is invalid: ')
    assert first in status["message"]


def test_kubernetes_1_33_turned_the_watch_list_gate_off() -> None:
    with running_simulator(scenario("1.33")) as sim:
        api = sim.api_client()
        try:
            core = client.CoreV1Api(api)
            with pytest.raises(ApiException) as caught:
                core.list_namespaced_config_map(NS, timeout_seconds=1, **WATCH_LIST)
            status = status_of(caught.value)
            assert caught.value.status == 422
            assert [(c["field"], c["message"]) for c in status["details"]["causes"]] == [
                (
                    "sendInitialEvents",
                    "Forbidden: sendInitialEvents is forbidden for watch unless the WatchList "
                    "feature gate is enabled",
                )
            ]
        finally:
            api.close()


@pytest.mark.parametrize(("version", "streamed"), [("1.34", True), ("1.33", False)])
def test_the_informer_syncs_from_a_watch_list_where_served_else_lists(
    version: str, streamed: bool
) -> None:
    """Against 1.34 the cache is filled by one watch-list request (no LIST at all) and follows
    changes on the same connection; against 1.33 the server refuses it (422), the informer
    lists instead and does not ask again when it re-syncs."""
    with running_simulator(scenario(version)) as sim:
        api = sim.api_client()
        core = client.CoreV1Api(api)
        for i in range(5):
            core.create_namespaced_config_map(NS, plain({"metadata": {"name": f"c{i}"}}))
        sim.reset_stats()
        inf = Informer("configmaps", core.list_config_map_for_all_namespaces)
        inf.start()
        try:
            assert inf.wait_synced(30)
            wait_for(lambda: inf.live(), 10, "the informer following the server")
            assert {n for (ns, n) in inf.objects if ns == NS} == {f"c{i}" for i in range(5)}
            stats = sim.stats()["byResource"]["configmaps"]
            assert (inf.watch_lists, inf.lists) == ((1, 1) if streamed else (0, 1))
            assert stats.get("list", 0) == (0 if streamed else 1), stats
            before = inf.snapshot()  # the cache by key, as it is now
            assert {k: before[k] for k in before if k[0] == NS} == {
                (NS, f"c{i}"): inf.get(NS, f"c{i}") for i in range(5)
            }
            core.create_namespaced_config_map(NS, plain({"metadata": {"name": "new"}}))
            wait_for(lambda: inf.get(NS, "new") is not None, 10, "a change after the sync")
            assert inf.watch_list is streamed
            assert (NS, "new") not in before and (NS, "new") in inf.snapshot()  # a copy
        finally:
            inf.stop()
            api.close()
