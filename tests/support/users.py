"""Fixtures for tests that call the API as real users, from the token file in `tokens`.

A conftest opts in by importing them (`from tests.support.users import ...`): `app_config` then
configures the shared `app` fixture with the token file, `client` sends the admin's token, `anon`
sends none, `as_user(name)` any other's, and `live_url` serves the app over HTTP.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.support.live_server import serving
from tests.support.tokens import TOKEN_FILE, TOKENS


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
    with serving(app) as url:
        yield url
