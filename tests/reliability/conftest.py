"""Reliability tests call the API as real users (tests.support.users: a token file with an admin, a
reader and an editor) on the shared app over SQLite and PostgreSQL."""

from tests.support.users import (  # noqa: F401  (fixtures)
    anon,
    app_config,
    as_user,
    client,
    live_url,
    token_file,
)
