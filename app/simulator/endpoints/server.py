"""The HTTP server: stdlib ThreadingHTTPServer, one thread per connection.

Why not Flask/werkzeug: a watch is a long-lived response that blocks on the store's condition
variable, so a thread per connection is the natural model, and the stdlib server gives exactly
that with HTTP/1.1 keep-alive and no per-request framework work on LIST bodies that are already
bytes. Watches are sent with chunked transfer encoding, one event per chunk, like kube-apiserver.
"""

from __future__ import annotations

import logging
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

from app.simulator.apiserver.errors import ApiError
from app.simulator.endpoints.api import Api
from app.simulator.endpoints.messages import Request, Response, status_response

log = logging.getLogger(__name__)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "rightsizer-sim"
    # Headers and body go out in two writes: without TCP_NODELAY the body waits ~40 ms for the
    # client's delayed ACK (Nagle). kube-apiserver sets it too.
    disable_nagle_algorithm = True
    api: Api  # set on the subclass built per server

    def _serve(self) -> None:
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        req = Request(
            self.command,
            url.path,
            dict(parse_qsl(url.query, keep_blank_values=True)),
            {k.lower(): v for k, v in self.headers.items()},
            body,
        )
        try:
            resp = self.api.handle(req)
        except Exception:
            log.exception("%s %s failed", self.command, self.path)
            resp = status_response(
                ApiError(
                    500, "Internal error occurred: simulator bug, see its log", "InternalError"
                )
            )
        if resp.stream is None:
            self._send_body(resp)
        else:
            self._send_stream(resp)

    def _send_body(self, resp: Response) -> None:
        self.send_response(resp.status)
        if resp.content_type:  # none on a 304, 406 or 412 of the OpenAPI handlers
            self.send_header("Content-Type", resp.content_type)
        if resp.status != 304:  # a 304 describes the cached body: no length of its own
            self.send_header("Content-Length", str(len(resp.body)))
        self._send_headers(resp)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(resp.body)

    def _send_headers(self, resp: Response) -> None:
        if "Cache-Control" not in resp.headers:
            self.send_header("Cache-Control", "no-cache, private")
        for name, value in resp.headers.items():
            self.send_header(name, value)

    def _send_stream(self, resp: Response) -> None:
        assert resp.stream is not None
        self.send_response(resp.status)
        self.send_header("Content-Type", resp.content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self._send_headers(resp)
        self.end_headers()
        try:
            self.wfile.flush()
            for chunk in resp.stream:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (TimeoutError, BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            close = getattr(resp.stream, "close", None)
            if close:
                close()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _serve

    def log_message(self, format: str, *args: object) -> None:
        log.debug("%s " + format, self.address_string(), *args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # many informers connect at once in a benchmark

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that went away mid-request (reset, broken pipe) is routine, as for
        kube-apiserver: a debug line, where socketserver printed a traceback to stderr.
        Anything else is logged with its traceback."""
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError):
            log.debug("client %s went away: %s", client_address, error)
            return
        log.exception("serving %s failed", client_address)


class SimServer:
    """The API server for one cluster, on 127.0.0.1 (port 0 picks a free one)."""

    def __init__(self, api: Api, host: str = "127.0.0.1", port: int = 0) -> None:
        handler = type("Handler", (_Handler,), {"api": api})
        self.httpd = _Server((host, port), handler)
        self.api = api
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, name="sim-http", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self.api.store.close()  # ends watches
        self.httpd.shutdown()
        self.httpd.server_close()
