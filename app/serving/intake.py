"""Every request read whole, within bounds, by the worker's loop before a serving thread takes it.

gunicorn's gthread worker hands a new connection to a thread as soon as it has a byte to read:
the thread then makes the TLS handshake and reads the request with a blocking socket, without a
deadline. Eight TLS connections that send part of their headers and wait held every thread of
2 workers x 4 threads: /mutate, /healthz and new handshakes waited as long as the clients did.
Go's servers (kube-apiserver's, controller-runtime's webhook server) bound the handshake and the
header read instead, and wait for an idle kept-alive connection's next request without a
goroutine reading it.

`BoundedIntake` does that in the worker's own loop (gunicorn's poller), without a thread: the
TLS handshake (non-blocking), then the request's bytes until app.serving.request_end says it is
whole; only then does a thread take the connection, its request already buffered in gunicorn's
parser, so the thread never waits for the client to send. Each stage has its deadline:
`ReadBounds.handshake` from the accept, `headers` from the first byte of a kept-alive connection's
next request (or from the accept or the handshake's end), `body` from the end of the headers. A
connection past its deadline is closed and counted (app.serving.slow_clients). An idle kept-alive
connection waits in the poller as gunicorn's own (up to its `keepalive`), holding no thread.
Requests pipelined behind one come back here when the answer is sent.
"""

from __future__ import annotations

import contextlib
import errno
import selectors
import ssl
import time
from dataclasses import dataclass
from functools import partial
from typing import Any

from gunicorn import http
from gunicorn import sock as gsock
from gunicorn.workers.gthread import TConn, ThreadWorker

from app.serving.request_end import BODY, BODY_LIMIT, COMPLETE, HEAD_LIMIT, REFUSE, progress
from app.serving.slow_clients import SLOW_CLOSED, OncePerClient

READ_SIZE = 64 * 1024
# A connection whose request grows beyond SMALL bytes reads on only once it holds a reservation
# for the largest request (HEAD_LIMIT + ReadBounds.body_bytes); a worker reserves at most
# RESERVED_LIMIT bytes (always one, whatever its size). The others wait, unread (the kernel holds
# what they send), their deadline running, until a reservation is given back. A request of
# kube-apiserver's size is always read.
RESERVED_LIMIT = 64 * 1024 * 1024
SMALL = 64 * 1024
REASONS = {413: "Content Too Large", 431: "Request Header Fields Too Large"}
WORDS = {"handshake": "the TLS handshake", "headers": "its request headers", "body": "its body"}


@dataclass(frozen=True)
class ReadBounds:
    """Seconds each stage of a request may take (docs/configuration.md)."""

    handshake: float = 3.0
    headers: float = 3.0
    body: float = 3.0
    body_bytes: int = BODY_LIMIT  # larger bodies are answered 413 at once


class Reading:
    """A connection whose request is arriving: its bytes so far, stage and deadline."""

    __slots__ = ("buf", "conn", "continued", "deadline", "events", "parked", "reserved", "stage")

    def __init__(self, conn: Any, stage: str, deadline: float, data: bytes) -> None:
        self.conn, self.stage, self.deadline = conn, stage, deadline
        self.buf = bytearray(data)
        self.events = 0  # registered with the poller for these (0: not registered)
        self.continued = False  # "100 Continue" sent
        self.parked = False  # waiting for a reservation, not read meanwhile
        self.reserved = 0  # bytes reserved for its request (once it is larger than SMALL)


