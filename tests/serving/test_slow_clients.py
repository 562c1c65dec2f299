"""Slow, stalled and flooding clients against a real `rightsizer serve` over TLS (2 workers x 4
threads): they hold no serving thread, and the stalled ones are closed after their bound, counted
and logged once per client (app.serving.intake).

Failed before: gunicorn's gthread worker gave a connection to a thread as soon as it had a byte
(or after 5 s without one) and the thread made the handshake and read the request with no
deadline, so eight connections that sent part of a request held every thread: /mutate and
/healthz timed out as long as they were held."""

from __future__ import annotations

import json
import re
import socket
import ssl
import struct
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from app.serving.certs import CertPaths, ensure
from tests.support.pods import container, pod
from tests.support.processes import AppProcess, wait_for

EACH = 64  # slow connections of each kind
BOUND = 20  # seconds, each stage: longer than the checks take, so they run while all are held
WORKERS = 2


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AppProcess, CertPaths]]:
    tmp = tmp_path_factory.mktemp("slow")
    paths, _ = ensure(tmp / "certs", ["localhost"])
    app = AppProcess(
        "",
        f"sqlite:///{tmp}/rs.db",
        tmp / "serve.log",
        ca_file=str(paths.ca),
        RIGHTSIZER_WORKERS=str(WORKERS),
        RIGHTSIZER_THREADS="4",
        RIGHTSIZER_JOBS="false",
        RIGHTSIZER_WEBHOOK_REGISTER="false",
        RIGHTSIZER_WEBHOOK_TIMEOUT_SECONDS="30",  # the bounds are capped at it
        RIGHTSIZER_TLS_HANDSHAKE_TIMEOUT_SECONDS=str(BOUND),
        RIGHTSIZER_HEADER_TIMEOUT_SECONDS=str(BOUND),
        RIGHTSIZER_BODY_TIMEOUT_SECONDS=str(BOUND),
        RIGHTSIZER_TLS_CERT_FILE=paths.cert,
        RIGHTSIZER_TLS_KEY_FILE=paths.key,
    )
    try:
        app.wait_ready()
        yield app, paths
    finally:
        app.stop()


def review_body() -> bytes:
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "slow-clients",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "operation": "CREATE",
            "namespace": "shop",
            "object": pod(container("app", cpu="100m", memory="64Mi"), namespace="shop"),
        },
    }
    return json.dumps(review).encode()


def answers(app: AppProcess, ca: str) -> list[int]:
    """/mutate and /healthz, each asked several times at once on new connections; each must
    answer within a generous wait (not a latency figure: that is benchmarks/webhook.py's)."""
    body = review_body()

    def mutate(_: int) -> int:
        return requests.post(
            f"{app.url}/mutate",
            data=body,
            headers={"Content-Type": "application/json"},
            timeout=10,
            verify=ca,
        ).status_code

    def healthz(_: int) -> int:
        return requests.get(f"{app.url}/healthz", timeout=10, verify=ca).status_code

    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(mutate, range(8))) + list(pool.map(healthz, range(8)))


def tls(port: int, ca: str) -> ssl.SSLSocket:
    ctx = ssl.create_default_context(cafile=ca)
    return ctx.wrap_socket(
        socket.create_connection(("127.0.0.1", port), timeout=10), server_hostname="localhost"
    )


def partial_headers(port: int, ca: str, i: int) -> socket.socket:
    s = tls(port, ca)
    s.sendall(b"POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n")
    return s


def partial_body(port: int, ca: str, i: int) -> socket.socket:
    s = tls(port, ca)
    s.sendall(
        b"POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        b"Content-Length: 4000\r\n\r\n" + review_body()[:100]
    )
    return s


