"""Dashboard tests call the app as real users (tests.support.users: token file, SQLite and
PostgreSQL, live server); browser tests share one headless Chromium per module."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.support.users import (  # noqa: F401  (fixtures)
    anon,
    app_config,
    as_user,
    client,
    live_url,
    token_file,
)

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} missing: .ci/run installs Debian's chromium")
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()
