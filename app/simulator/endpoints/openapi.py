"""`/openapi/v3` and `/openapi/v3/<group version>`, served as kube-openapi's handler3 serves them
(kube-openapi `pkg/handler3/handler.go`).

The discovery document names each group version's document with `?hash=` the upper-case hex
SHA-512 of its JSON bytes. A request with the right hash gets `Cache-Control: public, immutable`
(kubectl keeps it in its HTTP cache), one with another hash a 301 to the current URL, one with
none the document uncached. Documents are JSON only: an `Accept` that admits no JSON gets 406,
so no client is told the simulator speaks protobuf.

`/openapi/v2` is endpoints/openapiv2.py's: kubectl 1.27+ reads v3 and goes to v2 only where v3
cannot answer (a `kind: List`, `explain --output=plaintext-openapiv2`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from email.utils import formatdate
from time import time

from app.simulator.apiserver import openapi, schema
from app.simulator.apiserver.errors import ApiError
from app.simulator.apiserver.version import KubeVersion
from app.simulator.endpoints.messages import Request, Response

_YEAR = 365 * 24 * 3600


class OpenApiV3:
    """The documents of one simulated release, built on first use."""

    def __init__(self, version: KubeVersion) -> None:
        self.version = version
        self._lock = threading.Lock()
        self._docs: dict[str, tuple[bytes, str]] | None = None

    def documents(self) -> dict[str, tuple[bytes, str]]:
        """{gv path: (JSON bytes, hash)} of every group version."""
        with self._lock:
            if self._docs is None:
                defs = schema.definitions(self.version.minor)
                git_version = self.version.document()["gitVersion"]
                docs = {}
                for group, version in openapi.served_group_versions():
                    doc = openapi.document(defs, group, version, git_version)
                    raw = json.dumps(doc, separators=(",", ":")).encode()
                    docs[openapi.gv_path(group, version)] = (raw, _etag(raw))
                self._docs = docs
            return self._docs

    def handle(self, req: Request, path: str) -> Response:
        if req.method not in ("GET", "HEAD"):
            raise ApiError(405, f"the server does not allow this method ({req.method})")
        docs = self.documents()
        if path == "/openapi/v3":
            body = json.dumps(
                openapi.discovery({p: digest for p, (_, digest) in docs.items()}),
                separators=(",", ":"),
            ).encode()
            return Response(200, body, headers={"Etag": f'"{_etag(body)}"'})
        found = docs.get(path.removeprefix("/openapi/v3/"))
        if not path.startswith("/openapi/v3/") or found is None:
            raise ApiError(404, "the server could not find the requested resource", "NotFound")
        raw, digest = found
        if not _accepts_json(req.headers.get("accept", "")):
            return Response(406, b"", content_type="text/plain", headers={"Vary": "Accept"})
        headers = {"Etag": f'"{digest}"', "Vary": "Accept"}
        sent = req.query.get("hash")
        if sent is not None and sent != "":
            if sent != digest:
                location = f"{path}?hash={digest}"
                headers["Location"] = location
                return Response(301, b"", content_type="text/html", headers=headers)
            headers["Cache-Control"] = "public, immutable"
            headers["Expires"] = formatdate(time() + _YEAR, usegmt=True)
        return Response(200, raw, headers=headers)


def _etag(data: bytes) -> str:
    return hashlib.sha512(data).hexdigest().upper()


def _accepts_json(accept: str) -> bool:
    """Whether an Accept header admits application/json (no header admits anything)."""
    if not accept.strip():
        return True
    for clause in accept.split(","):
        media = clause.split(";")[0].strip().lower()
        if media in ("*/*", "application/*", "application/json"):
            return True
    return False
