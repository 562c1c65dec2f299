"""POSTs through the official client's own connection pool, sent now and answered later.

The updater sends evictions by the thousand (15,750 in a dry run over 150,000 pods). Sent one at a
time, each waits for its answer; sent from a few threads, each answer's thread has to win the
GIL back from the thread planning the next pods, which on two cores tripled an eviction's client
CPU (issue 22: 0.30-0.57 ms against 0.21 ms one at a time). `send_post` writes the request on a
connection of the client's pool and returns at once; `SentPost.answer` reads the answer later, in
the same thread. A few requests sent before their answers are read (one connection each) keep
the API server busy while the caller goes on planning, without a thread (threads took 0.34 ms
of client CPU per eviction against the simulator where this took 0.12 ms, through http.client
then; on a slower machine, 0.29-0.32 ms through http.client, 0.12-0.13 ms as below:
benchmarks/eviction_send.py).

The connection is urllib3's, taken from and given back to the pool the client's pool manager
keeps for the API server (its TLS settings and certificates, its connection limits), connected
and timed as urllib3's `urlopen` does it (`_get_conn`, which replaces a connection the server
closed while idle; the connect timeout; `_validate_conn` for TLS). The request and its answer go
over its socket directly (app.kube.http1: the head rendered once, the answer parsed by
httptools), where urllib3 would go through http.client: that was most of an eviction's client
CPU. What is not done this way:
- A pool manager that goes through a proxy (the client's `proxy` setting) sends with `urlopen`,
  answered at once: a proxy's request line and CONNECT tunnel are urllib3's business.
- urlopen retries a request that could not connect (its Retry); here the eviction fails and its
  pod is tried again next run.

Every request waits for the client's rate limiter first (app.kube.throttle), in the caller's
thread, and gets the client's default (connect, read) timeout (app.kube.client), its default
headers and its BearerToken auth hook, as the typed methods send it.
"""

from __future__ import annotations

import errno
import functools
import ssl
import weakref
from typing import Any

import orjson
import urllib3
from kubernetes.client.exceptions import ApiException
from urllib3.connectionpool import HTTPConnectionPool
from urllib3.exceptions import SSLError
from urllib3.util.timeout import Timeout
from urllib3.util.url import parse_url

from app.kube.http1 import read_answer, render_head, request_bytes

Answer = tuple[int, str, bytes]  # status, reason, the body when it is not 2xx (else b"")
_EARLY_CLOSE = (errno.EPROTOTYPE, errno.ECONNRESET)  # urlopen goes on to read the answer
_JSON_HEADERS = {"Accept": "application/json", "Content-Type": "application/json"}


class SentPost:
    """A POST whose request is on the wire; `answer()` reads its answer (once), `abandon()`
    drops the connection instead (nothing more is read from it)."""

    def __init__(self, pool: HTTPConnectionPool | None, conn: Any, read_timeout: Any) -> None:
        self._pool, self._conn, self._read_timeout = pool, conn, read_timeout
        self._answer: Answer | None = None

    @classmethod
    def answered(cls, answer: Answer) -> SentPost:
        sent = cls(None, None, None)
        sent._answer = answer
        return sent

    def answer(self) -> Answer:
        """(status, reason, body when not 2xx). Raises what reading raises (OSError, http.client's
        HTTPException: app.kube.http1.read_answer), the connection then closed."""
        if self._answer is not None:
            return self._answer
        pool, conn = self._pool, self._conn
        if pool is None or conn is None:
            raise RuntimeError("this POST was abandoned or already answered")
        self._conn = None
        try:
            sock = conn.sock
            if sock is None:
                raise ConnectionError("the connection closed before its answer was read")
            sock.settimeout(Timeout.resolve_default_timeout(self._read_timeout))  # as urllib3
            status, reason, body, reusable = read_answer(sock)
        except BaseException:
            conn.close()
            pool._put_conn(None)  # the pool's slot, as urlopen gives it back after an error
            raise
        if not reusable:
            conn.close()  # the server closes it, or it carried more than the answer
        pool._put_conn(conn)  # a closed one is reconnected when it is next taken
        self._answer = (status, reason, b"" if 200 <= status <= 299 else body)
        return self._answer

    def abandon(self) -> None:
        pool, conn, self._conn = self._pool, self._conn, None
        if pool is not None and conn is not None:
            conn.close()
            pool._put_conn(None)


