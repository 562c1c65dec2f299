"""Reliability tests reuse the API tests' fixtures: a token file (admin, reader, editor) and the
shared app over SQLite and PostgreSQL."""

from tests.api.conftest import (  # noqa: F401  (fixtures)
    anon,
    app,
    app_config,
    as_user,
    client,
    live_url,
    token_file,
)
