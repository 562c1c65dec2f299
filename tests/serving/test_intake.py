"""app.serving.intake in one process, on socket pairs: what the worker's loop does before a
thread takes a request (tests/serving/test_slow_clients.py runs it in real `rightsizer serve`)."""

from __future__ import annotations

import selectors
import socket
import time
from collections import deque
from collections.abc import Iterator
from typing import Any

import pytest
from gunicorn.config import Config
from gunicorn.workers.gthread import TConn, ThreadWorker

from app.serving import intake
from app.serving.intake import BoundedIntake, ReadBounds
from app.serving.slow_clients import OncePerClient


class Log:
    def __init__(self) -> None:
        self.warnings: list[str] = []

    def debug(self, *args: Any) -> None:
        pass

    def exception(self, *args: Any) -> None:
        raise AssertionError(args)

    def warning(self, message: str, *args: Any) -> None:
        self.warnings.append(message % args)


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch) -> Iterator[BoundedIntake]:
    handed: list[Any] = []
    monkeypatch.setattr(ThreadWorker, "enqueue_req", lambda self, conn: handed.append(conn))
    w = BoundedIntake.__new__(BoundedIntake)
    w.cfg, w.log, w.nr_conns, w.handed = Config(), Log(), 0, handed
    w.poller = selectors.DefaultSelector()
    w._reading, w._parked, w._slow_log = set(), [], OncePerClient()
    w.pending_conns = deque()  # gunicorn's, unused here
    w.read_bounds = ReadBounds(handshake=1, headers=1, body=1, body_bytes=1 << 20)
    yield w
    w.poller.close()


def connect(w: BoundedIntake, data: bytes) -> socket.socket:
    """A client connection the worker has just accepted, `data` sent on it."""
    client, server = socket.socketpair()
    client.sendall(data)
    w.nr_conns += 1
    deadline = time.monotonic() + w.read_bounds.headers
    w._start(TConn(w.cfg, server, ("10.0.0.7", 4000), None), "headers", deadline, b"")
    return client


def turn(w: BoundedIntake) -> None:
    """One turn of the worker's loop: events, then deadlines."""
    w.wait_for_and_dispatch_events(0.05)
    w.murder_pending()


def post(length: int) -> bytes:
    return b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % length


def test_a_request_goes_to_a_thread_only_once_whole(worker: BoundedIntake) -> None:
    client = connect(worker, post(10) + b"abc")
    turn(worker)
    assert worker.handed == []
    client.sendall(b"defghij")
    turn(worker)
    (conn,) = worker.handed
    request = next(conn.parser)  # gunicorn's parser, from the bytes already read
    assert request.body.read() == b"abcdefghij"
    assert worker._reserved == 0 and not worker._reading


def test_a_stalled_connection_is_closed_counted_and_logged_once(worker: BoundedIntake) -> None:
    from app.serving.slow_clients import SLOW_CLOSED

    before = SLOW_CLOSED.labels("body")._value.get()
    clients = [connect(worker, post(10) + b"abc") for _ in range(3)]
    turn(worker)
    worker.wait_for_and_dispatch_events(2.0)  # wakes at the deadline, not after 2 s
    worker.murder_pending()
    for c in clients:
        c.settimeout(1)
        assert c.recv(10) == b""  # closed by the server
    assert SLOW_CLOSED.labels("body")._value.get() == before + 3
    assert worker.nr_conns == 0 and worker.handed == []
    assert worker.log.warnings == [
        "Closed 1 connection(s) from 10.0.0.7 that did not complete its body within 1s "
        "(rightsizer_slow_connections_closed_total; logged at most once a minute per client)"
    ]


def test_large_bodies_wait_unread_beyond_the_workers_reservations(
    worker: BoundedIntake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each request larger than SMALL reserves room for the largest (64 KiB + 1 MiB here); with
    room for one, a second large one waits unread while the first is read, then reads on."""
    monkeypatch.setattr(intake, "RESERVED_LIMIT", 1_500_000)
    worker.read_bounds = ReadBounds(handshake=10, headers=10, body=10, body_bytes=1 << 20)
    body = b"x" * 400_000
    first = connect(worker, post(len(body)) + body[:200_000])
    for _ in range(5):
        turn(worker)
    second = connect(worker, post(len(body)) + body[:200_000])
    for _ in range(5):
        turn(worker)
    assert len(worker._parked) == 1  # the second waits for room
    small = connect(worker, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")  # read all the same
    turn(worker)
    assert len(worker.handed) == 1
    first.sendall(body[200_000:])
    for _ in range(20):
        turn(worker)
    assert len(worker.handed) == 2 and not worker._parked  # the first went: the second reads on
    second.sendall(body[200_000:])
    for _ in range(20):
        turn(worker)
    assert len(worker.handed) == 3 and worker._reserved == 0
    assert [next(c.parser).body.read() for c in worker.handed[1:]] == [body, body]
    for c in (first, second, small):
        c.close()
