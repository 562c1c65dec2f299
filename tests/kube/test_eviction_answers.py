"""PodActions.evict sends the Eviction through the official client's own pool manager (its headers,
auth, rate limiter and timeout) and reads only the answer's status (and, on an error, the Status
message): each answer of the simulated API server reads as the updater's outcome, and an error
answer gives its connection back for the next request."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from kubernetes import client

from app.core.bodies import EvictionBody
from app.kube.actions import EVICTION_PATH, PodActions
from app.kube.client import api_client
from app.kube.throttle import RateLimiter
from tests.support.updater_runs import NS, server_pods, web_api
from tools import rbac


@pytest.fixture(scope="module")
def api() -> Iterator[Any]:
    with web_api() as api:
        yield api


def _budget(api: Any, name: str, min_available: int) -> None:
    policy: Any = client.PolicyV1Api(api)  # Any: plain JSON bodies
    policy.create_namespaced_pod_disruption_budget(
        NS,
        {
            "metadata": {"name": name},
            "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": "web"}}},
        },
    )


def _drop_budgets(api: Any) -> None:
    policy: Any = client.PolicyV1Api(api)
    for pdb in policy.list_namespaced_pod_disruption_budget(NS).items:
        policy.delete_namespaced_pod_disruption_budget(pdb.metadata.name, NS)


def _pod(api: Any) -> tuple[str, str]:
    pod = server_pods(api)[0]["metadata"]
    return pod["name"], pod["uid"]


def _connections(api: Any) -> int:
    """Connections the client's pool opened to the API server so far."""
    pool = api.rest_client.pool_manager.connection_from_url(api.configuration.host)
    return int(pool.num_connections)


def test_the_eviction_path_is_the_typed_methods() -> None:
    """The path evict sends to is the one create_namespaced_pod_eviction builds (and the RBAC
    rule tools/rbac.py grants from that method)."""
    assert rbac.endpoint_of_path(EVICTION_PATH) == rbac.endpoint_of(
        "CoreV1Api", "create_namespaced_pod_eviction"
    )
    assert ("", "pods/eviction", "create") in rbac.required_permissions()


def test_a_dry_run_eviction_is_done_and_leaves_the_pod(api: Any) -> None:
    name, uid = _pod(api)
    assert PodActions(api, dry_run=True).evict(EvictionBody(NS, name, uid)) == "done"
    assert (name, uid) in {(p["metadata"]["name"], p["metadata"]["uid"]) for p in server_pods(api)}


def test_a_missing_pod_is_gone(api: Any) -> None:  # 404
    assert PodActions(api, dry_run=True).evict(EvictionBody(NS, "no-such-pod")) == "gone"


def test_another_pod_of_that_name_is_gone(api: Any) -> None:  # 409 Precondition failed
    name, _ = _pod(api)
    assert PodActions(api, dry_run=True).evict(EvictionBody(NS, name, "an-older-uid")) == "gone"


def test_a_budget_that_allows_no_disruption_blocks(
    api: Any, caplog: pytest.LogCaptureFixture
) -> None:  # 429
    name, uid = _pod(api)
    _budget(api, "all-of-web", 3)
    try:
        caplog.set_level("INFO", logger="app.kube.actions")
        assert PodActions(api, dry_run=True).evict(EvictionBody(NS, name, uid)) == "blocked"
        # the API server's Status message, not only the HTTP reason
        assert "would violate the pod's disruption budget" in caplog.text
    finally:
        _drop_budgets(api)
    assert PodActions(api, dry_run=True).evict(EvictionBody(NS, name, uid)) == "done"


def test_two_budgets_for_one_pod_fail(api: Any, caplog: pytest.LogCaptureFixture) -> None:  # 500
    name, uid = _pod(api)
    _budget(api, "one", 1)
    _budget(api, "two", 1)
    try:
        assert PodActions(api, dry_run=True).evict(EvictionBody(NS, name, uid)) == "failed"
        assert "more than one PodDisruptionBudget" in caplog.text
    finally:
        _drop_budgets(api)


def test_error_answers_give_their_connection_back(api: Any) -> None:
    """Each answer is read to its end and its connection returned: thirty error answers in a
    row, then a success, all go over connections already open."""
    actions = PodActions(api, dry_run=True)
    name, uid = _pod(api)
    actions.evict(EvictionBody(NS, name, uid))
    opened = _connections(api)
    for _ in range(15):
        assert actions.evict(EvictionBody(NS, "no-such-pod")) == "gone"
        assert actions.evict(EvictionBody(NS, name, "an-older-uid")) == "gone"
    assert actions.evict(EvictionBody(NS, name, uid)) == "done"
    assert _connections(api) == opened


def test_an_unreachable_api_server_is_a_failed_eviction(api: Any) -> None:
    name, uid = _pod(api)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    unreachable = client.ApiClient(client.Configuration(host=f"http://127.0.0.1:{port}"))
    try:
        assert PodActions(unreachable, dry_run=True).evict(EvictionBody(NS, name, uid)) == "failed"
    finally:
        unreachable.close()


class _Recorder(BaseHTTPRequestHandler):
    """Records each request (method, path, headers, body) and answers 201 with a small body."""

    seen: list[tuple[str, str, dict[str, str], bytes]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.seen.append(
            (self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        )
        answer = b'{"kind":"Status","status":"Success"}'
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    do_GET = do_POST

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_an_eviction_is_sent_as_the_typed_method_sends_it() -> None:
    """One POST to the eviction path (no GET before it), dryRun=All in a dry run, the client's
    default headers and bearer token, a JSON body with the uid precondition, and the JSON content
    type the typed method declares."""
    _Recorder.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    cfg = client.Configuration(host=f"http://127.0.0.1:{server.server_address[1]}")
    cfg.api_key = {"authorization": "the-token"}
    cfg.api_key_prefix = {"authorization": "Bearer"}
    api = client.ApiClient(cfg)
    try:
        body = EvictionBody("team a", "web-1", "uid-1")
        assert PodActions(api, dry_run=True).evict(body) == "done"
        assert PodActions(api).evict(EvictionBody(NS, "web-2")) == "done"
    finally:
        api.close()
        server.shutdown()
        server.server_close()
    (method, path, headers, sent), (_, path2, _, sent2) = _Recorder.seen
    assert method == "POST"
    assert path == "/api/v1/namespaces/team%20a/pods/web-1/eviction?dryRun=All"
    assert path2 == f"/api/v1/namespaces/{NS}/pods/web-2/eviction"
    assert headers["authorization"] == "Bearer the-token"
    assert headers["content-type"] == "application/json"
    assert headers["accept"] == "application/json"
    assert headers["user-agent"] == api.user_agent
    assert json.loads(sent) == body.to_dict()
    assert json.loads(sent)["deleteOptions"] == {"preconditions": {"uid": "uid-1"}}
    assert "deleteOptions" not in json.loads(sent2)


def test_each_eviction_waits_for_the_clients_rate_limiter() -> None:
    """rightsizer's client (app.kube.client) paces evictions as every other request: with 1 qps
    and a burst of 1, the second and third eviction each wait for their token."""
    with web_api(connect=lambda sim: api_client(sim.kubeconfig_path, qps=1, burst=1)) as api:
        name, uid = _pod(api)
        waits: list[float] = []  # recorded, not slept; the clock stands still
        api.rest_client.limiter = RateLimiter(1.0, 1, clock=lambda: 100.0, sleep=waits.append)
        actions = PodActions(api, dry_run=True)
        for _ in range(3):
            assert actions.evict(EvictionBody(NS, name, uid)) == "done"
        assert waits == [1.0, 2.0]
