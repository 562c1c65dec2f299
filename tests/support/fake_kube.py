"""A stand-in kube-apiserver answering TokenReview and SubjectAccessReview over real HTTP.

The kubernetes client talks to it through a kubeconfig, exactly as it talks to a cluster, so the
Kubernetes auth mode is tested end to end without a cluster.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

USERS = {
    "kube-admin-token-abcdef": {"username": "admin", "uid": "u1", "groups": ["system:masters"]},
    "kube-dev-token-abcdef": {"username": "dev", "uid": "u2", "groups": ["developers"]},
}


class FakeApiServer:
    def __init__(self) -> None:
        self.token_reviews = 0
        self.access_reviews: list[dict[str, Any]] = []

    def allowed(self, spec: dict[str, Any]) -> bool:
        attrs = spec.get("resourceAttributes") or {}
        if "system:masters" in (spec.get("groups") or []):
            return True
        # dev may edit policies in namespace dev only, and read everything
        if attrs.get("verb") in ("get", "list"):
            return True
        return attrs.get("resource") == "policies" and attrs.get("namespace") == "dev"

    def __call__(self, environ: Any, start_response: Any) -> Any:
        req = Request(environ)
        body = json.loads(req.get_data() or b"{}")
        if req.path == "/apis/authentication.k8s.io/v1/tokenreviews":
            self.token_reviews += 1
            user = USERS.get(body["spec"]["token"])
            status = {"authenticated": True, "user": user} if user else {"authenticated": False}
            out = {**body, "status": status}  # the real one echoes the token back, too
        elif req.path == "/apis/authorization.k8s.io/v1/subjectaccessreviews":
            self.access_reviews.append(body["spec"])
            out = {**body, "status": {"allowed": self.allowed(body["spec"]), "reason": "fake RBAC"}}
        else:
            return Response("not found", 404)(environ, start_response)
        return Response(json.dumps(out), 201, content_type="application/json")(
            environ, start_response
        )


@contextmanager
def fake_apiserver(tmp: Path) -> Iterator[tuple[FakeApiServer, Path]]:
    fake = FakeApiServer()
    server = make_server("127.0.0.1", 0, fake, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    kubeconfig = tmp / "kubeconfig"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {"name": "fake", "cluster": {"server": f"http://127.0.0.1:{server.port}"}}
                ],
                "users": [{"name": "rightsizer", "user": {"token": "rightsizer-own-token"}}],
                "contexts": [
                    {"name": "fake", "context": {"cluster": "fake", "user": "rightsizer"}}
                ],
                "current-context": "fake",
            }
        )
    )
    try:
        yield fake, kubeconfig
    finally:
        server.shutdown()
        thread.join(5)
