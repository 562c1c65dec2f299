"""The simulated scheduler calls extenders as kube-scheduler does (pkg/scheduler/extender.go,
schedule_one.go): filter after its own filters, then `weight x score x 10` added to its own
0-100 scores; an unreachable extender fails the attempt unless ignorable; prioritize errors are
skipped. A real HTTP server stands in for the extender and records what it is sent."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from app.simulator.control.cluster import SimCluster
from app.simulator.control.extenders import HTTPExtender, parse_extenders
from app.simulator.control.scheduler import NodeUse, choose_node
from app.simulator.scenarios.scenario import ScenarioError, parse


class Fake:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.filter_answer: Any = None
        self.scores: dict[str, int] = {}
        self.status = 200


@pytest.fixture
def fake() -> Iterator[tuple[Fake, str]]:
    state = Fake()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            verb = self.path.rsplit("/", 1)[-1]
            state.calls.append((verb, body))
            if verb == "filter":
                names = body["NodeNames"] or [n["metadata"]["name"] for n in body["Nodes"]["items"]]
                answer = state.filter_answer or {"NodeNames": names, "FailedNodes": {}, "Error": ""}
            else:
                names = body["NodeNames"]
                answer = [{"Host": n, "Score": state.scores.get(n, 0)} for n in names]
            data = json.dumps(answer).encode()
            self.send_response(state.status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield state, f"http://127.0.0.1:{server.server_address[1]}/scheduler"
    server.shutdown()
    server.server_close()


def cluster() -> SimCluster:
    c = SimCluster()
    for name in ("a", "b", "c"):
        c.add_node(name)
    return c


def pod(cpu: str = "500m") -> dict[str, Any]:
    return {
        "metadata": {"name": "web-1", "namespace": "shop"},
        "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": cpu}}}]},
    }


def extender(url: str, **fields: Any) -> HTTPExtender:
    config = {"urlPrefix": url, "filterVerb": "filter", "prioritizeVerb": "prioritize"}
    return HTTPExtender.parse({**config, "nodeCacheCapable": True, **fields})


def test_the_extenders_score_decides_between_equal_nodes(fake: tuple[Fake, str]) -> None:
    state, url = fake
    c = cluster()
    assert choose_node(c.store, c.node_usage, pod())[0] == "a"  # all equal: the first
    state.scores = {"c": 7, "b": 3}
    node, _ = choose_node(c.store, c.node_usage, pod(), [extender(url)])
    assert node == "c"
    (verb1, args1), (verb2, args2) = state.calls
    assert (verb1, verb2) == ("filter", "prioritize")
    assert args1 == {"Pod": pod(), "Nodes": None, "NodeNames": ["a", "b", "c"]}
    assert args2["NodeNames"] == ["a", "b", "c"]


def test_weight_times_score_times_ten_against_the_own_score(fake: tuple[Fake, str]) -> None:
    """Node "a" half full of CPU requests: LeastAllocated (the mean free share of CPU and memory,
    x 100) puts it 25.2 points below "b"; an extender's point is worth weight x 10."""
    state, url = fake
    c = cluster()
    c.node_usage.by_node["a"] = NodeUse(cpu=3900)  # of 7740m allocatable
    state.scores = {"a": 3, "b": 0}
    assert choose_node(c.store, c.node_usage, pod(), [extender(url)])[0] == "a"  # 30 > 25
    state.scores = {"a": 2, "b": 0}
    assert choose_node(c.store, c.node_usage, pod(), [extender(url)])[0] == "b"  # 20 < 25
    assert choose_node(c.store, c.node_usage, pod(), [extender(url, weight=2)])[0] == "a"


def test_filtered_nodes_fail_with_the_extenders_message(fake: tuple[Fake, str]) -> None:
    state, url = fake
    c = cluster()
    state.filter_answer = {
        "NodeNames": [],
        "FailedNodes": {"a": "too hot", "b": "too hot"},
        "FailedAndUnresolvableNodes": {"c": "never"},
    }
    node, message = choose_node(c.store, c.node_usage, pod(), [extender(url)])
    assert node is None
    assert message.startswith("0/3 nodes are available: 1 never, 2 too hot.")
    state.filter_answer = {"NodeNames": ["b"], "FailedNodes": {}}
    state.calls.clear()
    assert choose_node(c.store, c.node_usage, pod(), [extender(url)])[0] == "b"
    assert [v for v, _ in state.calls] == ["filter"]  # one feasible node: not scored


def test_nodes_sent_whole_without_node_cache(fake: tuple[Fake, str]) -> None:
    state, url = fake
    c = cluster()
    choose_node(c.store, c.node_usage, pod(), [extender(url, nodeCacheCapable=False)])
    _, args = state.calls[0]
    assert args["NodeNames"] is None
    assert [n["metadata"]["name"] for n in args["Nodes"]["items"]] == ["a", "b", "c"]


def test_an_unreachable_extender_fails_unless_ignorable() -> None:
    c = cluster()
    gone = "http://127.0.0.1:9/scheduler"  # discard port: nothing listens
    node, message = choose_node(c.store, c.node_usage, pod(), [extender(gone, httpTimeout="1s")])
    assert node is None and "filter" in message
    ignorable = extender(gone, ignorable=True, httpTimeout="1s")
    assert choose_node(c.store, c.node_usage, pod(), [ignorable])[0] == "a"


def test_prioritize_errors_are_skipped(fake: tuple[Fake, str]) -> None:
    state, url = fake
    c = cluster()
    broken = extender(url, prioritizeVerb="nope", filterVerb="")
    state.status = 500
    assert choose_node(c.store, c.node_usage, pod(), [broken])[0] == "a"


def test_configuration_checked() -> None:
    with pytest.raises(ValueError, match=r"\[0\]: urlPrefix"):
        parse_extenders([{"filterVerb": "filter"}])
    with pytest.raises(ValueError, match="weight"):
        parse_extenders([{"urlPrefix": "http://x", "weight": 0}])
    with pytest.raises(ValueError, match="unknown field"):
        parse_extenders([{"urlPrefix": "http://x", "verb": "x"}])
    with pytest.raises(ScenarioError, match=r"schedulerExtenders\[0\]: urlPrefix"):
        parse({"schedulerExtenders": [{"urlPrefix": "ftp://x"}]})
    scenario = parse({"schedulerExtenders": [{"urlPrefix": "http://x/s", "weight": 5}]})
    assert scenario.scheduler_extenders[0].weight == 5
