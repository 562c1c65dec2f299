"""A connection goes back to the client's pool only with its answer read to the end
(app.kube.responses): else the next request sent on it, an eviction above all (urllib3 does not
retry it), reads the rest of another answer as its own. A real server writes each answer's head
and body apart, the body late, as the API server's two writes may arrive; a watch goes on
sending events after the client stopped reading it."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from kubernetes import client

from app.core.bodies import ContainerResize, EvictionBody, ResizeBody
from app.kube.actions import PodActions
from app.kube.informer import Informer
from app.kube.liststream import read_list, response_chunks
from app.kube.responses import finish, give_back
from tests.support.json_bodies import raw_answer, raw_body

NS = "shop"
LATE = 0.3  # seconds between an answer's head and its body; the next request goes out before
POD = json.dumps({"kind": "Pod", "metadata": {"name": "web-0", "namespace": NS}}).encode()
STATUS_404 = json.dumps({"kind": "Status", "code": 404, "reason": "NotFound"}).encode()
LIST_HEAD = b'{"kind": "PodList", "items": [{"metadata": {"name": "web-0"}},'
UNREADABLE = b"not a JSON event\n"
EVENT = json.dumps({"type": "ADDED", "object": {"metadata": {"name": "web-0"}}}).encode() + b"\n"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    evictions: list[str] = []
    stop = threading.Event()

    def _answer(self, status: int, body: bytes, *later: bytes) -> None:
        """The head and `body` now, then each of `later` (more of the body) LATE seconds apart."""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body) + sum(map(len, later))))
        self.end_headers()
        self.wfile.write(body)
        for part in later:
            time.sleep(LATE)
            self.wfile.write(part)

    def do_PATCH(self) -> None:  # the `resize` subresource of a cluster older than 1.33
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer(404, STATUS_404)

    def do_POST(self) -> None:  # evictions
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.evictions.append(self.path)
        self._answer(201, b"{}")

    def do_GET(self) -> None:
        if "watch=true" in self.path:
            self._watch()
        elif self.path.startswith("/api/v1/pods"):  # a LIST: its second item comes late
            self._answer(200, LIST_HEAD + b" " * 100, b'{"metadata": {"name": "web-1"}}]}')
        else:
            self._answer(200, b"", POD)

    def _watch(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(UNREADABLE), UNREADABLE))
        while not self.stop.wait(LATE):  # events go on after the client stopped reading
            self.wfile.write(b"%x\r\n%s\r\n" % (len(EVENT), EVENT))

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client closing a watch mid-write is expected


@pytest.fixture
def api() -> Iterator[Any]:
    _Handler.evictions, _Handler.stop = [], threading.Event()
    server = _Server(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    api = client.ApiClient(client.Configuration(host=f"http://127.0.0.1:{server.server_port}"))
    try:
        yield api
    finally:
        _Handler.stop.set()
        api.close()
        server.shutdown()
        server.server_close()


def _evicted(api: Any) -> str:
    """An eviction sent right away, as the updater sends the next one: on the pool's
    connection that the call before gave back."""
    return PodActions(api).evict(EvictionBody(NS, "web-1"))


def test_the_pod_read_after_a_404_resize_is_read_to_its_end(api: Any) -> None:
    """The updater's fallback: a 404 resize of a pod that exists (no `resize` subresource), then
    its eviction. Before, the pod's GET was given back unread and the eviction read the pod's
    body as its answer (`failed`, though the API server had evicted the pod)."""
    body = ResizeBody((ContainerResize("app", {"cpu": 500}, {}),))
    assert PodActions(api).resize(NS, "web-0", body) == "unsupported"
    assert _evicted(api) == "done"
    assert _Handler.evictions == [f"/api/v1/namespaces/{NS}/pods/web-1/eviction"]


def test_an_answer_not_wanted_is_read_to_its_end(api: Any) -> None:
    finish(client.CoreV1Api(api).read_namespaced_pod("web-0", NS, _preload_content=False))
    assert _evicted(api) == "done"


def test_a_watch_left_midway_is_closed_not_given_back(api: Any) -> None:
    resp = client.CoreV1Api(api).list_pod_for_all_namespaces(watch=True, _preload_content=False)
    # kept: closing the generator would close the connection
    events = raw_answer(resp).stream(amt=None)
    assert next(events) == UNREADABLE
    give_back(resp)
    assert _evicted(api) == "done"
    events.close()


def test_an_informer_whose_watch_event_is_unreadable_closes_the_stream(api: Any) -> None:
    """Also closed by urllib3 itself before app.kube.responses (the event generator, dropped as
    the error unwinds, closes the connection): kept against a change that holds on to it."""
    informer = Informer("pods", client.CoreV1Api(api).list_pod_for_all_namespaces)
    informer.resource_version = "1"
    with pytest.raises(ValueError):
        informer._watch()  # its first event is not JSON
    assert _evicted(api) == "done"


def test_a_list_whose_reading_failed_is_closed_not_given_back(api: Any) -> None:
    """The informer's LIST read item by item stops at an item it cannot keep (its transform
    raises); the rest of the LIST is still on its way."""

    def keep(item: dict[str, Any]) -> None:
        raise ValueError(f"cannot keep {item['metadata']['name']}")

    resp = client.CoreV1Api(api).list_pod_for_all_namespaces(_preload_content=False)
    with pytest.raises(ValueError, match="cannot keep web-0"):
        read_list(response_chunks(resp, size=64), keep)
    assert _evicted(api) == "done"


def test_an_answer_read_to_its_end_keeps_its_connection(api: Any) -> None:
    """give_back closes only what was left midway: a whole answer's connection is reused."""
    pool = api.rest_client.pool_manager.connection_from_url(api.configuration.host)
    resp = client.CoreV1Api(api).read_namespaced_pod("web-0", NS, _preload_content=False)
    conn = raw_answer(resp).connection
    assert raw_body(resp) == POD
    give_back(resp)
    with contextlib.closing(pool._get_conn()) as taken:
        assert taken is conn and not taken.is_closed
