"""Request bodies of the REST API: read only once the caller is authenticated (`auth.requires`
checks the token first), never more than RIGHTSIZER_API_MAX_BODY_BYTES, parsed once.

Whatever does not parse as JSON is the client's fault and a 400 saying what and where: bad
UTF-8, NaN or Infinity (not JSON, though Python's parser takes them), and nesting deeper than
app.core.jsontext.MAX_DEPTH (the field named), which would otherwise be a 500 wherever a parser or
a recursive walk ran out of stack. Each refusal is one log line, never a traceback.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import request

from app.api.errors import ApiError
from app.core.jsontext import JsonTextError, loads
from app.settings import settings

SETTING = "RIGHTSIZER_API_MAX_BODY_BYTES"
_CACHE = "rightsizer.json_body"

log = logging.getLogger(__name__)


def too_large(limit: int) -> ApiError:
    return ApiError(
        413,
        "RequestEntityTooLarge",
        f"the request body is larger than the limit of {limit} bytes ({SETTING})",
    )


def read_body() -> bytes:
    """The raw body, at most the limit: 413 as soon as Content-Length says more, or once more
    than the limit has arrived (a chunked body has no Content-Length)."""
    limit = settings().api.max_body_bytes
    if (request.content_length or 0) > limit:
        raise too_large(limit)
    data = request.stream.read(limit + 1)
    if len(data) > limit:
        raise too_large(limit)
    return data


def request_json() -> Any:
    """The body parsed as JSON (once per request, whatever Content-Type claims); 400 when it is
    empty or not JSON, 413 when too large."""
    cached = request.environ.get(_CACHE, _CACHE)  # per request (g may outlive one)
    if cached is _CACHE:
        data = read_body()
        if not data.strip():
            raise ApiError(400, "BadRequest", "a JSON body is required")
        try:
            doc = loads(data)
        except JsonTextError as e:
            raise refused(f"the body is not valid JSON: {e.message}") from None
        request.environ[_CACHE] = cached = doc
    return cached


def refused(message: str, details: list[dict[str, str]] | None = None) -> ApiError:
    """A 400 for a body (or JSON text in it) that cannot be parsed, logged in one line: who sent
    what to where, the reason quoted (it may hold the client's field names) and shortened."""
    reason = message if len(message) <= 200 else message[:200] + "..."
    log.info(
        "refused the body of %s %s from %s: %r",
        request.method,
        request.path,
        request.remote_addr,
        reason,
    )
    return ApiError(400, "BadRequest", message, details)
