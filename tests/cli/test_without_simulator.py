"""Issue 42 item 1: the simulated cluster (app.simulator) is an optional part of rightsizer, the
`simulator` extra, left out of the image. `rightsizer serve` never imports it, every command but
`sim` and `demo` works without it, and those two say which extra to install. Real processes, as
users run them: `rightsizer serve` up to the exec of gunicorn, then what gunicorn loads."""

from __future__ import annotations

import configparser
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from app.cli.simulated import EXTRA_MODULES

# Runs `rightsizer serve` as the console script does, stops it where it would exec gunicorn, then
# imports what gunicorn loads (its config, then wsgi:app in each worker, which starts the jobs) and
# prints every module of the simulator that is loaded.
SERVE = """
import json, os, sys
def exec_instead(path, argv):
    import importlib
    importlib.import_module("app.serving.gunicorn_conf")
    importlib.import_module(argv[-1].split(":")[0])  # wsgi:app
    loaded = sorted(m for m in sys.modules if m.split(".")[:2] == ["app", "simulator"])
    print(json.dumps({"argv": argv, "simulator": loaded}), flush=True)
    os._exit(0)  # the jobs' threads started: not waited for
os.execv = exec_instead
from app.cli import main
sys.argv = ["rightsizer", "serve"]
main()
"""

# The `rightsizer` console script, with the simulator installed (WITH) or not (WITHOUT, the image:
# its package cannot be imported at all).
WITH = """
import sys
from app.cli import main
sys.argv = ["rightsizer", *sys.argv[1:]]
main()
"""
WITHOUT = 'import sys; sys.modules["app.simulator"] = None\n' + WITH
# `pip install rightsizer`: the simulator's code is there, not its extra (kubernetes-validate).
WITHOUT_EXTRA = 'import sys; sys.modules["kubernetes_validate"] = None\n' + WITH


def run(
    code: str, *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
        env={**os.environ, "RIGHTSIZER_DATABASE_URL": f"sqlite:///{cwd / 'r.db'}", **(env or {})},
        check=False,
    )


KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
"""


def test_serve_starts_without_importing_the_simulator(tmp_path: Path) -> None:
    """The jobs on, as `serve` runs them, against a cluster that does not answer (port 9)."""
    (tmp_path / "kubeconfig").write_text(KUBECONFIG, encoding="utf-8")
    out = run(SERVE, cwd=tmp_path, env={"RIGHTSIZER_KUBECONFIG": str(tmp_path / "kubeconfig")})
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["argv"][-1] == "wsgi:app"  # it got as far as gunicorn, having migrated
    assert report["simulator"] == []


def test_every_command_but_sim_and_demo_works_without_the_simulator(tmp_path: Path) -> None:
    listed = run(WITHOUT, "--help", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "sim " in listed.stdout and "demo " in listed.stdout
    upgraded = run(WITHOUT, "db", "upgrade", cwd=tmp_path)
    assert upgraded.returncode == 0, upgraded.stderr
    assert (tmp_path / "r.db").exists()
    helped = run(WITHOUT, "serve", "--help", cwd=tmp_path)
    assert helped.returncode == 0, helped.stderr


def test_sim_and_demo_name_the_extra_when_the_simulator_is_missing(tmp_path: Path) -> None:
    for command in (["sim"], ["sim", "--help"], ["demo", "--exit-when-ready"]):
        out = run(WITHOUT, *command, cwd=tmp_path)
        assert out.returncode == 1, (command, out.stdout, out.stderr)
        assert "pip install 'rightsizer[simulator]'" in out.stderr, (command, out.stderr)
        assert "Traceback" not in out.stderr
    # demo stopped before anything: no token, context or certificates written
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_sim_and_demo_name_the_extra_when_only_its_dependencies_are_missing(
    tmp_path: Path,
) -> None:
    """The simulator imports and starts without kubernetes-validate (before, `sim` served on and
    failed only when it first read the schemas): the commands look for the extra's modules
    first."""
    for command in (["sim", "--port", "0"], ["demo", "--exit-when-ready"]):
        out = run(WITHOUT_EXTRA, *command, cwd=tmp_path)
        assert out.returncode == 1, (command, out.stdout, out.stderr)
        assert "no module named 'kubernetes_validate'" in out.stderr, (command, out.stderr)
        assert "pip install 'rightsizer[simulator]'" in out.stderr
        assert "Traceback" not in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_the_modules_looked_for_are_the_extra_s() -> None:
    cfg = configparser.ConfigParser()
    cfg.read(Path(__file__).parents[2] / "setup.cfg")
    extra = cfg["options.extras_require"]["simulator"].split("\n")
    names = [re.split(r"[<>=\[ ]", line.strip())[0] for line in extra]
    packages = [n.replace("-", "_") for n in names if n and not n.startswith("#")]
    assert packages == list(EXTRA_MODULES)


def test_sim_passes_its_arguments_to_the_simulator(tmp_path: Path) -> None:
    """With the extra, `rightsizer sim` is the simulator's own command: its options, help and
    usage errors."""
    helped = run(WITH, "sim", "--help", cwd=tmp_path)
    assert helped.returncode == 0, helped.stderr
    assert "Usage: rightsizer sim [OPTIONS]" in helped.stdout
    assert "--kubernetes-version" in helped.stdout
    bad = run(WITH, "sim", "--nodes", "3", cwd=tmp_path)
    assert bad.returncode == 2, bad.stderr
    assert "--nodes and --pods go together" in bad.stderr
