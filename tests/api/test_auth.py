"""Authentication and authorisation: 401 without a valid token, 403 without the verb, open
endpoints stay open, and no token ever reaches a log line or an answer."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from flask_migrate import upgrade

from app import create_app
from app.web.auth import TokenFileError, parse_token_file
from tests.support.fake_kube import USERS, FakeApiServer, fake_apiserver
from tests.support.tokens import TOKENS

POLICY = {"name": "web", "namespace": "shop"}


def api_rules(app: Flask) -> list[tuple[str, str]]:
    out = []
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api/v1/") and rule.endpoint != "openapi.openapi":
            path = rule.rule.replace("<", "").replace(">", "")
            out += [(m, path) for m in sorted(rule.methods - {"HEAD", "OPTIONS"})]
    return out


def test_every_api_route_refuses_a_request_without_token(app: Flask, anon: FlaskClient) -> None:
    rules = api_rules(app)
    assert len(rules) >= 14
    for method, path in rules:
        resp = anon.open(path, method=method, json={})
        assert resp.status_code == 401, (method, path)
        assert resp.get_json()["error"] == "Unauthorized"
        assert resp.headers["WWW-Authenticate"].startswith("Bearer")


def test_every_view_declares_its_permission(app: Flask) -> None:
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api/v1/") and rule.endpoint != "openapi.openapi":
            assert hasattr(app.view_functions[rule.endpoint], "permission"), rule.rule


def test_bad_token_is_401(anon: FlaskClient) -> None:
    resp = anon.get("/api/v1/policies", headers={"Authorization": "Bearer nope"})
    assert resp.status_code == 401
    assert resp.get_json()["message"] == "the bearer token is not valid"
    assert anon.get("/api/v1/policies", headers={"Authorization": "Basic eDp5"}).status_code == 401


def test_verbs_from_the_token_file(as_user: Callable[[str], FlaskClient]) -> None:
    reader, editor, admin = as_user("reader"), as_user("editor"), as_user("admin")
    assert reader.get("/api/v1/policies").status_code == 200
    resp = reader.post("/api/v1/policies", json=POLICY)
    assert resp.status_code == 403
    assert resp.get_json() == {
        "error": "Forbidden",
        "message": "bob may not create policies in namespace shop",
    }
    assert editor.post("/api/v1/policies", json=POLICY).status_code == 403
    assert admin.post("/api/v1/policies", json=POLICY).status_code == 201
    assert editor.patch("/api/v1/policies/shop/web", json={"minReplicas": 2}).status_code == 200
    assert editor.delete("/api/v1/policies/shop/web").status_code == 403
    assert admin.delete("/api/v1/policies/shop/web").status_code == 204


def test_open_endpoints_need_no_token(anon: FlaskClient) -> None:
    for path in ("/healthz", "/readyz", "/metrics", "/api/v1/openapi.json"):
        assert anon.get(path).status_code == 200, path


@pytest.mark.parametrize("app_config", [{"PUBLIC_READS": True}], indirect=False)
def test_public_reads_still_need_a_token_to_write(anon: FlaskClient) -> None:
    assert anon.get("/api/v1/policies").status_code == 200
    assert anon.get("/api/v1/events").status_code == 200
    assert anon.post("/api/v1/policies", json=POLICY).status_code == 401
    assert anon.delete("/api/v1/policies/shop/web").status_code == 401
    # a token sent anyway is still checked
    bad = anon.get("/api/v1/policies", headers={"Authorization": "Bearer wrong"})
    assert bad.status_code == 401


@pytest.mark.parametrize("app_config", [{}], indirect=False)
def test_no_token_file_means_no_valid_token(as_user: Callable[[str], FlaskClient]) -> None:
    assert as_user("admin").get("/api/v1/policies").status_code == 401


def test_token_file_is_reloaded_when_it_changes(
    token_file: Path, as_user: Callable[[str], FlaskClient]
) -> None:
    import os

    reader = as_user("reader")
    assert reader.get("/api/v1/policies").status_code == 200
    token_file.write_text(f"{TOKENS['admin']},alice,*\n")
    st = token_file.stat()
    os.utime(token_file, (st.st_atime, st.st_mtime + 5))
    assert reader.get("/api/v1/policies").status_code == 401
    token_file.write_text("this line is broken\n")
    os.utime(token_file, (st.st_atime, st.st_mtime + 10))
    assert as_user("admin").get("/api/v1/policies").status_code == 200  # keeps the last good file


def test_token_file_errors_name_the_line_not_the_token() -> None:
    with pytest.raises(TokenFileError) as e:
        parse_token_file("# ok\nsecret-value-1,alice,*\nsecret-value-2,bob,fly\n", "t.csv")
    assert "t.csv: line 3" in str(e.value)
    assert "secret-value" not in str(e.value)
    with pytest.raises(TokenFileError, match="line 1: expected"):
        parse_token_file("secret-value-3,alice\n")
    assert parse_token_file("t1, u , read|delete\n")["t1"].verbs == {"get", "list", "delete"}


def test_a_bad_token_file_stops_start_up(tmp_path: Path) -> None:
    bad = tmp_path / "tokens"
    bad.write_text("x,y\n")
    with pytest.raises(TokenFileError):
        create_app({"AUTH_TOKEN_FILE": str(bad), "SQLALCHEMY_DATABASE_URI": "sqlite://"})


@pytest.fixture
def kube(tmp_path: Path, database_url: str) -> Iterator[tuple[FakeApiServer, FlaskClient]]:
    with fake_apiserver(tmp_path) as (fake, kubeconfig):
        app = create_app(
            {
                "TESTING": True,
                "SQLALCHEMY_DATABASE_URI": database_url,
                "JOBS": False,
                "AUTH_MODE": "kubernetes",
                "KUBECONFIG": str(kubeconfig),
            }
        )
        with app.app_context():
            upgrade()
            yield fake, app.test_client()
            from app.store.extensions import db

            db.session.remove()
            db.engine.dispose()


def kube_bearer(user: str) -> dict[str, str]:
    token = next(t for t, u in USERS.items() if u["username"] == user)
    return {"Authorization": f"Bearer {token}"}


def test_kubernetes_mode_asks_token_and_access_reviews(
    kube: tuple[FakeApiServer, FlaskClient],
) -> None:
    fake, client = kube
    assert client.get("/api/v1/policies").status_code == 401
    assert client.get("/api/v1/policies", headers={"Authorization": "Bearer x"}).status_code == 401
    dev = kube_bearer("dev")
    assert client.get("/api/v1/policies", headers=dev).status_code == 200
    resp = client.post("/api/v1/policies", json=POLICY, headers=dev)
    assert resp.status_code == 403
    assert resp.get_json()["message"] == "dev may not create policies in namespace shop: fake RBAC"
    ok = client.post("/api/v1/policies", json={"name": "web", "namespace": "dev"}, headers=dev)
    assert ok.status_code == 201
    last = fake.access_reviews[-1]
    assert last["user"] == "dev"
    assert last["groups"] == ["developers"]
    assert last["resourceAttributes"] == {
        "group": "rightsizer.io",
        "resource": "policies",
        "verb": "create",
        "namespace": "dev",
    }
    assert client.delete("/api/v1/policies/dev/web", headers=dev).status_code == 204
    events = client.get("/api/v1/events", headers=kube_bearer("admin")).get_json()["items"]
    assert [e["actor"] for e in events] == ["dev", "dev"]
    # answers are cached briefly: one TokenReview per token, not one per request
    assert fake.token_reviews == 3


def test_kubernetes_unreachable_is_503(database_url: str, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        '{"apiVersion": "v1", "kind": "Config", "current-context": "x",'
        '"clusters": [{"name": "x", "cluster": {"server": "http://127.0.0.1:9"}}],'
        '"users": [{"name": "x", "user": {}}],'
        '"contexts": [{"name": "x", "context": {"cluster": "x", "user": "x"}}]}'
    )
    app = create_app(
        {
            "SQLALCHEMY_DATABASE_URI": database_url,
            "AUTH_MODE": "kubernetes",
            "KUBECONFIG": str(kubeconfig),
        }
    )
    resp = app.test_client().get("/api/v1/policies", headers={"Authorization": "Bearer abc"})
    assert resp.status_code == 503
    assert resp.get_json()["error"] == "ServiceUnavailable"


def test_tokens_never_reach_logs_or_answers(
    kube: tuple[FakeApiServer, FlaskClient],
    caplog: pytest.LogCaptureFixture,
    as_user: Callable[[str], FlaskClient],
    anon: FlaskClient,
    token_file: Path,
) -> None:
    caplog.set_level(logging.DEBUG)
    secrets = [*TOKENS.values(), *USERS, "never-valid-token-xyz"]
    _, kclient = kube
    answers = []
    for c in (kclient, anon, as_user("reader")):
        for token in secrets:
            h = {"Authorization": f"Bearer {token}"}
            answers.append(c.get("/api/v1/policies", headers=h).get_data(as_text=True))
            answers.append(
                c.post("/api/v1/policies", json=POLICY, headers=h).get_data(as_text=True)
            )
    token_file.write_text(f"{TOKENS['admin']},alice\n")  # a broken reload is logged
    import os

    st = token_file.stat()
    os.utime(token_file, (st.st_atime, st.st_mtime + 5))
    anon.get("/api/v1/policies", headers={"Authorization": f"Bearer {TOKENS['admin']}"})
    text = caplog.text + "".join(answers)
    assert "token file" in caplog.text
    for token in secrets:
        assert token not in text
