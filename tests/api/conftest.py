"""API tests run as real users: a static token file with an admin, a reader and a policy editor.

`client` sends the admin's token; `anon` sends none; `as_user(name)` any other. The app fixture
is the shared one (SQLite and PostgreSQL), with the token file configured.
"""

from tests.support.users import (  # noqa: F401  (fixtures)
    anon,
    app_config,
    as_user,
    client,
    live_url,
    token_file,
)
