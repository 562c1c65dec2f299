"""REST request bodies: the token is checked before the body is read, bodies are capped
(RIGHTSIZER_API_MAX_BODY_BYTES, 413 naming the limit), and anything that is not JSON, however
deeply nested, is a 400 (issue #15)."""

from __future__ import annotations

import io
import json

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import EnvironBuilder, run_wsgi_app

from app.config import override
from tests.support.tokens import bearer

DEEP = "[" * 200_000
WRITES = [
    ("POST", "/api/v1/policies"),
    ("PUT", "/api/v1/policies/shop/web"),
    ("PATCH", "/api/v1/policies/shop/web"),
    ("POST", "/api/v1/scalers"),
    ("PUT", "/api/v1/scalers/dns"),
    ("PATCH", "/api/v1/scalers/dns"),
]


class MustNotBeRead(io.RawIOBase):
    """A request body of `size` bytes that records any attempt to read it (seeking, which the
    test client does to measure it, reads nothing)."""

    def __init__(self, size: int) -> None:
        self.size, self.pos, self.reads = size, 0, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = offset + (self.size if whence == 2 else self.pos if whence == 1 else 0)
        return self.pos

    def tell(self) -> int:
        return self.pos

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        self.reads += 1
        raise AssertionError("the body was read")


@pytest.mark.parametrize(("method", "path"), WRITES)
def test_a_big_body_without_a_token_is_401_and_never_read(
    anon: FlaskClient, method: str, path: str
) -> None:
    body = MustNotBeRead(100 * 2**20)
    resp = anon.open(path, method=method, input_stream=body, content_type="application/json")
    assert resp.status_code == 401
    assert resp.get_json()["error"] == "Unauthorized"
    assert body.reads == 0


def test_a_bad_token_with_a_body_is_401_and_the_body_not_read(anon: FlaskClient) -> None:
    body = MustNotBeRead(5000)
    resp = anon.post(
        "/api/v1/policies",
        input_stream=body,
        content_type="application/json",
        headers={"Authorization": "Bearer nope"},
    )
    assert resp.status_code == 401
    assert body.reads == 0


@pytest.mark.parametrize(("method", "path"), WRITES)
def test_a_body_over_the_default_limit_is_413_naming_it(
    client: FlaskClient, method: str, path: str
) -> None:
    big = json.dumps({"name": "web", "namespace": "shop", "pad": "x" * 2**20})
    resp = client.open(path, method=method, data=big, content_type="application/json")
    assert resp.status_code == 413
    doc = resp.get_json()
    assert doc["error"] == "RequestEntityTooLarge"
    assert "1048576 bytes" in doc["message"]
    assert "RIGHTSIZER_API_MAX_BODY_BYTES" in doc["message"]


@pytest.fixture
def small_limit_app(app: Flask) -> Flask:
    override(app, {"API_MAX_BODY_BYTES": 200})
    return app


def test_the_limit_is_a_setting_and_counts_bodies_without_content_length(
    small_limit_app: Flask,
) -> None:
    client = small_limit_app.test_client()
    ok = json.dumps({"name": "web", "namespace": "shop"})
    assert client.post("/api/v1/policies", data=ok, headers=bearer("admin")).status_code == 201
    over = json.dumps({"name": "api", "namespace": "shop", "pad": "x" * 200})
    resp = client.post("/api/v1/policies", data=over, headers=bearer("admin"))
    assert resp.status_code == 413
    assert "200 bytes" in resp.get_json()["message"]
    # Chunked (no Content-Length; the server says the input ends): at most limit + 1 bytes are
    # read, then refused.
    builder = EnvironBuilder(
        path="/api/v1/policies", method="POST", headers=bearer("admin"), data=over * 1000
    )
    environ = builder.get_environ()
    del environ["CONTENT_LENGTH"]
    environ["wsgi.input_terminated"] = True
    stream = environ["wsgi.input"]
    app_iter, status, _ = run_wsgi_app(small_limit_app, environ)  # as is: no Content-Length
    assert status.startswith("413")
    assert b"200 bytes" in b"".join(app_iter)
    assert stream.tell() <= 201


@pytest.mark.parametrize(("method", "path"), WRITES)
def test_deeply_nested_json_is_400(client: FlaskClient, method: str, path: str) -> None:
    resp = client.open(path, method=method, data=DEEP, content_type="application/json")
    assert resp.status_code == 400
    assert resp.get_json() == {"error": "BadRequest", "message": "the body is not valid JSON"}


@pytest.mark.parametrize("text", ["{", "\xff", '{"name": NaN}', '{"name": -Infinity}', "[1, 2"])
def test_any_unparsable_body_is_400(client: FlaskClient, text: str) -> None:
    resp = client.post("/api/v1/policies", data=text.encode("latin-1"))
    assert resp.status_code == 400
    assert resp.get_json()["message"] == "the body is not valid JSON"


def test_the_webhook_answers_deeply_nested_json_with_400(anon: FlaskClient) -> None:
    """/mutate keeps its own 3 MiB limit; nesting is a client error there too."""
    resp = anon.post("/mutate", data=DEEP, content_type="application/json")
    assert resp.status_code == 400
