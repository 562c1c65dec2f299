"""API tests run as real users: a static token file with an admin, a reader and a policy editor.

`client` sends the admin's token; `anon` sends none; `as_user(name)` any other. The app fixture
is the shared one (SQLite and PostgreSQL), with the token file configured.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from flask_migrate import upgrade

from app import create_app

TOKENS = {
    "admin": "admin-token-0123456789abcdef",
    "reader": "reader-token-0123456789abcdef",
    "editor": "editor-token-0123456789abcdef",
}
TOKEN_FILE = f"""# token,user,permissions
{TOKENS["admin"]},alice,*
{TOKENS["reader"]},bob,read
{TOKENS["editor"]},carol,get|list|update|patch
"""


def bearer(user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[user]}"}


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "tokens.csv"
    path.write_text(TOKEN_FILE)
    return path


@pytest.fixture
def app_config(token_file: Path) -> dict[str, object]:
    """Overridden by tests that need other settings."""
    return {"AUTH_TOKEN_FILE": str(token_file)}


@pytest.fixture
def app(database_url: str, app_config: dict[str, object]) -> Iterator[Flask]:
    app = create_app(
        {"TESTING": True, "SQLALCHEMY_DATABASE_URI": database_url, "JOBS": False, **app_config}
    )
    with app.app_context():
        upgrade()
        yield app
        from app.extensions import db

        db.session.remove()
        db.engine.dispose()


@pytest.fixture
def as_user(app: Flask) -> Callable[[str], FlaskClient]:
    def make(user: str) -> FlaskClient:
        c = app.test_client()
        c.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {TOKENS[user]}"
        return c

    return make


@pytest.fixture
def client(as_user: Callable[[str], FlaskClient]) -> FlaskClient:
    return as_user("admin")


@pytest.fixture
def anon(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def live_url(app: Flask) -> Iterator[str]:
    from tests.live_server import serving

    with serving(app) as url:
        yield url
