"""PodActions.send_eviction writes the request now and reads its answer later (app.kube.posts):
against the simulated API server, a few evictions are out at once over connections of the
official client's pool and answered in order, each connection given back; through TLS (the
client's CA and server name) and through the client's proxy as the client reaches them."""

from __future__ import annotations

import contextlib
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from app.core.bodies import EvictionBody
from app.kube.actions import PodActions
from app.kube.client import _TimedREST
from app.kube.throttle import RateLimiter
from app.serving.certs import ensure, service_names
from tests.support.json_bodies import plain
from tests.support.updater_runs import NS, server_pods, web_api


@pytest.fixture(scope="module")
def api() -> Iterator[Any]:
    with web_api() as api:
        yield api


def _pool(api: Any) -> Any:
    return api.rest_client.pool_manager.connection_from_url(api.configuration.host)


def test_evictions_out_at_once_are_answered_in_order(api: Any) -> None:
    """Four sent before any answer is read, each its own connection; the answers read in order
    are the API server's (201, 404, 409 precondition, 201); the next four reuse the connections."""
    actions = PodActions(api, dry_run=True)
    pods = [p["metadata"] for p in server_pods(api)]
    bodies = [
        EvictionBody(NS, pods[0]["name"], pods[0]["uid"]),
        EvictionBody(NS, "no-such-pod"),
        EvictionBody(NS, pods[1]["name"], "an-older-uid"),
        EvictionBody(NS, pods[2]["name"], pods[2]["uid"]),
    ]
    sent = [actions.send_eviction(b) for b in bodies]
    opened = _pool(api).num_connections
    assert [s.outcome() for s in sent] == ["done", "gone", "gone", "done"]
    sent = [actions.send_eviction(b) for b in bodies]
    assert [s.outcome() for s in sent] == ["done", "gone", "gone", "done"]
    assert _pool(api).num_connections == opened  # the same connections, given back
    assert opened >= 4


def test_an_abandoned_eviction_frees_its_connection(api: Any) -> None:
    actions = PodActions(api, dry_run=True)
    pod = server_pods(api)[0]["metadata"]
    body = EvictionBody(NS, pod["name"], pod["uid"])
    sent = actions.send_eviction(body)
    sent.abandon()
    assert sent.outcome() == "failed"  # nothing to read any more
    assert actions.send_eviction(body).outcome() == "done"


class _Recorder(BaseHTTPRequestHandler):
    """Records each request line and answers 201 once `release` is set."""

    protocol_version = "HTTP/1.1"  # keep-alive, as kube-apiserver
    seen: list[str] = []
    answered: list[str] = []
    ports: list[int] = []  # each request's client port: its connection
    release = threading.Event()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.seen.append(self.path)
        self.ports.append(self.client_address[1])
        self.release.wait(10)
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")
        self.answered.append(self.path)

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a refused TLS handshake (the untrusted case) is expected


@contextlib.contextmanager
def _serving(tls: ssl.SSLContext | None = None) -> Iterator[ThreadingHTTPServer]:
    _Recorder.seen, _Recorder.answered, _Recorder.ports = [], [], []
    _Recorder.release = threading.Event()
    server = _Server(("127.0.0.1", 0), _Recorder)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        _Recorder.release.set()
        server.shutdown()
        server.server_close()


@pytest.fixture
def recorder() -> Iterator[ThreadingHTTPServer]:
    with _serving() as server:
        yield server


def _wait_for(n: int) -> None:
    deadline = time.monotonic() + 10
    while len(_Recorder.seen) < n and time.monotonic() < deadline:
        time.sleep(0.01)


def test_each_request_reaches_the_server_before_any_answer_is_read(
    recorder: ThreadingHTTPServer,
) -> None:
    """send_eviction returns with the request on the wire: three reach a server that holds every
    answer back, none of them read yet."""
    api = client.ApiClient(client.Configuration(host=f"http://127.0.0.1:{recorder.server_port}"))
    try:
        actions = PodActions(api, dry_run=True)
        sent = [actions.send_eviction(EvictionBody(NS, f"web-{i}")) for i in range(3)]
        _wait_for(3)
        assert _Recorder.answered == []
        assert sorted(_Recorder.seen) == [
            f"/api/v1/namespaces/{NS}/pods/web-{i}/eviction?dryRun=All" for i in range(3)
        ]
        _Recorder.release.set()
        assert [s.outcome() for s in sent] == ["done"] * 3
    finally:
        api.close()


def test_one_at_a_time_they_share_one_kept_alive_connection(
    recorder: ThreadingHTTPServer,
) -> None:
    """Each answer read whole leaves its connection open for the next eviction; one the server
    closes is replaced."""
    _Recorder.release.set()
    api = client.ApiClient(client.Configuration(host=f"http://127.0.0.1:{recorder.server_port}"))
    try:
        actions = PodActions(api, dry_run=True)
        assert [actions.evict(EvictionBody(NS, f"web-{i}")) for i in range(3)] == ["done"] * 3
        assert len(set(_Recorder.ports)) == 1
        _Recorder.protocol_version = "HTTP/1.0"  # the server now closes after each answer
        try:
            assert [actions.evict(EvictionBody(NS, f"web-{i}")) for i in range(2)] == ["done"] * 2
        finally:
            _Recorder.protocol_version = "HTTP/1.1"
        first, then = _Recorder.ports[0], _Recorder.ports[4]
        assert _Recorder.ports == [first] * 4 + [then] and then != first
    finally:
        api.close()


