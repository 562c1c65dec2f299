"""What passes between the transport and the handlers: a Request in, a Response out, and the
view of the API server a subresource handler gets (`ApiContext`).

Its own module so that the router (api.py) and the subresource handlers it calls
(subresources.py, resize.py) both import it instead of each other.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from app.simulator.apiserver.errors import ApiError
from app.simulator.apiserver.store import Store, dumps
from app.simulator.apiserver.version import KubeVersion
from app.simulator.control.cluster import SimCluster


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes = b""


@dataclass
class Response:
    status: int
    body: bytes = b""
    stream: Iterator[bytes] | None = None
    content_type: str = "application/json"
    # Further headers (Warning, ETag, Cache-Control, Location ...); Cache-Control replaces the
    # default "no-cache, private".
    headers: dict[str, str] = field(default_factory=dict)


def json_response(status: int, obj: Any) -> Response:
    return Response(status, dumps(obj))


def status_response(err: ApiError) -> Response:
    return json_response(err.code, err.status())


class ApiContext(Protocol):
    """What a subresource handler reads from the API server (api.Api): the cluster it serves,
    that cluster's store, and the Kubernetes release whose rules apply."""

    @property
    def cluster(self) -> SimCluster: ...

    @property
    def store(self) -> Store: ...

    @property
    def version(self) -> KubeVersion: ...
