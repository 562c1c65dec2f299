"""app.serving.request_end: when the bytes received hold a whole request (the worker's loop hands
a connection to a thread only then)."""

from __future__ import annotations

import pytest

from app.serving.request_end import (
    BODY,
    BODY_LIMIT,
    COMPLETE,
    HEAD,
    HEAD_LIMIT,
    REFUSE,
    Progress,
    progress,
)

POST = b"POST /mutate HTTP/1.1\r\nHost: x\r\n"


@pytest.mark.parametrize(
    ("received", "expected"),
    [
        (b"", Progress(HEAD)),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\n", Progress(HEAD)),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", Progress(COMPLETE)),
        (POST + b"Content-Length: 5\r\n\r\nabc", Progress(BODY)),
        (POST + b"content-length: 5\r\n\r\nabcde", Progress(COMPLETE)),
        (POST + b"Content-Length: 5\r\n\r\nabcdeGET / HTTP/1.1\r\n", Progress(COMPLETE)),
        (POST + b"Content-Length: 5\r\nExpect: 100-Continue\r\n\r\n", Progress(BODY, 0, True)),
        # malformed or contradictory: whole, so gunicorn's parser answers 400 at once
        (POST + b"Content-Length: 5\r\nContent-Length: 6\r\n\r\n", Progress(COMPLETE)),
        (POST + b"Content-Length: -1\r\n\r\n", Progress(COMPLETE)),
        (POST + b"Transfer-Encoding: gzip\r\n\r\n", Progress(COMPLETE)),
        (POST + b"Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n", Progress(BODY)),
        (POST + b"Transfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\n", Progress(BODY)),
        (POST + b"Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", Progress(COMPLETE)),
        (POST + b"Transfer-Encoding: chunked\r\n\r\n0\r\nA: b\r\n", Progress(BODY)),
        (POST + b"Transfer-Encoding: chunked\r\n\r\n0\r\nA: b\r\n\r\n", Progress(COMPLETE)),
        (POST + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n", Progress(COMPLETE)),
        (POST + f"Content-Length: {BODY_LIMIT + 1}\r\n\r\n".encode(), Progress(REFUSE, 413)),
        (b"GET / HTTP/1.1\r\nX: " + b"a" * HEAD_LIMIT, Progress(REFUSE, 431)),
    ],
)
def test_how_far_a_request_has_arrived(received: bytes, expected: Progress) -> None:
    assert progress(bytearray(received)) == expected


def test_a_chunked_body_beyond_the_limit_is_refused() -> None:
    chunk = b"%x\r\n" % (1 << 20) + b"a" * (1 << 20) + b"\r\n"
    received = POST + b"Transfer-Encoding: chunked\r\n\r\n" + chunk * 4
    assert progress(received) == Progress(REFUSE, 413)
    assert progress(received, body_limit=8 << 20) == Progress(BODY)
