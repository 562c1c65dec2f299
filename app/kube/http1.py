"""One HTTP/1.1 request written on a connected socket, and its answer read with httptools.

app.kube.posts sends the updater's evictions on connections of the official client's urllib3
pool. http.client, under urllib3, spent most of an eviction's client CPU on generic work: seven
`putheader` calls with their checks, then a BufferedReader per answer whose headers the email
package's feed parser reads (issue 22: 0.29-0.32 ms of CPU per eviction against the simulator,
about half of a 150,000-pod dry run). Here the request head is rendered once per set of headers
and written with the body in one `sendall`, and the answer is parsed by httptools (llhttp, the
parser Node.js uses, in C): 0.12-0.13 ms per eviction with the pool's own work around it
(benchmarks/eviction_send.py), most of it the two system calls.

What http.client and urllib3 would do is kept: the same headers (Host as http.client writes it,
`Accept-Encoding: identity`, urllib3's User-Agent unless one is given, Content-Length), the same
refusals of a request target with control characters or spaces and of a header that could split
the request (CR or LF in a value: stricter than http.client, which lets obsolete line folding
through), 1xx answers skipped, and a connection the server asked to close (or that carried bytes
after the answer) is closed instead of reused. Request pipelining is not used: one request per
connection at a time, as RFC 9112 asks for a POST.
"""

from __future__ import annotations

import functools
import re
import socket
from http.client import HTTPException, IncompleteRead, RemoteDisconnected
from importlib.metadata import version
from typing import Any

import httptools

# http.client's own rules (its _is_legal_header_name, _contains_disallowed_url_pchar_re).
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
_BAD_TARGET = re.compile("[\x00-\x20\x7f]")
_BAD_VALUE = re.compile("[\r\n\x00]")
_URLLIB3_AGENT = f"python-urllib3/{version('urllib3')}"  # urllib3's User-Agent when none is given


@functools.lru_cache(maxsize=16)
def render_head(
    host: str, port: int | None, default_port: int, headers: tuple[tuple[str, str], ...]
) -> bytes:
    """The header lines after the request line, but for Content-Length, as urllib3's
    `HTTPConnection.request` has http.client write them for this connection (`host`, `port`:
    the connection's own; `headers`: the request's). Raises ValueError for a header name that is
    not a token or a value with CR, LF or NUL."""
    names = {k.lower() for k, _ in headers}
    lines = []
    if "host" not in names:
        name = f"[{host.split('%', 1)[0]}]" if ":" in host else host  # IPv6 without its zone
        if not name.isascii():
            name = name.encode("idna").decode("ascii")
        lines.append(f"Host: {name}" if port in (None, default_port) else f"Host: {name}:{port}")
    if "accept-encoding" not in names:
        lines.append("Accept-Encoding: identity")
    if "user-agent" not in names:
        lines.append(f"User-Agent: {_URLLIB3_AGENT}")
    for name, value in headers:
        if not _TOKEN.match(name):
            raise ValueError(f"invalid header name {name!r}")
        if _BAD_VALUE.search(value):
            raise ValueError(f"invalid value of header {name}: {value!r}")
        lines.append(f"{name}: {value}")
    return ("\r\n".join(lines) + "\r\n").encode("latin-1")


def request_bytes(method: str, target: str, head: bytes, body: bytes) -> bytes:
    """The whole request: request line, `head` (render_head), Content-Length and the body."""
    if _BAD_TARGET.search(target):
        raise ValueError(f"invalid request target {target!r} (control characters or spaces)")
    line = f"{method} {target} HTTP/1.1\r\n".encode("ascii")
    return b"%s%sContent-Length: %d\r\n\r\n%s" % (line, head, len(body), body)


class _Answer:
    """httptools' callbacks for one answer: its reason phrase and body, 1xx answers skipped.
    `parser` is dropped once the answer is read (read_answer): the two refer to each other, and
    a cycle per answer would be left to the garbage collector."""

    def __init__(self) -> None:
        self.parser: Any = httptools.HttpResponseParser(self)
        self.reason, self.body = b"", bytearray()
        self.headers_done = self.complete = self.extra = self.keep_alive = False

    def on_message_begin(self) -> None:
        if self.complete:
            self.extra = True  # bytes after the answer: the connection is not trusted again
        else:
            self.reason, self.body, self.headers_done = b"", bytearray(), False  # after a 1xx

    def on_status(self, status: bytes) -> None:
        if not self.complete:
            self.reason += status

    def on_headers_complete(self) -> None:
        if not self.complete:
            self.headers_done = True
            # llhttp answers should_keep_alive only inside its callbacks (it forgets after them)
            self.keep_alive = self.parser.should_keep_alive()

    def on_body(self, body: bytes) -> None:
        if not self.complete:
            self.body += body

    def on_message_complete(self) -> None:
        if not self.complete and self.parser.get_status_code() >= 200:  # a 1xx: read on
            self.complete = True

    def read(self, sock: socket.socket, bufsize: int) -> None:
        parser = self.parser
        while not self.complete:
            chunk = sock.recv(bufsize)
            if not chunk:
                if not self.headers_done:
                    raise RemoteDisconnected("Remote end closed connection without response")
                if self.keep_alive:  # its length was given: the body was cut short
                    raise IncompleteRead(bytes(self.body))
                break  # a body read until the connection closes (no length given) ends here
            try:
                parser.feed_data(chunk)
            except httptools.HttpParserError as e:
                if not self.complete:
                    raise HTTPException(f"unreadable answer: {e}") from None
                self.extra = True  # the answer was whole; what followed it was not HTTP


def read_answer(sock: socket.socket, bufsize: int = 65536) -> tuple[int, str, bytes, bool]:
    """Reads one answer from `sock` (its timeout as set): (status, reason, body, reusable).
    `reusable` is False when the server asked to close the connection or sent more than the
    answer. Raises OSError (TimeoutError too) as reading raises it, RemoteDisconnected when the
    connection closes before the answer's headers, IncompleteRead when it closes inside a body
    whose length was given, HTTPException when the answer is not HTTP."""
    answer = _Answer()
    parser = answer.parser
    try:
        answer.read(sock, bufsize)
    finally:
        answer.parser = None
    reusable = answer.complete and answer.keep_alive and not answer.extra
    status: int = parser.get_status_code()
    return status, answer.reason.decode("latin-1"), bytes(answer.body), reusable
