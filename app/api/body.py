"""Request bodies of the REST API: read only once the caller is authenticated (`auth.requires`
checks the token first), never more than RIGHTSIZER_API_MAX_BODY_BYTES, parsed once.

Whatever does not parse as JSON is the client's fault and a 400: bad UTF-8, NaN or Infinity
(not JSON, though Python's parser takes them), and nesting too deep for the parser
(RecursionError), which would otherwise be a 500.
"""

from __future__ import annotations

import json
from typing import Any

from flask import request

from app.api.errors import ApiError
from app.settings import settings

SETTING = "RIGHTSIZER_API_MAX_BODY_BYTES"
_CACHE = "rightsizer.json_body"


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


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
            doc = json.loads(data, parse_constant=_not_json)
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            raise ApiError(400, "BadRequest", "the body is not valid JSON") from None
        request.environ[_CACHE] = cached = doc
    return cached