def send_post(api: Any, path: str, dry_run: bool, body: dict[str, Any]) -> SentPost:
    """Sends `body` (JSON) to `path` as the typed methods do (the client's default headers, its
    BearerToken auth, `Content-Type` and `Accept: application/json`, `dryRun=All` in a dry run),
    once the client's rate limiter lets it. A TLS error raises ApiException (status 0) as the
    REST layer raises it; an error while connecting or sending raises it (OSError, urllib3's
    HTTPError), the connection given back."""
    headers = {**api.default_headers, **_JSON_HEADERS}
    api.update_params_for_auth(headers, [], ["BearerToken"], path, "POST", body)
    query = "?dryRun=All" if dry_run else ""
    host = api.configuration.host
    rest = api.rest_client
    limiter = getattr(rest, "limiter", None)  # app.kube.client's _TimedREST: the client's own
    if limiter is not None:
        limiter.wait()
    data = orjson.dumps(body)
    timeout = _timeout(getattr(rest, "default_timeout", None))
    manager = rest.pool_manager
    try:
        if isinstance(manager, urllib3.ProxyManager):
            url = host + path + query
            return SentPost.answered(_urlopen(manager, url, data, headers, timeout))
        scheme, hostname, port, prefix = _origin(host)
        return _send(
            _pool(manager, scheme, hostname, port),
            prefix + path + query,
            data,
            headers,
            timeout,
        )
    except SSLError as e:  # as RESTClientObject.request reports it
        raise ApiException(status=0, reason=f"{type(e).__name__}\n{e}") from None


# Each pool manager's pool for the API server, as connection_from_host last handed it out: the
# lookup builds the pool's key from the manager's settings on every call (about 0.01 ms, 4% of a
# 150,000-pod dry run's CPU). It is looked up anew once that pool is closed, or once the manager
# holds no pool (after its `clear`); the manager then hands out what it would.
_POOLS: weakref.WeakKeyDictionary[Any, tuple[tuple[str, str | None, int | None], Any]] = (
    weakref.WeakKeyDictionary()
)


def _pool(manager: Any, scheme: str, hostname: str | None, port: int | None) -> Any:
    origin = (scheme, hostname, port)
    cached = _POOLS.get(manager)
    if (
        cached is not None
        and cached[0] == origin
        and cached[1].pool is not None
        and len(manager.pools)
    ):
        return cached[1]
    pool = manager.connection_from_host(hostname, port, scheme)
    _POOLS[manager] = (origin, pool)
    return pool


def _send(
    pool: HTTPConnectionPool, target: str, data: bytes, headers: dict[str, str], timeout: Any
) -> SentPost:
    conn: Any = pool._get_conn()
    try:
        limits = pool._get_timeout(timeout)  # None: no timeout, as urlopen takes it
        limits.start_connect()
        conn.timeout = Timeout.resolve_default_timeout(limits.connect_timeout)
        try:
            pool._validate_conn(conn)  # connects; for TLS, the handshake and its checks
        except ssl.SSLError as e:  # certificate checks too: as urlopen raises them
            raise SSLError(e) from e
        if conn.is_closed:  # plain HTTP: connected here, as http.client would in `request`
            conn.connect()
        sock = conn.sock
        sock.settimeout(conn.timeout)  # sent within the connect timeout, as urllib3 sends it
        head = render_head(conn.host, conn.port, conn.default_port, tuple(headers.items()))
        request = request_bytes("POST", target, head, data)
        try:
            sock.sendall(request)
        except OSError as e:
            # As urlopen: the server may have answered and closed before reading it all (an
            # early 4xx); the answer is read next, or reading fails.
            early = isinstance(e, BrokenPipeError) or e.errno in _EARLY_CLOSE
            if not early:
                raise
    except BaseException:
        conn.close()
        pool._put_conn(None)
        raise
    return SentPost(pool, conn, limits.read_timeout)


def _urlopen(manager: Any, url: str, data: bytes, headers: dict[str, str], timeout: Any) -> Answer:
    raw = manager.urlopen(
        "POST", url, body=data, headers=headers, timeout=timeout, preload_content=False
    )
    try:
        if 200 <= raw.status <= 299:
            raw.drain_conn()
            return raw.status, str(raw.reason), b""
        return raw.status, str(raw.reason), raw.data
    finally:
        raw.release_conn()


@functools.lru_cache(maxsize=8)
def _origin(host: str) -> tuple[str, str | None, int | None, str]:
    """The client's `host` setting as the pool manager keys its pools (scheme, host, port) and
    the path it may carry (an API server behind a path prefix: the client sends every request
    under it), parsed once instead of each URL per eviction."""
    url = parse_url(host)
    return url.scheme or "http", url.host, url.port, url.path or ""


@functools.lru_cache(maxsize=8)
def _timeout(pair: tuple[float, float] | None) -> urllib3.Timeout | None:
    """The REST layer's (connect, read) default as urllib3 takes it; None (a plain REST layer, no
    default) is no timeout, as RESTClientObject.request passes it."""
    return None if pair is None else urllib3.Timeout(connect=pair[0], read=pair[1])
