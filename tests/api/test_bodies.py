"""REST request bodies: the token is checked before the body is read, bodies are capped
(RIGHTSIZER_API_MAX_BODY_BYTES, 413 naming the limit), and anything that is not JSON, however
deeply nested, is a 400 (issue #15)."""

from __future__ import annotations

import io
import json
import logging

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.datastructures import Headers
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
        path="/api/v1/policies", method="POST", headers=Headers(bearer("admin")), data=over * 1000
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
    assert resp.get_json() == {
        "error": "BadRequest",
        "message": "the body is not valid JSON: nested more than 64 levels deep",
    }


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("{", "Expecting property name enclosed in double quotes at line 1 column 2"),
        ("\xff", "not UTF-8 (byte 0)"),
        ('{"name": NaN}', "NaN is not JSON"),
        ('{"name": -Infinity}', "-Infinity is not JSON"),
        ("[1, 2", "Expecting ',' delimiter at line 1 column 6"),
    ],
)
def test_any_unparsable_body_is_400_saying_why(client: FlaskClient, text: str, why: str) -> None:
    resp = client.post("/api/v1/policies", data=text.encode("latin-1"))
    assert resp.status_code == 400
    assert resp.get_json()["message"] == f"the body is not valid JSON: {why}"


def nested(levels: int, inner: str = "1") -> str:
    return '{"a": ' * levels + inner + "}" * levels


@pytest.fixture
def existing(client: FlaskClient) -> FlaskClient:
    """The policy and the scaler WRITES change exist, so every write reaches validation."""
    policy = {"name": "web", "namespace": "shop", "target": {"kind": "Deployment", "name": "web"}}
    assert client.post("/api/v1/policies", json=policy).status_code == 201
    scaler = {
        "name": "dns",
        "target": {"namespace": "kube-system", "kind": "Deployment", "name": "coredns"},
        "params": {"linear": {"nodesPerReplica": 16}},
    }
    assert client.post("/api/v1/scalers", json=scaler).status_code == 201
    return client


def refusals(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """What the app logged: the refusal's one line, and nothing with a traceback."""
    records = [r for r in caplog.records if r.name.startswith("app.")]
    assert not [r for r in records if r.exc_info], "a traceback was logged"
    return records


@pytest.mark.parametrize(("method", "path"), WRITES)
@pytest.mark.parametrize("levels", [65, 900, 1000])
def test_a_field_nested_too_deep_is_400_naming_it_in_one_log_line(
    existing: FlaskClient, caplog: pytest.LogCaptureFixture, method: str, path: str, levels: int
) -> None:
    """Below the parser's own limit (about 1,000 levels less the stack in use), a body parses
    and may break whatever walks it recursively later: it is refused as it is read."""
    body = '{"name": "web", "params": ' + nested(levels) + "}"
    caplog.set_level(logging.INFO)
    resp = existing.open(path, method=method, data=body, content_type="application/json")
    assert resp.status_code == 400
    message = resp.get_json()["message"]
    assert message.startswith("the body is not valid JSON: nested more than 64 levels deep")
    if levels < 900:  # deeper, Python's parser gives up before saying where
        assert message.endswith("at params.a.a.a...")
    assert len(refusals(caplog)) == 1


DEEP_PARAMS = [
    ({"linear": "[" * 1000 + "]" * 1000}, "params.linear"),
    ({"ladder": nested(1000)}, "params.ladder"),
    ({"linear": nested(70)}, "params.linear"),
    ('{"linear": ' + nested(1000) + "}", "params"),
    ("{not json", "params"),
    ({"linear": '{"min": '}, "params.linear"),
]


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
@pytest.mark.parametrize(("params", "field"), DEEP_PARAMS)
def test_scaler_params_text_that_does_not_parse_is_400_naming_the_field(
    existing: FlaskClient,
    caplog: pytest.LogCaptureFixture,
    method: str,
    params: object,
    field: str,
) -> None:
    """Issue 50 item 3: params given as JSON text (as a ConfigMap holds it) nested ~1,000 deep
    answered 500 with a traceback (RecursionError in the params parser)."""
    scaler = existing.get("/api/v1/scalers/dns").get_json()
    url = "/api/v1/scalers" if method == "POST" else "/api/v1/scalers/dns"
    body = {"name": "dns2" if method == "POST" else "dns", "target": scaler["target"]}
    if method == "PATCH" and isinstance(params, dict):
        params = {"linear": None, **params}  # a merge patch: the mode it replaces is removed
    caplog.set_level(logging.INFO)
    resp = existing.open(url, method=method, json={**body, "params": params})
    assert resp.status_code == 400
    doc = resp.get_json()
    assert doc["error"] == "BadRequest"
    assert doc["message"].startswith(f"{field}: invalid JSON (")
    assert [d["field"] for d in doc["details"]] == [field]
    assert len(refusals(caplog)) == 1
    after = existing.get("/api/v1/scalers/dns").get_json()
    assert after["params"] == scaler["params"]
    assert [s["name"] for s in existing.get("/api/v1/scalers").get_json()["items"]] == ["dns"]


def test_the_webhook_answers_deeply_nested_json_with_400(anon: FlaskClient) -> None:
    """/mutate keeps its own 3 MiB limit; nesting is a client error there too."""
    resp = anon.post("/mutate", data=DEEP, content_type="application/json")
    assert resp.status_code == 400