def test_the_pool_is_looked_up_once_until_the_manager_lets_it_go(
    recorder: ThreadingHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The API server's pool is asked of the pool manager for the first eviction only; after the
    manager's `clear` it is asked again, and the evictions go on in the manager's new pool."""
    _Recorder.release.set()
    api = client.ApiClient(client.Configuration(host=f"http://127.0.0.1:{recorder.server_port}"))
    manager = api.rest_client.pool_manager
    asked: list[Any] = []
    lookup = manager.connection_from_host

    def counted(*args: Any, **kwargs: Any) -> Any:
        pool = lookup(*args, **kwargs)
        asked.append(pool)
        return pool

    # counts the lookups; the requests go over HTTP
    monkeypatch.setattr(manager, "connection_from_host", counted)
    try:
        actions = PodActions(api, dry_run=True)
        assert [actions.evict(EvictionBody(NS, f"web-{i}")) for i in range(3)] == ["done"] * 3
        assert len(asked) == 1
        manager.clear()
        assert actions.evict(EvictionBody(NS, "web-0")) == "done"
        assert actions.evict(EvictionBody(NS, "web-1")) == "done"
        assert len(asked) == 2 and asked[1] is not asked[0]  # the manager's new pool
    finally:
        api.close()


def test_through_the_clients_proxy(recorder: ThreadingHTTPServer) -> None:
    """With a proxy configured, the eviction goes to the proxy with the absolute URL, as the
    client's own calls do (answered before send_eviction returns)."""
    _Recorder.release.set()
    cfg = client.Configuration(host="http://kube-apiserver.invalid:6443")
    cfg.proxy = f"http://127.0.0.1:{recorder.server_port}"
    api = client.ApiClient(cfg)
    try:
        assert PodActions(api).send_eviction(EvictionBody(NS, "web-1")).outcome() == "done"
    finally:
        api.close()
    assert _Recorder.seen == [
        f"http://kube-apiserver.invalid:6443/api/v1/namespaces/{NS}/pods/web-1/eviction"
    ]


@pytest.mark.parametrize("trusted", [True, False])
def test_over_tls_with_the_clients_ca_and_server_name(tmp_path: Path, trusted: bool) -> None:
    """TLS as the client configured it: verified with its CA for its tls_server_name; a server
    whose certificate the CA did not sign is a failed eviction, nothing sent."""
    certs, _ = ensure(tmp_path / "server", service_names("kubernetes", "default"))
    other, _ = ensure(tmp_path / "other", service_names("kubernetes", "default"))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certs.cert, certs.key)
    with _serving(ctx) as server:
        _Recorder.release.set()
        cfg = client.Configuration(host=f"https://127.0.0.1:{server.server_port}")
        cfg.ssl_ca_cert = str(certs.ca if trusted else other.ca)
        cfg.tls_server_name = "kubernetes.default.svc"
        api = client.ApiClient(cfg)
        try:
            outcome = PodActions(api).send_eviction(EvictionBody(NS, "web-1")).outcome()
        finally:
            api.close()
    assert outcome == ("done" if trusted else "failed")
    assert len(_Recorder.seen) == (1 if trusted else 0)


def test_an_answer_that_never_comes_is_unanswered_after_the_read_timeout(
    recorder: ThreadingHTTPServer,
) -> None:
    """The client's default (connect, read) timeout: the answer is waited for `read` seconds
    (0.3 here, where the server holds it for 10 s and the connect timeout is 30 s), then the
    eviction is `unanswered` (the server has it: it may be done) and its connection closed; the
    next one goes through."""
    cfg = client.Configuration(host=f"http://127.0.0.1:{recorder.server_port}")
    api = client.ApiClient(cfg)
    api.rest_client = _TimedREST(cfg, (30.0, 0.3), RateLimiter(0.0, 1))
    try:
        actions = PodActions(api, dry_run=True)
        assert actions.send_eviction(EvictionBody(NS, "web-1")).outcome() == "unanswered"
        assert _Recorder.answered == []  # given up before the server answered
        _Recorder.release.set()
        assert actions.send_eviction(EvictionBody(NS, "web-2")).outcome() == "done"
    finally:
        api.close()


def test_under_the_path_prefix_of_the_clients_host(recorder: ThreadingHTTPServer) -> None:
    """An API server behind a path prefix (the client's host setting carries it, as a proxy such
    as Rancher's gives it): the eviction goes under it, as the client's own calls do."""
    _Recorder.release.set()
    prefix = "/k8s/clusters/c-1"
    cfg = client.Configuration(host=f"http://127.0.0.1:{recorder.server_port}{prefix}")
    api = client.ApiClient(cfg)
    try:
        assert PodActions(api).send_eviction(EvictionBody(NS, "web-1")).outcome() == "done"
        client.CoreV1Api(api).create_namespaced_pod_eviction(
            "web-1", NS, plain({"metadata": {"name": "web-1"}})
        )
    finally:
        api.close()
    assert _Recorder.seen == [f"{prefix}/api/v1/namespaces/{NS}/pods/web-1/eviction"] * 2
