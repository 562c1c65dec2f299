"""Just enough of kube-apiserver for MutatingWebhookConfigurations, on a loopback port.

It answers the official client's real HTTP requests (paths, verbs, JSON, Status errors) and, like
the real server, adds defaults and bumps resourceVersion on writes and refuses a stale one.
"""

from __future__ import annotations

import copy
import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PREFIX = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"


class FakeApiServer:
    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.requests: list[tuple[str, str]] = []
        self.conflicts_to_inject = 0  # answer this many writes with 409 first
        self._versions = itertools.count(100)
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeApiServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def kubeconfig(self) -> str:
        return (
            "apiVersion: v1\nkind: Config\n"
            f"clusters: [{{name: fake, cluster: {{server: '{self.url}'}}}}]\n"
            "users: [{name: u, user: {token: not-a-real-token}}]\n"
            "contexts: [{name: c, context: {cluster: fake, user: u}}]\n"
            "current-context: c\n"
        )

    def _stored(self, body: dict[str, Any]) -> dict[str, Any]:
        obj = copy.deepcopy(body)
        obj["metadata"]["resourceVersion"] = str(next(self._versions))
        obj["metadata"].setdefault("uid", "0b1c2d3e-0000-4000-8000-00000000000a")
        for hook in obj.get("webhooks", []):  # server-side defaults
            hook.setdefault("objectSelector", {})
            hook.setdefault("matchPolicy", "Equivalent")
        return obj

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, code: int, doc: dict[str, Any]) -> None:
                data = json.dumps(doc).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _status(self, code: int, reason: str) -> None:
                self._send(
                    code,
                    {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason,
                     "code": code},
                )  # fmt: skip

            def _body(self) -> dict[str, Any]:
                n = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(n))

            def _name(self) -> str | None:
                path = self.path.split("?")[0]
                if not path.startswith(PREFIX):
                    return None
                return path[len(PREFIX) :].strip("/")

            def _route(self, verb: str) -> None:
                name = self._name()
                fake.requests.append((verb, self.path.split("?")[0]))
                if name is None:
                    return self._status(404, "NotFound")
                with fake._lock:
                    body = self._body() if verb in ("POST", "PUT") else None
                    if verb in ("POST", "PUT") and fake.conflicts_to_inject > 0:
                        fake.conflicts_to_inject -= 1
                        return self._status(409, "Conflict")
                    if verb == "GET":
                        if name not in fake.objects:
                            return self._status(404, "NotFound")
                        return self._send(200, fake.objects[name])
                    if verb == "POST":
                        assert body is not None
                        name = body["metadata"]["name"]
                        if name in fake.objects:
                            return self._status(409, "AlreadyExists")
                        fake.objects[name] = fake._stored(body)
                        return self._send(201, fake.objects[name])
                    if verb == "PUT":
                        assert body is not None
                        current = fake.objects.get(name)
                        if current is None:
                            return self._status(404, "NotFound")
                        wanted = body["metadata"].get("resourceVersion")
                        if wanted != current["metadata"]["resourceVersion"]:
                            return self._status(409, "Conflict")
                        fake.objects[name] = fake._stored(body)
                        return self._send(200, fake.objects[name])
                    if verb == "DELETE":
                        if fake.objects.pop(name, None) is None:
                            return self._status(404, "NotFound")
                        return self._send(200, {"kind": "Status", "status": "Success"})
                return self._status(405, "MethodNotAllowed")

            def do_GET(self) -> None:
                self._route("GET")

            def do_POST(self) -> None:
                self._route("POST")

            def do_PUT(self) -> None:
                self._route("PUT")

            def do_DELETE(self) -> None:
                self._route("DELETE")

        return Handler
