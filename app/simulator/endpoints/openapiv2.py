"""`/openapi/v2`, served as kube-openapi's handler serves it (kube-openapi
`pkg/handler/handler.go` RegisterOpenAPIVersionedService, behind gziphandler, with Go's
`http.ServeContent` answering conditional requests).

- Formats: `application/json`, and gnostic's protobuf (apiserver/gnostic.py) for
  `application/com.github.proto-openapi.spec.v2@v1.0+protobuf` (what client-go's
  `OpenAPISchema()` asks for) or `...spec.v2.v1.0+protobuf`, both answered with Content-Type
  `application/com.github.proto-openapi.spec.v2.v1.0+protobuf`. The Accept header's clauses are
  tried best first as goautoneg's ParseAccept sorts them (q, then a concrete type before `*`,
  then a concrete subtype before `*`; no header is `*/*`), each against JSON then protobuf;
  none matching is 406 with no body. `Vary: Accept`.
- `ETag`: the quoted upper-case hex SHA-512 of the JSON document, the same for both formats
  (kube-openapi reuses it "because of the Vary header"); `Last-Modified`: when the document was
  built. `If-None-Match` with the ETag (or `*`) and `If-Modified-Since` not before it are 304
  without Content-Type; `If-Match` without it and `If-Unmodified-Since` before it are 412
  (net/http `checkPreconditions`). kubectl's HTTP cache revalidates with `If-None-Match`.
- gzip (NYTimes gziphandler): a body of 1400 bytes or more is gzipped when `Accept-Encoding`
  takes gzip; every answer carries `Vary: Accept-Encoding`.
- GET and HEAD only, as the simulator's `/openapi/v3` (kube-apiserver's RBAC lets only `get`
  reach `/openapi/*` for anyone but an administrator). `Range` is not honoured (a server may
  ignore it) and no `Accept-Ranges` is advertised.

`/swagger-2.0.0.pb-v1` and the other pre-1.14 paths are not served (404), as kube-apiserver
removed them in 1.14.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import struct
import threading
from dataclasses import dataclass, field
from email.utils import formatdate, parsedate_to_datetime
from time import time

from app.simulator.apiserver import gnostic, openapiv2, schema
from app.simulator.apiserver.errors import ApiError
from app.simulator.apiserver.version import KubeVersion
from app.simulator.endpoints.messages import Request, Response

JSON = "application/json"
PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
PROTOBUF_DEPRECATED = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
_OFFERED = (  # (type, subtype, returned Content-Type), in kube-openapi's order
    ("application", "json", JSON),
    ("application", PROTOBUF_DEPRECATED.split("/")[1], PROTOBUF),
    ("application", PROTOBUF.split("/")[1], PROTOBUF),
)
GZIP_MIN_SIZE = 1400  # gziphandler.DefaultMinSize


@dataclass
class _Served:
    """The document in one format, and its gzip encoding once asked for."""

    raw: bytes
    gzipped: bytes | None = field(default=None)

    def gzip(self) -> bytes:
        if self.gzipped is None:
            self.gzipped = gzip.compress(self.raw, compresslevel=6, mtime=0)
        return self.gzipped


class OpenApiV2:
    """The Swagger 2.0 document of one simulated release, built on first use."""

    def __init__(self, version: KubeVersion) -> None:
        self.version = version
        self._lock = threading.Lock()
        self._built: tuple[dict[str, _Served], str, float] | None = None

    def documents(self) -> tuple[dict[str, _Served], str, float]:
        """({Content-Type: document}, ETag without quotes, when built)."""
        with self._lock:
            if self._built is None:
                defs = schema.definitions(self.version.minor)
                git_version = self.version.document()["gitVersion"]
                doc = openapiv2.document(defs, git_version)
                raw = json.dumps(doc, separators=(",", ":")).encode()
                served = {
                    JSON: _Served(raw),
                    PROTOBUF: _Served(gnostic.encode_document(doc)),
                }
                etag = hashlib.sha512(raw).hexdigest().upper()
                self._built = (served, etag, float(int(time())))
            return self._built

    def handle(self, req: Request) -> Response:
        if req.method not in ("GET", "HEAD"):
            raise ApiError(405, f"the server does not allow this method ({req.method})")
        headers = {"Vary": "Accept-Encoding, Accept"}
        content_type = negotiate(req.headers.get("accept", ""))
        if content_type is None:
            return Response(406, b"", content_type="", headers=headers)
        served, etag, built = self.documents()
        headers["Etag"] = f'"{etag}"'
        headers["Last-Modified"] = formatdate(built, usegmt=True)
        early = _preconditions(req, headers["Etag"], built)
        if early is not None:
            if early == 412:  # the handler's Content-Type stays, with no body
                return Response(412, b"", content_type=content_type, headers=headers)
            del headers["Last-Modified"]  # writeNotModified: no Content-Type, the ETag stays
            return Response(304, b"", content_type="", headers=headers)
        doc = served[content_type]
        body = doc.raw
        if (
            req.method == "GET"
            and len(body) >= GZIP_MIN_SIZE
            and accepts_gzip(req.headers.get("accept-encoding", ""))
        ):
            body = doc.gzip()
            headers["Content-Encoding"] = "gzip"
        return Response(200, body, content_type=content_type, headers=headers)


def negotiate(accept: str) -> str | None:
    """The Content-Type served for an Accept header, None when nothing offered matches."""
    for kind, subtype in parse_accept(accept or "*/*"):
        for offered_type, offered_subtype, returned in _OFFERED:
            if kind not in (offered_type, "*"):
                continue
            if subtype not in (offered_subtype, "*"):
                continue
            return returned
    return None


def parse_accept(header: str) -> list[tuple[str, str]]:
    """(type, subtype) of each clause, in goautoneg ParseAccept's order: case kept, a clause
    without '/' dropped (unless `*`), q=0 kept (the handler never looks at q beyond sorting)."""
    clauses: list[tuple[float, str, str]] = []
    for part in header.split(","):
        media, *params = part.strip(" ").split(";")
        pieces = media.split("/")
        kind = pieces[0].strip(" ")
        if len(pieces) == 1 and kind == "*":
            subtype = "*"
        elif len(pieces) == 2:
            subtype = pieces[1].strip(" ")
        else:
            continue
        q = 1.0
        for param in params:
            name, eq, value = param.partition("=")
            if eq and name.strip(" ") == "q":
                q = _parse_q(value)
        clauses.append((q, kind, subtype))
    # sort.Sort of a handful of clauses is an insertion sort with goautoneg's Less
    for i in range(1, len(clauses)):
        j = i
        while j > 0 and _less(clauses[j], clauses[j - 1]):
            clauses[j], clauses[j - 1] = clauses[j - 1], clauses[j]
            j -= 1
    return [(kind, subtype) for _, kind, subtype in clauses]


def _parse_q(text: str) -> float:
    """strconv.ParseFloat(text, 32): no spaces or underscores, rounded to a float32; what it
    cannot read is 0 (goautoneg drops the error), out of range is infinite."""
    if text != text.strip() or "_" in text:
        return 0.0
    try:
        value = float(text)
    except ValueError:
        return 0.0
    try:
        return float(struct.unpack("<f", struct.pack("<f", value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def _less(a: tuple[float, str, str], b: tuple[float, str, str]) -> bool:
    if a[0] > b[0]:
        return True
    if a[1] != "*" and b[1] == "*":
        return True
    return a[2] != "*" and b[2] == "*"


def accepts_gzip(header: str) -> bool:
    """Whether Accept-Encoding takes gzip with a q above 0 (gziphandler's acceptsGzip)."""
    for part in header.split(","):
        coding, *params = part.strip().split(";")
        if coding.strip().lower() != "gzip":
            continue
        q = 1.0
        for param in params:
            name, _, value = param.strip().partition("=")
            if name.strip() == "q":
                q = _parse_q(value)
        return q > 0
    return False


def _preconditions(req: Request, etag: str, built: float) -> int | None:
    """304 or 412 when a conditional header says so (net/http checkPreconditions)."""
    if_match = req.headers.get("if-match", "")
    if if_match:
        if not _etag_listed(if_match, etag, weak=False):
            return 412
    elif _since(req.headers.get("if-unmodified-since", ""), built, before=False) is False:
        return 412
    if_none_match = req.headers.get("if-none-match", "")
    if if_none_match:
        return 304 if _etag_listed(if_none_match, etag, weak=True) else None
    if _since(req.headers.get("if-modified-since", ""), built, before=True) is False:
        return 304
    return None


def _etag_listed(header: str, etag: str, *, weak: bool) -> bool:
    for tag in (t.strip() for t in header.split(",")):
        if tag == "*":
            return True
        if weak:
            if tag.removeprefix("W/") == etag:
                return True
        elif tag == etag:
            return True
    return False


def _since(header: str, built: float, *, before: bool) -> bool | None:
    """If-Modified-Since (`before`: True means modified since) or If-Unmodified-Since: None
    when absent or unreadable, else whether the condition holds."""
    if not header:
        return None
    try:
        when = parsedate_to_datetime(header).timestamp()
    except (TypeError, ValueError):
        return None
    return built > when if before else built <= when