class BoundedIntake(ThreadWorker):  # type: ignore[misc]  # gunicorn has no type hints
    read_bounds = ReadBounds()  # the master's pre_fork hook sets the configured ones
    _next_deadline = float("inf")  # the earliest deadline of a connection being read
    _reserved = 0  # bytes reserved by the connections being read

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._reading: set[Reading] = set()
        self._parked: list[Reading] = []
        self._next_deadline = float("inf")
        self._slow_log = OncePerClient()
        self._tls: ssl.SSLContext | None = None
        super().__init__(*args, **kwargs)

    def accept(self, listener: Any) -> None:
        try:
            client, addr = listener.accept()
        except OSError as e:
            if e.errno in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                return
            raise
        self.nr_conns += 1
        conn = TConn(self.cfg, client, addr, listener.getsockname())  # non-blocking
        now = time.monotonic()
        if not self.cfg.is_ssl:
            self._start(conn, "headers", now + self.read_bounds.headers, b"")
            return
        try:
            conn.sock = self._tls_context().wrap_socket(
                conn.sock,
                server_side=True,
                do_handshake_on_connect=False,
                suppress_ragged_eofs=self.cfg.suppress_ragged_eofs,
            )
        except OSError:
            self.nr_conns -= 1
            conn.close()
            return
        self._start(conn, "handshake", now + self.read_bounds.handshake, b"")

    def _tls_context(self) -> ssl.SSLContext:
        """gunicorn's context (app.serving.gunicorn_conf.ssl_context), made once per worker: a
        renewed certificate reloads the workers."""
        if self._tls is None:
            self._tls = gsock.ssl_context(self.cfg)
        return self._tls

    def enqueue_req(self, conn: Any) -> None:
        """A kept-alive connection became readable, or an answer left bytes of the next request
        buffered: read that request whole first."""
        data = conn.parser.unreader.take_buffered() if conn.parser is not None else b""
        self._start(conn, "headers", time.monotonic() + self.read_bounds.headers, data)

    def _start(self, conn: Any, stage: str, deadline: float, data: bytes) -> None:
        conn.sock.setblocking(False)
        reading = Reading(conn, stage, deadline, data)
        self._reading.add(reading)
        self._next_deadline = min(self._next_deadline, deadline)
        self._step(reading)

    def _step(self, r: Reading, _fileobj: Any = None) -> None:
        try:
            self._advance(r)
        except Exception:  # a bug here must not take the worker and its connections down
            self.log.exception("Error reading a request from %s", r.conn.client)
            if r in self._reading:
                self._close(r)

    def _advance(self, r: Reading) -> None:
        sock = r.conn.sock
        try:
            if r.stage == "handshake":
                sock.do_handshake()
                r.stage, r.deadline = "headers", time.monotonic() + self.read_bounds.headers
            eof = self._receive(r)
        except ssl.SSLWantReadError:
            self._wait(r, selectors.EVENT_READ)
            return
        except ssl.SSLWantWriteError:
            self._wait(r, selectors.EVENT_WRITE)
            return
        except (OSError, ValueError) as e:  # reset, a TLS alert, not TLS at all
            self.log.debug("Closing connection from %s: %s", r.conn.client, e)
            self._close(r)
            return
        judged = progress(r.buf, self.read_bounds.body_bytes)
        if judged.state == COMPLETE:
            self._hand_to_thread(r)
        elif judged.state == REFUSE:
            self._refuse(r, judged.status)
        elif eof:
            self._close(r)  # gone before its request was whole: nothing to answer
        else:
            if judged.state == BODY and r.stage == "headers":
                r.stage, r.deadline = "body", time.monotonic() + self.read_bounds.body
            if judged.continue_expected and not r.continued:
                r.continued = True
                self._send_quietly(r, b"HTTP/1.1 100 Continue\r\n\r\n")
            if len(r.buf) > SMALL and not r.reserved:
                if self._reserve(r):
                    self._step(r)  # read on at once: TLS may hold bytes the poller won't show
                else:
                    self._park(r)
                return
            self._wait(r, selectors.EVENT_READ)

    def _reserve(self, r: Reading) -> bool:
        need = HEAD_LIMIT + self.read_bounds.body_bytes
        if self._reserved and self._reserved + need > RESERVED_LIMIT:
            return False
        r.reserved = need
        self._reserved += need
        return True

    def _park(self, r: Reading) -> None:
        if r.events:
            self.poller.unregister(r.conn.sock)
            r.events = 0
        r.parked = True
        self._parked.append(r)

    def _unpark(self) -> None:
        """Read the parked connections again, the first parked first, as reservations allow."""
        while self._parked and self._reserve(self._parked[0]):
            r = self._parked.pop(0)
            r.parked = False
            self._step(r)

    def _receive(self, r: Reading) -> bool:
        """Read all that has arrived (raises SSLWantWriteError when TLS must write first);
        whether the client closed its side. All: bytes left in the TLS layer's buffer would not
        wake the poller when the connection is kept alive after the answer."""
        while True:
            try:
                data = r.conn.sock.recv(READ_SIZE)
            except (BlockingIOError, ssl.SSLWantReadError):
                return False
            if not data:
                return True
            r.buf += data
            if len(r.buf) > HEAD_LIMIT + self.read_bounds.body_bytes:  # refused once judged
                return False
            if len(r.buf) > SMALL and not r.reserved:
                return False  # reads on once it holds a reservation

    def _wait(self, r: Reading, events: int) -> None:
        if r.events == events:
            return
        callback = partial(self._step, r)
        if r.events:
            self.poller.modify(r.conn.sock, events, callback)
        else:
            self.poller.register(r.conn.sock, events, callback)
        r.events = events

    def _forget(self, r: Reading) -> None:
        if r not in self._reading:
            return
        self._reading.discard(r)
        if r.events:
            with contextlib.suppress(KeyError, ValueError, OSError):
                self.poller.unregister(r.conn.sock)
            r.events = 0
        if r.parked:
            r.parked = False
            self._parked.remove(r)
        if r.reserved:
            self._reserved -= r.reserved
            r.reserved = 0
            self._unpark()

    def _hand_to_thread(self, r: Reading) -> None:
        """The request is whole: a thread answers it from gunicorn's parser, fed these bytes."""
        self._forget(r)
        conn = r.conn
        if conn.parser is None:
            conn.parser = http.get_parser(self.cfg, conn.sock, conn.client)
        conn.parser.unreader.unread(bytes(r.buf))
        conn.initialized = conn.data_ready = True  # gunicorn's thread neither wraps nor waits
        super().enqueue_req(conn)

    def _refuse(self, r: Reading, status: int) -> None:
        self._send_quietly(
            r,
            f"HTTP/1.1 {status} {REASONS[status]}\r\nConnection: close\r\n"
            "Content-Length: 0\r\n\r\n".encode(),
        )
        self._close(r)

    def _send_quietly(self, r: Reading, data: bytes) -> None:
        """A few bytes, non-blocking: they fit in an empty send buffer (else the client is gone
        or not reading, and the deadline closes it)."""
        with contextlib.suppress(OSError, ValueError):
            r.conn.sock.send(data)

    def _close(self, r: Reading) -> None:
        self._forget(r)
        self.nr_conns -= 1
        r.conn.close()

    def _close_slow(self, r: Reading, now: float) -> None:
        self._close(r)
        SLOW_CLOSED.labels(r.stage).inc()
        client = r.conn.client
        address = client[0] if isinstance(client, tuple) else str(client)
        count = self._slow_log.note(address, now)
        if count is not None:
            bound = getattr(self.read_bounds, r.stage)
            self.log.warning(
                "Closed %d connection(s) from %s that did not complete %s within %gs "
                "(rightsizer_slow_connections_closed_total; logged at most once a minute per "
                "client)",
                count,
                address,
                WORDS[r.stage],
                bound,
            )

    def murder_pending(self) -> None:
        """gunicorn's, then close the connections past their deadline (every turn of the loop)."""
        super().murder_pending()
        now = time.monotonic()
        if now < self._next_deadline:
            return
        earliest = float("inf")
        for r in list(self._reading):
            if r.deadline <= now:
                self._close_slow(r, now)
            else:
                earliest = min(earliest, r.deadline)
        self._next_deadline = earliest

    def wait_for_and_dispatch_events(self, timeout: float) -> None:
        # Wake for the next deadline: a stalled connection is closed on time, not a second late.
        soonest = max(self._next_deadline - time.monotonic(), 0.0)
        super().wait_for_and_dispatch_events(min(timeout, soonest))
