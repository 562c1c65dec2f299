"""The CLI's API commands against a real server over HTTP (the shared app, served on a port).

A test module opts in with `from tests.cli.live import app_config, live_url, run, token_file`."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from click.testing import CliRunner, Result

from app.cli import cli
from tests.support.tokens import TOKENS
from tests.support.users import app_config, live_url, token_file

# the fixtures a test module imports from here with `run`
__all__ = ["Invoke", "app_config", "live_url", "run", "token_file"]

Invoke = Callable[..., Result]


@pytest.fixture
def run(live_url: str) -> Invoke:
    """`run(*args)`: the command's Result (output and exit code), as the admin."""
    runner = CliRunner()

    def invoke(*args: str, token: str = TOKENS["admin"], stdin: str | None = None) -> Result:
        env = {"RIGHTSIZER_SERVER": live_url, "RIGHTSIZER_TOKEN": token}
        return runner.invoke(cli, list(args), env=env, input=stdin, catch_exceptions=False)

    return invoke
