"""POST /mutate as a WSGI route of its own, ahead of Flask's request machinery.

Every pod creation in the cluster waits for this answer, and the review itself (parse, look up,
answer from the patch cache) costs less than Flask's handling of a request around it: request and
application contexts, URL matching, before/after hooks, a Response object. So `MutateRoute` wraps
the application's WSGI callable: a POST to /mutate goes straight to `Webhook.admit`, anything
else (other paths, other methods on /mutate) to Flask as before.

What the Flask view did is done here too, in the same order: a body over MAX_BODY_BYTES by its
Content-Length is refused with 413 before it is read; the body is read through werkzeug's own
input stream (`get_input_stream`: never past Content-Length, chunked bodies only from a server
that terminates them, as Flask's `request.stream`); the review's time is observed in
rightsizer_webhook_review_duration_seconds; the request is counted by the observers app.api.metrics
registers through app.web.probes (rightsizer_http_requests and its latency, route "/mutate"). An
error outside the review (which fails open by itself) answers as app.api.errors does, with the
body both build in app.web.error_body: the HTTP error's own status, else 500 and a log line.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from http import HTTPStatus
from typing import TYPE_CHECKING

from werkzeug.exceptions import HTTPException
from werkzeug.wsgi import get_content_length, get_input_stream

from app.web.error_body import http_error, internal_error
from app.web.probes import RequestObserver
from app.webhook.handler import Webhook, too_large
from app.webhook.metrics import DURATION, REVIEWS
from app.webhook.review import MAX_BODY_BYTES, dump

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

log = logging.getLogger(__name__)

PATH = "/mutate"
HEADERS = [("Content-Type", "application/json")]


class MutateRoute:
    """WSGI middleware: POST /mutate answered by `hook`, everything else by `app`."""

    def __init__(
        self, app: WSGIApplication, hook: Webhook, observers: Sequence[RequestObserver]
    ) -> None:
        self.app, self.hook = app, hook
        self.observers = observers  # read on each request: registered after this may be built

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != PATH or environ.get("REQUEST_METHOD") != "POST":
            return self.app(environ, start_response)
        started = time.perf_counter()
        try:
            status, body = self.answer(environ)
        except HTTPException as e:  # e.g. the client went away while sending the body
            status, doc = http_error(e)
            body = dump(doc)
        except Exception:
            log.exception("unhandled error")
            status, doc = internal_error()
            body = dump(doc)
        start_response(
            f"{status} {HTTPStatus(status).phrase}",
            [*HEADERS, ("Content-Length", str(len(body)))],
        )
        seconds = time.perf_counter() - started
        for observe in self.observers:
            observe(PATH, "POST", status, seconds)
        return [body]

    def answer(self, environ: WSGIEnvironment) -> tuple[int, bytes]:
        with DURATION.time():
            if (get_content_length(environ) or 0) > MAX_BODY_BYTES:
                REVIEWS.labels("too_large").inc()
                return 413, dump(too_large())
            body = get_input_stream(environ).read(MAX_BODY_BYTES + 1)
            status, doc = self.hook.admit(body)
            return status, dump(doc)
