"""Server-side printing hooked into the router: the Accept header is negotiated before the
request runs (406 when nothing the client accepts can be served, as kube-apiserver answers
before reading storage), then a 2xx body (or each event of a watch) is converted to the Table
or PartialObjectMetadata(List) asked for. Errors are Status objects and pass through.

Watches follow kube-apiserver's watchEmbeddedEncoder
(staging/src/k8s.io/apiserver/pkg/endpoints/handlers/response.go): the first event's Table
carries the column definitions, the later ones none; an object that cannot be converted is
sent as it is.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Callable, Iterator
from typing import Any

from app.simulator.apiserver.errors import ApiError, bad_request
from app.simulator.apiserver.store import dumps
from app.simulator.endpoints.messages import Request, Response
from app.simulator.printers import negotiation, table
from app.simulator.printers.negotiation import Target


def negotiate(req: Request) -> Target | None:
    """The conversion the request's Accept header asks for; 406 Not Acceptable if none fits."""
    try:
        return negotiation.negotiate(req.headers.get("accept"))
    except negotiation.NotAcceptable as e:
        raise _not_acceptable(str(e)) from None


def _not_acceptable(message: str) -> ApiError:
    return ApiError(406, message, "NotAcceptable")


def _include(target: Target, req: Request) -> str:
    if target.kind != "Table":
        return ""
    try:
        return negotiation.include_object(req.query)
    except negotiation.InvalidTableOptions as e:
        raise bad_request(str(e)) from None


def respond(
    resp: Response, target: Target | None, req: Request, now: Callable[[], float]
) -> Response:
    """`resp` in the representation `target` names (unchanged when None or an error)."""
    if target is None or resp.status >= 300:
        return resp
    if resp.content_type.split(";")[0].strip() != "application/json":
        return resp  # a stream of text (pods/log) is no object: written as it is
    include = _include(target, req)
    if resp.stream is not None:
        return dataclasses.replace(resp, stream=_events(resp.stream, target, include, now))
    obj = json.loads(resp.body)
    if not isinstance(obj, dict) or obj.get("kind") == "Status":
        return resp
    try:
        converted = table.transform(obj, target, include, now())
    except negotiation.NotAcceptable as e:
        raise _not_acceptable(str(e)) from None
    return dataclasses.replace(resp, body=dumps(converted))  # headers (warnings) kept


def _events(
    stream: Iterator[bytes], target: Target, include: str, now: Callable[[], float]
) -> Iterator[bytes]:
    headers = True
    try:
        for chunk in stream:
            event: dict[str, Any] = json.loads(chunk)
            obj = event.get("object")
            # An object that cannot be converted is sent as it is, as the watch encoder does.
            if isinstance(obj, dict):
                with contextlib.suppress(negotiation.NotAcceptable):
                    event["object"] = table.transform(
                        obj, target, include, now(), no_headers=not headers
                    )
            headers = False
            yield dumps(event) + b"\n"
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