def stalled_handshake(port: int, ca: str, i: int) -> socket.socket:
    """A TCP connection that sends the first bytes of a TLS ClientHello (or nothing) and waits."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    if i % 2:
        s.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")  # a record of 512 bytes due
    return s


def healthz_on(s: socket.socket) -> bytes:
    """GET /healthz on the open connection `s`; the whole answer (by its Content-Length)."""
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = s.recv(4096)
        assert chunk, got
        got += chunk
    head, _, body = got.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
    while len(body) < length:
        chunk = s.recv(4096)
        assert chunk, got
        body += chunk
    return head


def idle_kept_alive(port: int, ca: str, i: int) -> socket.socket:
    """A connection that had its answer and waits, kept alive, without a next request."""
    s = tls(port, ca)
    head = healthz_on(s)
    assert head.startswith(b"HTTP/1.1 200") and b"close" not in head.lower(), head
    return s


def closed_by_server(s: socket.socket) -> bool:
    """Whether the server has closed `s`, without waiting (a TLS session ticket arriving after
    the handshake is read and is no close)."""
    s.setblocking(False)
    try:
        return s.recv(4096) == b""
    except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
        return False
    except (OSError, ssl.SSLError):
        return True  # reset, or TLS cut off
    finally:
        s.setblocking(True)


def slow_closed(app: AppProcess, ca: str) -> dict[str, float]:
    text = requests.get(f"{app.url}/metrics", timeout=10, verify=ca).text
    return {
        s.labels["stage"]: s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "rightsizer_slow_connections_closed_total"
    }


KINDS: dict[str, Callable[[int, str, int], socket.socket]] = {
    "headers": partial_headers,
    "body": partial_body,
    "handshake": stalled_handshake,
    "idle": idle_kept_alive,
}


def test_slow_and_stalled_clients_hold_no_thread_and_are_closed_after_their_bound(
    served: tuple[AppProcess, CertPaths],
) -> None:
    app, paths = served
    ca = str(paths.ca)
    opening = time.monotonic()
    held = {kind: [opened(app.port, ca, i) for i in range(EACH)] for kind, opened in KINDS.items()}
    try:
        assert answers(app, ca) == [200] * 16
        # the checks ran while every slow connection was held (the bound had not passed yet)
        assert time.monotonic() - opening < BOUND
        assert not any(closed_by_server(s) for conns in held.values() for s in conns)

        # the stalled ones are closed after their bound; an idle kept-alive one is not (it waits
        # in the worker's poller, holding no thread, up to gunicorn's keep-alive of 75 s)
        stalled = [s for kind in ("headers", "body", "handshake") for s in held[kind]]
        wait_for(
            lambda: all(closed_by_server(s) for s in stalled),
            timeout=BOUND + 30,
            what="the server to close every stalled connection",
            interval=0.5,
        )
        assert not any(closed_by_server(s) for s in held["idle"])
        held["idle"][0].settimeout(10)
        assert healthz_on(held["idle"][0]).startswith(b"HTTP/1.1 200")  # still served
    finally:
        for conns in held.values():
            for s in conns:
                s.close()
    assert slow_closed(app, ca) == {"handshake": EACH, "headers": EACH, "body": EACH}
    # logged once per client address (127.0.0.1) per worker, not once per connection
    lines = re.findall(r"Closed (\d+) connection\(s\) from 127\.0\.0\.1", app.log())
    assert 1 <= len(lines) <= WORKERS, app.log()
    assert answers(app, ca) == [200] * 16


def test_a_flood_of_connections_opened_and_dropped_leaves_the_server_answering(
    served: tuple[AppProcess, CertPaths],
) -> None:
    """3,000 connections from one address, opened in batches of 500 held at once (silent: no
    handshake) and then dropped, half of them reset; /healthz and /mutate answer during every
    batch and after. Failed before: each silent connection held a thread for 5 s."""
    app, paths = served
    ca = str(paths.ca)
    for batch in range(6):
        conns = [socket.create_connection(("127.0.0.1", app.port), timeout=10) for _ in range(500)]
        try:
            assert answers(app, ca) == [200] * 16, f"batch {batch}"
        finally:
            for i, s in enumerate(conns):
                if i % 2:  # reset instead of a graceful close
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.close()
    assert answers(app, ca) == [200] * 16


def read_answer(s: socket.socket, buf: bytes = b"") -> tuple[bytes, bytes, bytes]:
    """(head, body, what follows) of the next answer on `s`, by its Content-Length."""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        assert chunk, buf
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    found = re.search(rb"(?i)content-length: *(\d+)", head)
    length = int(found.group(1)) if found else 0
    while len(rest) < length:
        chunk = s.recv(65536)
        assert chunk, buf
        rest += chunk
    return head, rest[:length], rest[length:]


def test_requests_read_whole_by_the_loop_are_answered_as_gunicorn_would(
    served: tuple[AppProcess, CertPaths],
) -> None:
    """What the worker's loop reads before a thread answers: a chunked body, a body after
    `Expect: 100-continue`, two requests sent at once on one connection, and headers or a body
    too large (refused at once, not waited for)."""
    app, paths = served
    ca = str(paths.ca)
    body = review_body()
    post = b"POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"

    with tls(app.port, ca) as s:  # chunked, in two chunks
        half = len(body) // 2
        chunks = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (body[:half], body[half:]))
        s.sendall(post + b"Transfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n")
        head, answer, _ = read_answer(s)
        assert head.startswith(b"HTTP/1.1 200"), head
        assert json.loads(answer)["response"]["uid"] == "slow-clients"

    with tls(app.port, ca) as s:  # the body only once told to go on
        s.sendall(post + b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(body))
        head, _, rest = read_answer(s)
        assert head.startswith(b"HTTP/1.1 100"), head
        s.sendall(body)
        while True:  # gunicorn may say 100 Continue once more (RFC 9110 15.2: allowed)
            head, answer, rest = read_answer(s, rest)
            if not head.startswith(b"HTTP/1.1 100"):
                break
        assert head.startswith(b"HTTP/1.1 200"), head
        assert json.loads(answer)["response"]["allowed"] is True

    with tls(app.port, ca) as s:  # two requests in one send: both answered, in order
        s.sendall(
            post
            + b"Content-Length: %d\r\n\r\n" % len(body)
            + body
            + b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
        )
        first, answer, rest = read_answer(s)
        second, _, _ = read_answer(s, rest)
        assert first.startswith(b"HTTP/1.1 200") and b"allowed" in answer
        assert second.startswith(b"HTTP/1.1 200"), second

    with tls(app.port, ca) as s:  # a body of 1 MiB (past SMALL: read with a reservation)
        large = json.loads(body)
        large["request"]["object"]["metadata"]["annotations"] = {"example.com/x": "y" * (1 << 20)}
        data = json.dumps(large).encode()
        s.sendall(post + b"Content-Length: %d\r\n\r\n" % len(data) + data)
        head, answer, _ = read_answer(s)
        assert head.startswith(b"HTTP/1.1 200"), head
        assert json.loads(answer)["response"]["uid"] == "slow-clients"

    with tls(app.port, ca) as s:  # headers over 64 KiB
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: " + b"a" * 70_000)
        head, _, _ = read_answer(s)
        assert head.startswith(b"HTTP/1.1 431") and b"Connection: close" in head, head

    with tls(app.port, ca) as s:  # a body announced over 3 MiB (the largest any route takes)
        s.sendall(post + b"Content-Length: %d\r\n\r\n" % (3 * 1024 * 1024 + 1))
        head, _, _ = read_answer(s)
        assert head.startswith(b"HTTP/1.1 413"), head
