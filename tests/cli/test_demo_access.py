"""What `rightsizer demo` sets up for its user: a port checked before anything starts, an admin
token in a 0600 token file the server reads, and a walk-through of commands that run as printed."""

from __future__ import annotations

import re
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from app.cli.demo_access import cli_command, next_steps, write_token_file
from app.documents.policy import parse_policy
from app.web.auth import VERBS, parse_token_file


def demo(cwd: Path, *args: str, config: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "RIGHTSIZER_CONFIG": str(config or cwd / "cli.yaml")}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "demo", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_taken_port_is_reported_before_anything_starts(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = demo(tmp_path, "--port", str(port))
    assert done.returncode == 1
    assert f"port {port} is taken (another rightsizer demo, or another server)" in done.stderr
    assert "`rightsizer demo --port PORT` or `make demo PORT=PORT` (0 picks any" in done.stderr
    assert "starting the simulated cluster" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no database, certs or kubeconfig


def test_a_broken_context_file_is_reported_before_anything_starts(tmp_path: Path) -> None:
    config = tmp_path / "cli.yaml"
    config.write_text("contexts: [{name: mine}]\n")
    done = demo(tmp_path, "--port", "0", config=config)
    assert done.returncode == 1
    assert "contexts[0].server: required" in done.stderr and "RIGHTSIZER_CONFIG" in done.stderr
    assert config.read_text() == "contexts: [{name: mine}]\n"  # kept as it was


def test_the_token_file_gives_the_demo_user_every_verb(tmp_path: Path) -> None:
    path, token = write_token_file(tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    users = parse_token_file(path.read_text())
    assert users[token].name == "demo-admin" and users[token].verbs == VERBS
    again, other = write_token_file(tmp_path)
    assert again == path and other != token and token not in path.read_text()


def test_the_walk_through_is_commands_that_run_as_printed(tmp_path: Path) -> None:
    text = next_steps(
        "https://localhost:8443",
        Path("/my demo/certs/ca.crt"),
        "/my demo/rightsizer-sim.kubeconfig",
        Path("/home/me/.config/rightsizer/config.yaml"),
        "rightsizer",
        Path("/my demo/rightsizer-demo.log"),
    )
    lines = text.splitlines()
    block = lines[lines.index("# 1. its recommendation") : lines.index("EOF") + 4]
    script = tmp_path / "steps.sh"
    script.write_text("\n".join(block) + "\n")
    syntax = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert syntax.returncode == 0, syntax.stderr  # paths with spaces are quoted
    policy = "\n".join(lines[lines.index("EOF") - 4 : lines.index("EOF")])
    parsed = parse_policy(yaml.safe_load(policy))
    assert (parsed.namespace, parsed.target_name, parsed.update_mode) == (
        "shop",
        "catalog",
        "Recreate",
    )
    assert "rightsizer policy set-mode shop/catalog Off" in lines
    assert "context 'demo' in /home/me/.config/rightsizer/config.yaml" in text
    assert "curl --cacert '/my demo/certs/ca.crt' https://localhost:8443/api/v1/" in text
    assert "Logs:       /my demo/rightsizer-demo.log (rightsizer's" in text
    assert lines[-1] == "Ctrl-C stops the demo."


def test_the_cli_command_is_what_this_user_can_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["/somewhere/app/cli/__main__.py", "demo"])
    assert cli_command() == f"{sys.executable} -m app.cli"
    monkeypatch.setattr(sys, "argv", [".venv/bin/rightsizer", "demo"])
    monkeypatch.setenv("PATH", "/usr/bin")
    assert cli_command() == ".venv/bin/rightsizer"
    beside = str(Path(sys.executable).parent)
    monkeypatch.setattr(sys, "argv", [f"{beside}/rightsizer", "demo"])
    monkeypatch.setenv("PATH", beside)
    assert cli_command() == "rightsizer"


def test_the_readme_quick_start_is_the_printed_walk_through() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    quick_start = readme.split("**Your first five minutes.**", 1)[1].split("\n## ", 1)[0]
    [block] = re.findall(r"```sh\n(.*?)```", quick_start, re.S)
    printed = next_steps(
        "https://localhost:8443",
        Path("certs/ca.crt"),
        "rightsizer-sim.kubeconfig",
        Path("config.yaml"),
        ".venv/bin/rightsizer",
        Path("rightsizer-demo.log"),
    ).splitlines()
    commands = [line.split("  #")[0].rstrip() for line in block.splitlines()]
    for line in printed[printed.index("# 1. its recommendation") : printed.index("EOF") + 1]:
        if not line.startswith("#"):
            assert line in commands, line
    assert printed[printed.index("# 4. back to recommendations only") + 1] in commands
