"""POST /scheduler/filter and /scheduler/prioritize as kube-scheduler sends them
(k8s.io/kube-scheduler/extender/v1: the Go structs have no json tags, so the keys are spelt as the
fields: Pod, Nodes, NodeNames; Host, Score), and bad input answered neutrally, never an error."""

from __future__ import annotations

import json
from typing import Any

import orjson
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import given
from hypothesis import strategies as st

from app.core.placement.windows import NodeLevel
from app.store.extensions import db
from app.store.node_levels import save_node_levels
from app.webhook import extender_of
from app.webhook.extender import priorities, priorities_json
from tests.support.pods import container, pod
from tests.support.reviews import add_recommendation, refresh

GI = 1 << 30
TOO_FULL = "rightsizer: the node's predicted level passes the filter threshold"


def node_level(name: str, cpu: float) -> NodeLevel:
    return NodeLevel(name, 4000, 16 * GI, (cpu,) * 3, (0.2,) * 3, 1_000_000.0)


def load_levels(app: Flask) -> None:
    levels = [node_level("low", 0.1), node_level("mid", 0.4), node_level("hot", 0.75)]
    save_node_levels(db.session, levels, 0.0)
    db.session.commit()
    assert extender_of(app).levels.refresh()
    refresh(app)


def web_pod() -> dict[str, Any]:
    """A pod asking for 1 CPU (its limit 2) of 4: 0.25 of a node."""
    return pod(container("app", {"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"}))


def call(client: FlaskClient, verb: str, body: Any) -> Any:
    data = body if isinstance(body, bytes) else json.dumps(body)
    resp = client.post(f"/scheduler/{verb}", data=data, content_type="application/json")
    assert resp.status_code == 200 and resp.mimetype == "application/json"
    return resp.get_json()


def args(names: list[str] | None = None, nodes: list[str] | None = None) -> dict[str, Any]:
    """ExtenderArgs as kube-scheduler encodes it: a nil pointer is null."""
    return {
        "Pod": web_pod(),
        "Nodes": None if nodes is None else {"items": [{"metadata": {"name": n}} for n in nodes]},
        "NodeNames": names,
    }


def test_prioritize_ranks_the_lowest_node_first(app: Flask, client: FlaskClient) -> None:
    load_levels(app)
    got = call(client, "prioritize", args(["hot", "low", "mid"]))
    assert [h["Host"] for h in got] == ["hot", "low", "mid"]  # the order sent
    score = {h["Host"]: h["Score"] for h in got}
    assert score["low"] > score["mid"] > score["hot"] >= 0 and score["low"] <= 10
    assert all(set(h) == {"Host", "Score"} for h in got)


def test_filter_uses_the_recommendation_not_the_requests(app: Flask, client: FlaskClient) -> None:
    load_levels(app)
    # requests: 0.75 + 0.25 = 1.0 of "hot": over the 90% threshold
    got = call(client, "filter", args(["low", "hot"]))
    assert got["NodeNames"] == ["low"] and got["FailedNodes"] == {"hot": TOO_FULL}
    assert got["FailedAndUnresolvableNodes"] == {} and got["Error"] == "" and got["Nodes"] is None
    add_recommendation(cpu=250)  # it uses a quarter of what it asks: 0.75 + 0.0625
    refresh(app)
    got = call(client, "filter", args(["low", "hot"]))
    assert got["NodeNames"] == ["low", "hot"] and got["FailedNodes"] == {}


def test_nodes_sent_whole_are_answered_whole(app: Flask, client: FlaskClient) -> None:
    """nodeCacheCapable: false: the Node objects come and go back in Nodes.items."""
    load_levels(app)
    got = call(client, "filter", args(nodes=["low", "hot"]))
    assert got["NodeNames"] is None
    assert got["Nodes"] == {"items": [{"metadata": {"name": "low"}}]}
    scores = call(client, "prioritize", args(nodes=["low", "hot"]))
    assert [h["Host"] for h in scores] == ["low", "hot"]


def test_keys_match_whatever_their_case(app: Flask, client: FlaskClient) -> None:
    """Go's encoding/json matches field names case-insensitively; so does the extender."""
    load_levels(app)
    body = {"pod": web_pod(), "nodenames": ["low", "hot"]}
    assert call(client, "filter", body)["NodeNames"] == ["low"]


def test_unknown_nodes_pass_and_score_as_the_emptiest(app: Flask, client: FlaskClient) -> None:
    load_levels(app)
    assert call(client, "filter", args(["new-node"]))["NodeNames"] == ["new-node"]
    got = call(client, "prioritize", args(["new-node", "low", "hot"]))
    assert [h["Score"] for h in got] == [10, 10, 0]


def test_empty_lists(app: Flask, client: FlaskClient) -> None:
    load_levels(app)
    assert call(client, "prioritize", args([])) == []
    assert call(client, "filter", args([]))["NodeNames"] == []
    assert call(client, "filter", args(nodes=[]))["Nodes"] == {"items": []}


