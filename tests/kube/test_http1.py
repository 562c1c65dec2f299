"""app.kube.http1: the request head as http.client writes it, and answers read from a real socket
(a socketpair) however the server's bytes arrive."""

from __future__ import annotations

import socket
import threading
from http.client import HTTPException, IncompleteRead, RemoteDisconnected

import pytest
import urllib3
from hypothesis import given
from hypothesis import strategies as st

from app.kube.http1 import read_answer, render_head, request_bytes


def _answer_of(
    chunks: list[bytes], close: bool = True, bufsize: int = 7
) -> tuple[int, str, bytes, bool]:
    """What read_answer reads when a server writes `chunks` (one send each) and then closes."""
    ours, theirs = socket.socketpair()
    ours.settimeout(5)

    def serve() -> None:
        for c in chunks:
            theirs.sendall(c)
        if close:
            theirs.close()

    writer = threading.Thread(target=serve)
    writer.start()
    try:
        return read_answer(ours, bufsize)  # small reads: answers cross many recv()s
    finally:
        writer.join()
        ours.close()
        if not close:
            theirs.close()


CREATED = b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
CHUNKED = (
    b"HTTP/1.1 429 Too Many Requests\r\nTransfer-Encoding: chunked\r\n\r\n"
    b'5\r\n{"a":\r\n3\r\n 1}\r\n0\r\n\r\n'
)


def test_an_answer_with_its_length_leaves_the_connection_reusable() -> None:
    assert _answer_of([CREATED], close=False) == (201, "Created", b"{}", True)


def test_a_chunked_answer_is_read_whole() -> None:
    assert _answer_of([CHUNKED], close=False) == (429, "Too Many Requests", b'{"a": 1}', True)


def test_100_continue_is_skipped() -> None:
    assert _answer_of([b"HTTP/1.1 100 Continue\r\n\r\n" + CREATED], close=False)[:3] == (
        201,
        "Created",
        b"{}",
    )


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 201 Created\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.0 201 Created\r\nContent-Length: 2\r\n\r\n{}",
    ],
)
def test_a_connection_the_server_closes_is_not_reused(answer: bytes) -> None:
    assert _answer_of([answer], close=False) == (201, "Created", b"{}", False)


def test_an_answer_read_until_the_connection_closes() -> None:
    assert _answer_of([b"HTTP/1.1 500 Oops\r\n\r\nsome", b" text"]) == (
        500,
        "Oops",
        b"some text",
        False,
    )


def test_bytes_read_after_the_answer_make_the_connection_untrusted() -> None:
    """Bytes that came with the answer's last read; those still unread are the pool's to see
    (urllib3's _get_conn replaces a connection with something to read)."""
    assert _answer_of([CREATED + CREATED], False, 4096) == (201, "Created", b"{}", False)
    assert _answer_of([CREATED + b"\x00garbage\r\n\r\n"], False, 4096)[3] is False


def test_a_connection_closed_before_the_answer() -> None:
    with pytest.raises(RemoteDisconnected):
        _answer_of([])
    with pytest.raises(RemoteDisconnected):
        _answer_of([b"HTTP/1.1 201 Crea"])


def test_a_body_cut_short() -> None:
    with pytest.raises(IncompleteRead):
        _answer_of([b"HTTP/1.1 201 Created\r\nContent-Length: 10\r\n\r\n{}"])


def test_an_answer_that_is_not_http() -> None:
    with pytest.raises(HTTPException, match="unreadable answer"):
        _answer_of([b"SSH-2.0-OpenSSH_9.2\r\n"], close=False)


def test_an_answer_not_read_in_time() -> None:
    ours, theirs = socket.socketpair()
    ours.settimeout(0.05)
    try:
        with pytest.raises(TimeoutError):
            read_answer(ours)
    finally:
        ours.close()
        theirs.close()


@given(
    status=st.sampled_from([200, 201, 404, 409, 429, 500]),
    body=st.binary(max_size=300),
    chunked=st.booleans(),
    cuts=st.lists(st.integers(min_value=1, max_value=400), max_size=8),
)
def test_any_split_of_the_bytes_reads_the_same_answer(
    status: int, body: bytes, chunked: bool, cuts: list[int]
) -> None:
    """However the answer's bytes are cut into sends, the same status, reason and body."""
    if chunked:
        framed = (b"%x\r\n%s\r\n" % (len(body), body) if body else b"") + b"0\r\n\r\n"
        head = b"Transfer-Encoding: chunked\r\n"
    else:
        framed, head = body, b"Content-Length: %d\r\n" % len(body)
    raw = b"HTTP/1.1 %d Some Reason\r\n%s\r\n%s" % (status, head, framed)
    chunks, at = [], 0
    for cut in sorted(set(cuts)):
        if at < cut < len(raw):
            chunks.append(raw[at:cut])
            at = cut
    chunks.append(raw[at:])
    assert _answer_of(chunks, close=False) == (status, "Some Reason", body, True)


def _head(host: str, port: int | None, headers: dict[str, str], default: int = 80) -> bytes:
    return render_head(host, port, default, tuple(headers.items()))


def test_the_head_as_http_client_writes_it() -> None:
    head = _head("10.0.0.1", 6443, {"User-Agent": "ua/1", "Authorization": "Bearer t"})
    assert head == (
        b"Host: 10.0.0.1:6443\r\nAccept-Encoding: identity\r\n"
        b"User-Agent: ua/1\r\nAuthorization: Bearer t\r\n"
    )
    assert _head("kubernetes.default.svc", 443, {}, default=443) == (
        b"Host: kubernetes.default.svc\r\nAccept-Encoding: identity\r\n"
        b"User-Agent: python-urllib3/"
        # urllib3 sets it (its own User-Agent), though its __all__ leaves it out
        + urllib3.__version__.encode()  # type: ignore[attr-defined]
        + b"\r\n"
    )
    assert _head("fd00::1%eth0", 6443, {"User-Agent": "u"}).startswith(b"Host: [fd00::1]:6443\r\n")
    assert _head("10.0.0.1", None, {"Host": "api", "User-Agent": "u"}).startswith(b"Accept-Enc")


def test_a_request_is_line_head_length_and_body() -> None:
    head = _head("h", 80, {"User-Agent": "u"})
    assert request_bytes("POST", "/x?dryRun=All", head, b"{}") == (
        b"POST /x?dryRun=All HTTP/1.1\r\n" + head + b"Content-Length: 2\r\n\r\n{}"
    )


@pytest.mark.parametrize(
    "headers",
    [{"Authorization": "Bearer t\r\nX-Injected: 1"}, {"Bad Name": "v"}, {"X": "a\nb"}],
)
def test_a_header_that_would_split_the_request_is_refused(headers: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        _head("h", 80, headers)


@pytest.mark.parametrize("target", ["/a b", "/a\r\nHost: x", "/a\x7f"])
def test_a_target_with_spaces_or_control_characters_is_refused(target: str) -> None:
    with pytest.raises(ValueError, match="invalid request target"):
        request_bytes("POST", target, b"", b"")
