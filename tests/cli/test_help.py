"""Issue 49 item 7: `rightsizer --help` lists rightsizer's own commands and options only, not
Flask's (`-e`, `-A`, `--debug`, `routes`, `run`, `shell`), and the commands that need the app
(`db`) still find it. Real processes, as users run them."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

OWN = {
    "certs",
    "db",
    "demo",
    "events",
    "export",
    "fleet",
    "policy",
    "recommend",
    "recommendations",
    "replay",
    "scaler",
    "serve",
    "sim",
    "webhook",
}


def rightsizer(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def section(text: str, title: str) -> list[str]:
    """The first word of each line of a --help section ("Options:", "Commands:")."""
    body = text.split(f"\n{title}\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in body.splitlines() if re.match(r"  \S", line)]


def test_help_lists_only_rightsizer_s_own_commands_and_options() -> None:
    text = rightsizer("--help")
    assert set(section(text, "Commands:")) == OWN
    assert section(text, "Options:") == ["--version", "--help"]
    for flask_own in ("--env-file", "--app", "--debug", "routes", "shell", "Run a development"):
        assert flask_own not in text


def test_db_upgrade_still_finds_the_app(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    env = {**os.environ, "RIGHTSIZER_DATABASE_URL": f"sqlite:///{db}"}
    rightsizer("db", "upgrade", cwd=tmp_path, env=env)
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"policies", "recommendations", "alembic_version"} <= tables


def test_version_is_the_packages() -> None:
    """`rightsizer --version` prints setup.cfg's version, the one place it is set: the README's
    image build reads its tag from it."""
    from importlib.metadata import version

    assert rightsizer("--version").split() == ["rightsizer", version("rightsizer")]