def test_bad_bodies_are_answered_neutrally(app: Flask, client: FlaskClient) -> None:
    load_levels(app)
    neutral = {"Host": "hot", "Score": 0}
    no_pod = {"NodeNames": ["hot", 7, "low"]}
    assert call(client, "filter", no_pod)["NodeNames"] == ["hot", "low"]  # none filtered
    assert call(client, "prioritize", no_pod) == [neutral, {"Host": "low", "Score": 0}]
    bad_spec = {"Pod": {"spec": "no"}, "NodeNames": ["hot"]}
    assert call(client, "filter", bad_spec)["NodeNames"] == ["hot"]
    for body in (b"{not json", b"[]", b"", {"Pod": web_pod()}, {"Pod": web_pod(), "Nodes": 3}):
        assert call(client, "prioritize", body) == []
        got = call(client, "filter", body)
        assert got["NodeNames"] == [] and got["FailedNodes"] == {} and got["Error"] == ""


def test_neutral_until_levels_are_loaded(app: Flask, client: FlaskClient) -> None:
    refresh(app)
    assert call(client, "prioritize", args(["low"])) == [{"Host": "low", "Score": 0}]
    save_node_levels(db.session, [node_level("low", 0.95)], 0.0)
    db.session.commit()
    assert call(client, "filter", args(["low"]))["NodeNames"] == ["low"]  # not loaded yet
    extender_of(app).levels.refresh()
    assert call(client, "filter", args(["low"]))["NodeNames"] == []


def test_an_internal_error_answers_neutrally(app: Flask, client: FlaskClient) -> None:
    load_levels(app)

    def broken(pod: Any) -> Any:
        raise RuntimeError("bug")

    extender_of(app).pod_usage = broken  # type: ignore[method-assign]
    assert call(client, "filter", args(["hot"]))["NodeNames"] == ["hot"]
    assert call(client, "prioritize", args(["hot"])) == [{"Host": "hot", "Score": 0}]


def test_other_methods_and_verbs_are_not_the_extenders(client: FlaskClient) -> None:
    assert client.get("/scheduler/filter").status_code in (404, 405)
    assert client.post("/scheduler/bind", data=b"{}").status_code == 404


def bound_pod(uid: str, node: str) -> dict[str, Any]:
    p = web_pod()
    p["metadata"]["uid"] = uid
    p["spec"]["nodeName"] = node
    return p


def test_pods_bound_since_the_last_metrics_count_on_their_node(
    app: Flask, client: FlaskClient
) -> None:
    """Failed before the hot spots were fed: three pods bound to "low" since its metrics left
    it the best node for the next one."""
    load_levels(app)
    ext = extender_of(app)
    ext.clock = lambda: 1_000_010.0  # ten seconds after the levels' metrics
    for i in range(3):  # 3 x 0.25 of "low" on its way
        ext.bound(bound_pod(f"u{i}", "low"))
    score = {h["Host"]: h["Score"] for h in call(client, "prioritize", args(["low", "mid"]))}
    assert score["mid"] > score["low"]
    assert call(client, "filter", args(["low"]))["NodeNames"] == []  # 0.1 + 0.75 + 0.25
    ext.gone(bound_pod("u0", "low"))
    ext.gone(bound_pod("u1", "low"))
    assert call(client, "filter", args(["low"]))["NodeNames"] == ["low"]
    # metrics from a minute after the binds cover them: the levels alone count again
    newer = NodeLevel("low", 4000, 16 * GI, (0.1,) * 3, (0.2,) * 3, 1_000_100.0)
    save_node_levels(db.session, [newer], 0.0)
    db.session.commit()
    ext.levels.refresh()
    ext.clock = lambda: 1_000_101.0
    assert len(ext.hot) == 1
    call(client, "prioritize", args(["low"]))
    assert len(ext.hot) == 0


def test_pods_deleted_since_the_last_metrics_no_longer_count(
    app: Flask, client: FlaskClient
) -> None:
    """A rollout deleted "mid"'s pod ten seconds after its metrics: "mid" is no fuller than
    its levels less that pod (failed before the deletions were held: "mid" kept its level)."""
    load_levels(app)
    ext = extender_of(app)
    ext.clock = lambda: 1_000_010.0
    before = {h["Host"]: h["Score"] for h in call(client, "prioritize", args(["low", "mid"]))}
    ext.gone(bound_pod("old", "mid"))  # 0.25 of "mid" predicted gone: 0.4 -> 0.15
    after = {h["Host"]: h["Score"] for h in call(client, "prioritize", args(["low", "mid"]))}
    assert before["mid"] < before["low"] and after["mid"] > before["mid"]


@given(st.lists(st.text(), max_size=20), st.data())
def test_priorities_encoded_as_orjson_encodes_them(names: list[str], data: Any) -> None:
    """The HostPriorityList cut from one encoding of the names: whatever the names hold
    (quotes, commas, backslashes, the separator itself), the JSON of the dicts."""
    scores = data.draw(st.lists(st.integers(0, 10), min_size=len(names), max_size=len(names)))
    if names:  # and the worst names, each time
        names, scores = [*names, '","', 'a\\",\\"b', "\\", '"', ","], [*scores, 10, 0, 3, 4, 5]
    got = priorities_json(names, scores)
    assert orjson.loads(got) == priorities(names, scores)
    assert got == orjson.dumps(priorities(names, scores))
