"""Whether the bytes received so far on a connection hold a whole HTTP/1.x request: free of I/O.

`rightsizer serve` reads each request whole before a serving thread takes it (app.serving.intake),
so a client that sends part of its headers or body and waits holds no thread. This module only
says how far a request has come: its headers (up to the blank line), then its body by
`Content-Length` or `Transfer-Encoding: chunked` (RFC 9112 sections 6 and 7.1). What it cannot
make sense of it calls complete: gunicorn's parser then answers 400 from the bytes already there.
"""

from __future__ import annotations

from dataclasses import dataclass

# Headers larger than this are refused with 431 (Go's http.Server allows 1 MiB, kube-apiserver's
# requests to a webhook carry well under 1 KiB; gunicorn's own limits: a 4094-byte request line
# and 8190-byte fields).
HEAD_LIMIT = 64 * 1024
# Bodies larger than this are refused with 413 by default (ReadBounds.body_bytes): the webhook's
# own limit (app.webhook.review.MAX_BODY_BYTES, kube-apiserver's for an object).
BODY_LIMIT = 3 * 1024 * 1024
# A chunk-size line longer than this is malformed (gunicorn's parser refuses it).
CHUNK_LINE_LIMIT = 1024

HEAD, BODY, COMPLETE, REFUSE = "headers", "body", "complete", "refuse"


@dataclass(frozen=True)
class Progress:
    state: str  # HEAD or BODY (still arriving), COMPLETE, or REFUSE (answer `status` and close)
    status: int = 0
    continue_expected: bool = False  # the body waits for "100 Continue" (RFC 9110 10.1.1)


def progress(buf: bytes | bytearray, body_limit: int = BODY_LIMIT) -> Progress:
    """How far the request at the start of `buf` has arrived; a body over `body_limit` bytes is
    refused."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return Progress(REFUSE, 431) if len(buf) > HEAD_LIMIT else Progress(HEAD)
    if end > HEAD_LIMIT:
        return Progress(REFUSE, 431)
    lines = bytes(buf[:end]).split(b"\r\n")
    fields: dict[bytes, list[bytes]] = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        fields.setdefault(name.strip().lower(), []).append(value.strip())
    start = end + 4
    codings = b",".join(fields.get(b"transfer-encoding", []))
    if codings:
        if codings.rsplit(b",", 1)[-1].strip().lower() != b"chunked":
            return Progress(COMPLETE)  # refused by the parser (RFC 9112 6.3)
        done = chunked_end(buf, start)
    else:
        lengths = set(fields.get(b"content-length", []))
        if not lengths:
            return Progress(COMPLETE)  # no body
        if len(lengths) > 1 or not next(iter(lengths)).isdigit():
            return Progress(COMPLETE)  # refused by the parser
        length = int(next(iter(lengths)))
        if length > body_limit:
            return Progress(REFUSE, 413)
        done = len(buf) - start >= length
    if done:
        return Progress(COMPLETE)
    if len(buf) - start > body_limit:
        return Progress(REFUSE, 413)
    expect = [v.lower() for v in fields.get(b"expect", [])]
    http11 = lines[0].rstrip().endswith(b"HTTP/1.1")
    return Progress(BODY, continue_expected=http11 and b"100-continue" in expect)


def chunked_end(buf: bytes | bytearray, pos: int) -> bool:
    """Whether a chunked body starting at `pos` has arrived whole, trailers included; a
    malformed one counts as whole (the parser refuses it)."""
    while True:
        line_end = buf.find(b"\r\n", pos)
        if line_end < 0:
            return len(buf) - pos > CHUNK_LINE_LIMIT
        size_text = buf[pos:line_end].split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            return True
        if size < 0 or not size_text:
            return True
        if size == 0:  # then trailer fields, up to a blank line
            if buf.startswith(b"\r\n", line_end + 2):
                return True
            return buf.find(b"\r\n\r\n", line_end) >= 0
        pos = line_end + 2 + size + 2
        if pos > len(buf):
            return False
